"""Jobs real Batsim 4.2.1 accepts at the edge of the workload format, on the embedded engine and
gridsched's policies: negative ``subtime`` (``fixtures/batsim_negative_subtime``) and ``res`` 0
(``fixtures/batsim_res0``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedulers.batsim.protocol import ProtocolError
from schedulers.core.policy import Policy
from schedulers.engine import EngineError, simulate
from schedulers.registry import get_policy
from helpers_cli import run_main
from recorded import rows, schedule_rows
from scripted_scheduler import ScriptPort

NEG = Path(__file__).parent / "fixtures" / "batsim_negative_subtime"


def test_recorded_negative_subtimes_are_submitted_at_0_and_keep_their_subtime():
    # fixtures/batsim_negative_subtime/README.md: a, aa (-5) start at 0 on one host each; b (-2.5,
    # 2 hosts) when a's 10 s end; tiny (-1e-7) and c (0) at 15; late (4) at 25
    got = {r["job_id"]: (r["submission_time"], r["starting_time"], r["waiting_time"], r["turnaround_time"])
           for r in rows(NEG / "full_fcfs" / "out_jobs.csv")}
    assert got == {"a": ("-5.000000", "0.000000", "5.000000", "15.000000"),
                   "aa": ("-5.000000", "0.000000", "5.000000", "10.000000"),
                   "b": ("-2.500000", "10.000000", "12.500000", "17.500000"),
                   "tiny": ("-0.000000", "15.000000", "15.000000", "25.000000"),
                   "c": ("0.000000", "15.000000", "15.000000", "25.000000"),
                   "late": ("4.000000", "25.000000", "21.000000", "31.000000")}


@pytest.mark.parametrize("case, platform, policy, energy, files", [
    ("full_fcfs", "full.xml", "fcfs", False, ("jobs",)),
    ("cluster_easy_E", "cluster.xml", "easy", True, ("jobs", "consumed_energy")),
])
def test_engine_equals_real_batsim_on_negative_subtimes(tmp_path, case, platform, policy, energy, files):
    simulate(NEG / platform, [NEG / "workload.json"], get_policy(policy), energy=energy,
             export_prefix=tmp_path / "out_")
    for name in files:
        assert (tmp_path / f"out_{name}.csv").read_text() == (NEG / case / f"out_{name}.csv").read_text(), name
    if case == "full_fcfs":
        assert schedule_rows(tmp_path / "out_schedule.csv") == schedule_rows(NEG / case / "out_schedule.csv")


RES0 = Path(__file__).parent / "fixtures" / "batsim_res0"


def _script_run(name: str, out: Path) -> ScriptPort:
    port = ScriptPort(json.loads((RES0 / name).read_text()))
    simulate(RES0 / "platform.xml", [RES0 / "workload.json"], port, export_prefix=out / "out_")
    return port


def test_recorded_res0_and_total_profiles_on_other_host_counts():
    # fixtures/batsim_res0/README.md: 6e9 flops at 100 Mf/s spread over the hosts given, not res
    got = {r["job_id"]: (r["requested_number_of_resources"], r["final_state"], r["allocated_resources"],
                         r["execution_time"]) for r in rows(RES0 / "out_jobs.csv")}
    assert got == {"z": ("0", "REJECTED", "", ""),
                   "t": ("0", "COMPLETED_SUCCESSFULLY", "0", f"{6e9 / 1e8:f}"),          # 1 host: 60 s
                   "u": ("2", "COMPLETED_SUCCESSFULLY", "1", f"{6e9 / 1e8:f}"),          # 1 host, res 2
                   "w": ("0", "COMPLETED_SUCCESSFULLY", "0-1", f"{6e9 / 2 / 1e8:f}"),    # 2 hosts: 30 s
                   "v": ("1", "COMPLETED_SUCCESSFULLY", "2", f"{2 * 6e9 / 1e8:f}")}      # composed: 2 x 60 s


def test_engine_plays_res0_jobs_as_batsim(tmp_path):
    port = _script_run("script.json", tmp_path)
    want = [json.loads(line) for line in (RES0 / "messages.jsonl").read_text().splitlines()]
    assert port.messages[1:] == want
    assert (tmp_path / "out_jobs.csv").read_text() == (RES0 / "out_jobs.csv").read_text()


def test_engine_refuses_where_batsim_aborts_on_res0(tmp_path):
    # README: an EXECUTE_JOB without hosts, and a delay job of res 0 on one host, abort Batsim
    with pytest.raises(ProtocolError, match=r"data\.alloc must name at least one resource, got ''"):
        _script_run("empty.json", tmp_path)
    with pytest.raises(EngineError) as err:
        _script_run("delay1.json", tmp_path)
    assert "\n" not in str(err.value)
    assert "EXECUTE_JOB w0!z" in str(err.value) and "The job requires 0 machines but only 1 were given" in str(err.value)


_USERS = {"user": "u1", "cpu_load": 0.5}
_OWNED = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="AS0" routing="Full"><host id="master_host" speed="100Mf"/>
<host id="h0" speed="100Mf"><prop id="owner" value="u1"/><prop id="wattage_per_state" value="100:200"/></host>
<host id="h1" speed="100Mf"><prop id="owner" value="u1"/><prop id="wattage_per_state" value="100:200"/></host>
</zone></platform>
"""


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "heft", "buc", "buc-easy", "green-easy",
                                    "green-heft", "osep", "hosep", "ehosep", "own-share"])
