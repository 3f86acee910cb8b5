"""``gridsched engine`` takes Batsim 4.2.1's command line (``parse_main_args``, src/batsim.cpp):
roles (``-r``), ``--mmax``/``--mmax-workload``, the configuration forwarded in SIMULATION_BEGINS,
the output switches, ``--dump-execution-context``; what it does not simulate is refused in one
line. Expected values recorded on real Batsim 4.2.1 (``fixtures/batsim_cli``, README)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import threading
from pathlib import Path

import pytest

from schedulers.batsim.protocol import encode_message
from schedulers.batsim.server import serve
from schedulers.cli import _batsim_options, build_parser, main
from schedulers.engine import build_engine
from schedulers.registry import get_policy
from test_engine_zmq import free_port

FIX = Path(__file__).parent / "fixtures" / "batsim_cli"
RECORDED = ["-v", "network-only", "--mmax", "2", "-r", "h2:storage", "--sched-cfg", "hello",
            "--disable-machine-state-tracing", "--redis-port", "99", "--disable-storage-sharing"]


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _engine(*more: str):
    args = build_parser("engine").parse_args(["engine", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"), *more])
    opts = _batsim_options(args)
    engine = build_engine(args.platform, args.workload, roles=opts["roles"], mmax=opts["mmax"],
                          mmax_workload=args.mmax_workload, sg_config=args.sg_cfg)
    engine.batsim_config, engine.storage_sharing = opts["config"], not args.disable_storage_sharing
    return engine


def test_simulation_begins_as_real_batsim() -> None:
    mine = json.loads(encode_message(0.0, [_engine(*RECORDED)._simulation_begins()]))["events"][0]["data"]
    theirs = json.loads((FIX / "simulation_begins.json").read_text())["events"][0]["data"]
    mine["workloads"] = {"w0": "w.json"}
    assert [h["name"] for h in theirs["compute_resources"]] == ["h0", "h1"]               # --mmax 2
    assert [(h["id"], h["name"], h["properties"]["role"]) for h in theirs["storage_resources"]] == [
        (2, "aaa_store", "storage"), (3, "h2", "storage")]                                  # -r h2:storage
    assert theirs["config"]["sched-config"] == "hello" and theirs["config"]["redis-port"] == 99
    assert theirs["allow_storage_sharing"] is False and theirs["nb_resources"] == 4
    assert mine == theirs


def test_files_as_real_batsim(tmp_path: Path) -> None:
    port = free_port()
    th = threading.Thread(target=serve, args=(get_policy("fcfs"), f"tcp://127.0.0.1:{port}"),
                          kwargs={"connect_timeout": 20, "idle_timeout": 20}, daemon=True)
    th.start()
    code, _, err = _main("engine", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"), *RECORDED,
                         "-s", f"tcp://127.0.0.1:{port}", "-e", str(tmp_path / "out"), "--timeout", "20")
    th.join(20)
    assert code == 0, err
    # --disable-machine-state-tracing: no machine states; the Pajé trace has the storage machines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out_jobs.csv", "out_schedule.csv", "out_schedule.trace"]
    assert (tmp_path / "out_jobs.csv").read_text() == (FIX / "mmax_storage_jobs.csv").read_text()
    color = re.compile(r' "[0-9. ]+"$', re.M)
    trace = (tmp_path / "out_schedule.trace").read_text()
    assert '2 0.000000 machine_ct m3 "h2" root' in trace
    assert color.sub("", trace) == color.sub("", (FIX / "mmax_storage_schedule.trace").read_text())
    row = dict(zip(*(line.split(",") for line in (tmp_path / "out_schedule.csv").read_text().splitlines())))
    assert row["nb_computing_machines"] == "4"       # Batsim counts the storage machines too


def test_mmax_workload_takes_the_largest_nb_res(tmp_path: Path) -> None:
    w = json.loads((FIX / "w.json").read_text())
    w["nb_res"] = 2
    (tmp_path / "w2.json").write_text(json.dumps(w))
    engine = build_engine(FIX / "p.xml", [FIX / "w.json", tmp_path / "w2.json"], mmax_workload=True)
    assert [h.spec.name for h in engine.hosts] == ["h0", "h1", "h2"]          # max(3, 2)
    engine = build_engine(FIX / "p.xml", [tmp_path / "w2.json"], mmax_workload=True)
    assert [h.spec.name for h in engine.hosts] == ["h0", "h1"]
    engine = build_engine(FIX / "p.xml", [FIX / "w.json"], mmax_workload=True, mmax=1)
    assert [h.spec.name for h in engine.hosts] == ["h0"]                      # min(--mmax, nb_res)


def test_export_folder_must_exist_as_for_real_batsim(tmp_path) -> None:
    # real Batsim 4.2.1 with -e missing/out aborts (status 134) when it opens its first output
    # file, after reading the inputs and before any message; the engine refuses in one line
    code, _, err = _main("engine", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"),
                         "-e", str(tmp_path / "missing" / "out"), "-s", "tcp://127.0.0.1:1")
    assert code == 2
    assert err.strip().splitlines() == [f"gridsched: error: -e {tmp_path / 'missing' / 'out'}: the folder "
                                        f"{tmp_path / 'missing'} does not exist; real Batsim 4.2.1 aborts "
                                        "without creating it: create it first"]
    assert not (tmp_path / "missing").exists()


def test_gzip_workload_refused_as_real_batsim(tmp_path: Path) -> None:
    # real Batsim 4.2.1 reads plain JSON only: `batsim -p p.xml -w w.json.gz -e out` aborts (status
    # 134) with "Invalid JSON file '.../w.json.gz': could not be parsed" (recorded); gridsched run
    # reads such a file, the engine playing Batsim refuses it in one line
    import gzip

    wl = tmp_path / "w.json.gz"
    wl.write_bytes(gzip.compress((FIX / "w.json").read_bytes()))
    code, _, err = _main("engine", "-p", str(FIX / "p.xml"), "-w", str(wl), "-e", str(tmp_path / "out"),
                         "-s", "tcp://127.0.0.1:1")
    assert code == 2
    assert err.strip().splitlines() == [f"gridsched: error: -w {wl}: the file is gzip-compressed; real Batsim 4.2.1 "
                                        f"reads plain JSON only and aborts (\"Invalid JSON file '{wl}': could not be "
                                        "parsed\"): decompress it first (gunzip), or run it with gridsched run, which "
                                        "reads it"]


def test_dump_execution_context_as_real_batsim() -> None:
    code, out, _ = _main("engine", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"), "--dump-execution-context",
                         "-e", "foo", "--redis-port", "12", "-s", "tcp://x:1")
    assert code == 0
    assert out == ('{"socket_endpoint":"tcp://x:1","redis_enabled":false,"redis_hostname":"127.0.0.1",'
                   '"redis_port":12,"redis_prefix":"default","export_prefix":"foo","external_scheduler":true}\n')


@pytest.mark.parametrize("args, words", [
    (["-r", "h0:foo"], ["host 'h0' has role 'foo'", "Cannot create any role from string description 'foo'"]),
    (["-r", "h0:master"], ["'h0' and 'master_host' are both the master host", "There are two master hosts..."]),
    (["-m", "nobody"], ["no master host", 'Cannot find the "master" role in the platform file']),
    (["--mmax", "9"], ["Impossible to compute on M=9 machines: only 3 machines are described in the PLATFORM_FILE."]),
    (["--mmax", "abc"], ["Cannot read <M_max> 'abc' as an integer."]),
    (["-v", "loud"], ["Invalid <verbosity_level> 'loud'."]),
    (["-r", "h0"], ["The roles host mapping should only contain one ':' character"]),
    (["--sg-cfg", "foo/bar:1"], ["--sg-cfg option 'foo/bar': SimGrid 3.32 has no such option", "Bad config key"]),
    (["--sg-cfg", "network/TCP-gamma:5"], ["reproduces this option only at SimGrid's default"]),
    (["--enable-profile-reuse"], ["Profile reuse is enabled but dynamic registration is not"]),
    (["-W", "wf.xml"], ["-W/--workflow: workflows: not simulated"]),
    (["--enable-redis"], ["--enable-redis: Redis: not simulated"]),
    (["--no-sched"], ["--no-sched: Batsim without scheduler"]),
])
def test_refused_in_one_line_with_batsims_words(args: list[str], words: list[str]) -> None:
    code, _, err = _main("engine", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"), *args, "--timeout", "1")
    assert code == 2 and err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)


def test_sg_cfg_sets_what_the_platform_then_cannot_change(tmp_path: Path) -> None:
    text = (FIX / "p.xml").read_text().replace(
        '<platform version="4.1">',
        '<platform version="4.1">\n  <config><prop id="network/TCP-gamma" value="5"/></config>')
    (tmp_path / "p.xml").write_text(text)
    with pytest.raises(Exception, match="TCP-gamma"):
        build_engine(tmp_path / "p.xml", [FIX / "w.json"])
    # set first on the command line (at its default): SimGrid skips the platform's value unread
    build_engine(tmp_path / "p.xml", [FIX / "w.json"], sg_config=["network/TCP-gamma:4194304"])


def test_storage_hosts_with_energy(tmp_path: Path) -> None:
    # real Batsim 4.2.1 adds a storage host's power to every energy row (recorded by hand: hosts of
    # 100 W idle + a 30 W storage host, wattmin 230 instead of 200) and lists it in
    # out_pstate_changes.csv (machines 0-1 compute, 2 the storage host); the engine does the same
    watts = "<prop id='wattage_per_state' value='{}'/><prop id='wattage_off' value='5'/>"
    text = ("<?xml version='1.0'?><!DOCTYPE platform SYSTEM 'https://simgrid.org/simgrid.dtd'>"
            "<platform version='4.1'><zone id='z' routing='Full'>"
            f"<host id='h0' speed='100Mf'>{watts.format('100:200')}</host>"
            f"<host id='h1' speed='100Mf'>{watts.format('100:200')}</host>"
            "<host id='store' speed='100Mf'><prop id='role' value='storage'/>{store}</host>"
            f"<host id='master_host' speed='100Mf'>{watts.format('100:200')}</host></zone></platform>")
    (tmp_path / "p.xml").write_text(text.format(store=watts.format("30:60")))
    code, _, err = _main("run", "--policy", "fcfs", "-p", str(tmp_path / "p.xml"), "-w", str(FIX / "w.json"),
                         "-E", "-o", str(tmp_path / "out"), "--no-progress", "--fit", "keep")
    assert code == 0, err
    energy = (tmp_path / "out" / "out_consumed_energy.csv").read_text().splitlines()[1:]
    assert energy and all(line.split(",")[3] == "230.000000" for line in energy)
    assert (tmp_path / "out" / "out_pstate_changes.csv").read_text().splitlines()[1:] == ["0,0-2,0"]
    # a storage host without power: Batsim aborts at its first energy read; one line here
    (tmp_path / "q.xml").write_text(text.format(store=""))
    code, _, err = _main("run", "--policy", "fcfs", "-p", str(tmp_path / "q.xml"), "-w", str(FIX / "w.json"),
                         "-E", "-o", str(tmp_path / "out2"), "--no-progress", "--fit", "keep")
    assert code == 2 and err.count("\n") == 1 and "'wattage_per_state' on the storage hosts too; missing on store" in err