def test_every_policy_rejects_a_job_of_no_host_and_runs_the_others(tmp_path, policy):
    # a 10-s delay job on 1 host at 0, one of res 0 at 1, a 2-host one at 3: the res-0 job is
    # rejected at its submission (Policy.takes_jobs_of_no_host), the others run one after the other
    (tmp_path / "p.xml").write_text(_OWNED)
    jobs = [{"id": "a", "subtime": 0, "walltime": 20, "res": 1, "profile": "d", **_USERS},
            {"id": "z", "subtime": 1, "walltime": 20, "res": 0, "profile": "d", **_USERS},
            {"id": "b", "subtime": 3, "walltime": 20, "res": 2, "profile": "d", **_USERS}]
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 2, "jobs": jobs,
                                                 "profiles": {"d": {"type": "delay", "delay": 10}}}))
    args = ["run", "--policy", policy, "-p", str(tmp_path / "p.xml"), "-w", str(tmp_path / "w.json"),
            "-o", str(tmp_path / "out"), "--no-progress", "-E", "--compute-sharing"]
    code, _, err = run_main(args)
    assert code == 0, err
    got = {r["job_id"]: (r["final_state"], r["starting_time"]) for r in rows(tmp_path / "out" / "out_jobs.csv")}
    assert got == {"a": ("COMPLETED_SUCCESSFULLY", "0.000000"), "z": ("REJECTED", ""),
                   "b": ("COMPLETED_SUCCESSFULLY", "10.000000")}


class _TotalOnOneHost(Policy):
    """Takes jobs of no host, and starts each job at once on host 0."""

    takes_jobs_of_no_host = True

    def on_job_submitted(self, job):
        self.execute(job, [0])


def test_a_policy_that_takes_jobs_of_no_host_runs_a_total_profile_on_the_hosts_it_gives(tmp_path):
    # fixtures/batsim_res0: job t (res 0, 6e9 flops in total) on one 100-Mf/s host: 60 s
    w = json.loads((RES0 / "workload.json").read_text())
    w["jobs"] = [j for j in w["jobs"] if j["id"] == "t"]
    simulate(RES0 / "platform.xml", [w], _TotalOnOneHost(), export_prefix=tmp_path / "out_")
    (row,) = rows(tmp_path / "out_jobs.csv")
    assert (row["job_id"], row["requested_number_of_resources"], row["allocated_resources"], row["execution_time"]) \
        == ("t", "0", "0", "60.000000")


class _ResZeroOnNoHost(Policy):
    """Takes jobs of no host, and starts each on no host at all."""

    takes_jobs_of_no_host = True

    def on_job_submitted(self, job):
        self.execute(job, [])   # the line the error names


def test_a_job_of_no_host_started_on_no_host_is_the_policy_error(tmp_path):
    # EXECUTE_JOB needs at least one host (the protocol sends no empty allocation); the engine
    # had none to run the job on and failed with an internal error
    w = json.loads((RES0 / "workload.json").read_text())
    w["jobs"] = [j for j in w["jobs"] if j["id"] == "t"]
    with pytest.raises(Exception) as err:
        simulate(RES0 / "platform.xml", [w], _ResZeroOnNoHost(), export_prefix=tmp_path / "out_")
    text = str(err.value)
    assert "job w0!t of res 0 cannot start on no host" in text
    line = _ResZeroOnNoHost.on_job_submitted.__code__.co_firstlineno + 1
    assert f"line {line}" in text and "test_batsim_edge_jobs.py" in text


POWER = Path(__file__).parent / "fixtures" / "batsim_power_numbers"


def test_recorded_powers_in_hexadecimal_and_exponent_forms():
    # fixtures/batsim_power_numbers/README.md: 0x1p8 = 256 W, 0X96 = 150 W, 0x1.9p6Mf = 100 Mf/s
    energy = {r["job_id"]: r["consumed_energy"] for r in rows(POWER / "out_jobs.csv")}
    assert energy == {"a": f"{256 * 10:f}", "b": f"{(256 + 200) * 10:f}", "c": f"{(256 + 200) * 10:f}"}
    assert rows(POWER / "out_consumed_energy.csv")[0]["wattmin"] == f"{100 + 150:f}"


def test_engine_reads_powers_as_simgrid_and_equals_real_batsim(tmp_path):
    simulate(POWER / "platform.xml", [POWER / "workload.json"], get_policy("fcfs", {"idle_timeout": 2}), energy=True,
             export_prefix=tmp_path / "out_")
    for name in ("jobs", "consumed_energy", "pstate_changes"):
        assert (tmp_path / f"out_{name}.csv").read_text() == (POWER / f"out_{name}.csv").read_text(), name


def test_policies_read_hexadecimal_powers_as_simgrid():
    from schedulers.core.power import parse_watt_ranges, PowerRangeError
    assert [(r.idle, r.epsilon, r.all_cores) for r in parse_watt_ranges(" 100:0X96:200, 0x1p4:1e2")] \
        == [(100.0, 150.0, 200.0), (16.0, 16.0, 100.0)]
    with pytest.raises(ValueError, match=r"^non-numeric wattage_per_state entry '100:1_000'$"):
        parse_watt_ranges("100:1_000")   # Python's float reads 1_000; strtod does not
    with pytest.raises(PowerRangeError, match="entry 0 is '100:inf'"):
        parse_watt_ranges("100:inf")


def test_a_power_batsim_runs_with_but_the_engine_bounds_is_refused_in_one_line(tmp_path):
    text = (POWER / "platform.xml").read_text().replace("1e2:0x1p8", "1e2:inf")
    (tmp_path / "p.xml").write_text(text)
    code, _, err = run_main(["run", "--policy", "fcfs", "-E", "-p", str(tmp_path / "p.xml"), "-w",
                             str(POWER / "workload.json"), "-o", str(tmp_path / "out"), "--no-progress"])
    assert code == 2 and err.count("\n") == 1
    assert "host 'h0': wattage_per_state entry 0 is '1e2:inf'" in err and "real Batsim 4.2.1 runs with it" in err


BLANKS = Path(__file__).parent / "fixtures" / "batsim_attribute_blanks"


def test_attribute_values_keep_their_tabs_and_line_ends_as_in_simgrid():
    # fixtures/batsim_attribute_blanks/README.md: Batsim sent the properties with their tabs and
    # newlines (CR-LF and CR read as newlines); the engine's SIMULATION_BEGINS carries the same
    want = json.loads((BLANKS / "compute_resources.json").read_text())
    assert want[0]["properties"]["owner"] == "a\tb" and want[0]["properties"]["note"] == "x\ny\nz  w\nv"
    port = ScriptPort(json.loads((BLANKS / "script.json").read_text()))
    simulate(BLANKS / "platform.xml", [BLANKS / "workload.json"], port, energy=True)
    assert port.messages[0]["events"][0]["data"]["compute_resources"] == want


def test_a_tab_in_vivaldi_coordinates_is_refused_as_batsim_aborts(tmp_path):
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", str(BLANKS / "vivaldi_tab.xml"), "-w",
                             str(BLANKS / "workload.json"), "-o", str(tmp_path / "out"), "--no-progress"])
    assert code == 2 and err.count("\n") == 1
    assert "host 'h0': coordinates='0\\t0 0'" in err and "Coordinates of h0 must have 3 dimensions" in err


def test_the_platform_file_given_to_the_server_matches_what_batsim_announces():
    # gridsched serve --platform (and run --engine batsim) compare the file with SIMULATION_BEGINS
    from schedulers.batsim.platform_file import PlatformFile
    from schedulers.core.model import Host
    want = json.loads((BLANKS / "compute_resources.json").read_text())
    hosts = [Host(id=h["id"], name=h["name"], properties=h["properties"]) for h in want]
    assert PlatformFile(BLANKS / "platform.xml").differences(hosts) == []


def test_only_attribute_values_get_their_blanks_written_as_references():
    from schedulers.engine.platform import keep_attribute_blanks
    doc = (b'<a x="1\t2\n3\r\n4\r5" y=\'p>q\tr\'>\n\t<!-- c="\t" --><![CDATA[ z="\t" ]]>'
           b'<b z="\t"/>text\t\n</a>')
    assert keep_attribute_blanks(doc) == (b'<a x="1&#9;2&#10;3&#10;4&#10;5" y=\'p>q&#9;r\'>\n\t<!-- c="\t" -->'
                                          b'<![CDATA[ z="\t" ]]><b z="&#9;"/>text\t\n</a>')


def test_a_parallel_profile_without_hosts_is_refused_as_batsim_aborts():
    from schedulers.engine.workload import load_workload
    from schedulers.inputs.errors import WorkloadError
    with pytest.raises(WorkloadError) as err:
        load_workload(RES0 / "parallel_empty.json", "w0", 3)
    assert str(err.value) == (f"{RES0 / 'parallel_empty.json'}: profile 'par': 'cpu' is empty; Batsim 4.2.1 "
                              "aborts (\"invalid-sized array 'cpu' (size=0): must be strictly positive\")")
