"""Bad inputs to ``gridsched run``: one clear line, exit status 2, never a traceback, never a
silently wrong result (issue 13, "Robustness and scale").

The table below is the list of cases: each builds its inputs in a fresh folder, runs
``schedulers.cli.main`` and checks the exit status, that stderr is one line starting with
``gridsched: error:`` that names the file (or the option) and the item, and that the output
folder was not created (every input is checked before it is touched). After the table, the
behaviours that are not errors (CSV quoting, ``--overwrite``, Ctrl-C, the deadlock message) and
a property-based test: random malformed workloads and platforms give either that one line or
valid outputs.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedulers.cli import main
from schedulers.engine import EngineError, simulate
from schedulers.fcfs import FCFS

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures"
HETERO = FIX / "hetero4.xml"  # a1 100Mf, a2 200Mf, b1 100Mf, b2 50Mf; 4 cores; energy properties
DELAY = {"d": {"type": "delay", "delay": 3}}


def run_main(argv: list[str]) -> tuple[int, str, str]:
    """``main(argv)`` with stdout and stderr captured (works inside hypothesis examples too)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


class Case:
    """Inputs of one case, written under ``tmp``; ``out`` is the (absent) output folder."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.out = tmp / "out"

    def file(self, name: str, content: str | bytes) -> str:
        p = self.tmp / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return str(p)

    def workload(self, jobs: list, profiles: dict | None = None, name: str = "w.json") -> str:
        return self.file(name, json.dumps({"nb_res": 64, "jobs": jobs, "profiles": DELAY if profiles is None else profiles}))

    def job(self, **fields: Any) -> str:
        """A one-job workload: a 3 s delay job with ``fields`` overriding its fields."""
        j = {"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}
        j.update(fields)
        return self.workload([j])

    def platform(self, old: str, new: str, name: str = "p.xml") -> str:
        text = HETERO.read_text()
        assert old in text
        return self.file(name, text.replace(old, new, 1))

    def run(self, *args: str, workload: str | None = None, platform: str | None = None) -> list[str]:
        return ["run", "--policy", "fcfs", "-p", platform or str(HETERO), "-w", workload or self.job(),
                "-o", str(self.out), "--no-progress", *args]


def deep_json(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def _swf_line(job: int, submit: int, run: int, procs: int, status: int = 1) -> str:
    return f"{job} {submit} 0 {run} {procs} -1 -1 {procs} 100 -1 {status} 1 1 -1 -1 -1 -1 -1\n"


def _truncated_gz(c: Case) -> str:
    data = gzip.compress(("; Version: 2.2\n" + "".join(_swf_line(i, i, 10, 4) for i in range(1, 200))).encode())
    return c.file("trunc.swf.gz", data[: len(data) // 2])


def _config(c: Case, key: str, value: str) -> str:
    """The test platform with ``<config><prop id=key value=value/></config>`` first."""
    return c.platform('<platform version="4.1">',
                      f'<platform version="4.1"><config id="General"><prop id="{key}" value="{value}"/></config>')


def _cluster(c: Case, attrs: str) -> str:
    """A platform whose root zone holds the master host's zone and a cluster with ``attrs`` (and
    the attributes simgrid.dtd requires: a cluster beside hosts, or without them, is refused)."""
    return c.file("p.xml", "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                  '<platform version="4.1"><zone id="z" routing="Full"><zone id="m" routing="Full">'
                  '<host id="master_host" speed="1Gf"/></zone>'
                  f'<cluster {attrs} prefix="c" suffix="" speed="1Gf" bw="1GBps" lat="0"/></zone></platform>')


def _folder(c: Case, name: str) -> str:
    (c.tmp / name).mkdir()
    return str(c.tmp / name)


#: (case id, argv builder, substrings of the one stderr line). The first substring is the file
#: or the option, the others the item and what is wrong.
CASES: list[tuple[str, Callable[[Case], list[str]], tuple[str, ...]]] = [
    # --- job ids (Batsim 4.2.1 src/jobs.cpp): silently split CSV rows or wrote None before
    ("id-with-comma", lambda c: c.run(workload=c.job(id="a,b")), ("w.json", "job #0", "'a,b'", "','")),
    ("id-with-quote", lambda c: c.run(workload=c.job(id='a"b')), ("w.json", "job #0", "'\"'")),
    ("id-with-newline", lambda c: c.run(workload=c.job(id="a\nb")), ("w.json", "job #0", "'\\n'")),
    ("id-with-dollar", lambda c: c.run(workload=c.job(id="a$1")), ("w.json", "job #0", "'$'")),
    ("id-with-paren", lambda c: c.run(workload=c.job(id="f(x)")), ("w.json", "job #0", "'('")),
    ("id-null", lambda c: c.run(workload=c.job(id=None)), ("w.json", "job #0", "null")),
    ("id-object", lambda c: c.run(workload=c.job(id={"a": 1})), ("w.json", "job #0", "dict")),
    ("id-list", lambda c: c.run(workload=c.job(id=[1])), ("w.json", "job #0", "list")),
    ("id-float", lambda c: c.run(workload=c.job(id=1.5)), ("w.json", "job #0", "float")),
    ("id-bool", lambda c: c.run(workload=c.job(id=True)), ("w.json", "job #0", "bool")),
    ("id-beyond-int32", lambda c: c.run(workload=c.job(id=2 ** 40)), ("w.json", "job #0", "32 bits")),
    ("id-empty", lambda c: c.run(workload=c.job(id="")), ("w.json", "job #0", "empty job id")),
    ("id-with-bang", lambda c: c.run(workload=c.job(id="x!1")), ("w.json", "job #0", "'!'")),
    ("id-names-workload", lambda c: c.run(workload=c.job(id="w0x")), ("w.json", "job #0", "workload name")),
    ("id-other-workload", lambda c: c.run(workload=c.job(id="aw0!1")), ("w.json", "job #0", "'w0!NAME'")),
    ("id-duplicate-via-workload-form", lambda c: c.run(workload=c.workload(
        [{"id": 5, "subtime": 0, "res": 1, "profile": "d"}, {"id": "w0!5", "subtime": 1, "res": 1, "profile": "d"}])),
     ("w.json", "job '5'", "duplicate")),
    # --- numbers: NaN, infinite, negative, beyond the time bound
    ("subtime-1e308", lambda c: c.run(workload=c.job(subtime=1e308)), ("w.json", "job '1'", "'subtime'", "2**33")),
    ("subtime-below-minus-2**33", lambda c: c.run(workload=c.job(subtime=-1e10)), ("w.json", "job '1'", "'subtime'", "2**33")),
    ("subtime-string", lambda c: c.run(workload=c.job(subtime="0")), ("w.json", "job '1'", "'subtime'")),
    ("walltime-1e308", lambda c: c.run(workload=c.job(walltime=1e308)), ("w.json", "job '1'", "'walltime'")),
    ("delay-1e308", lambda c: c.run(workload=c.workload([{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                                                         {"d": {"type": "delay", "delay": 1e308}})),
     ("w.json", "profile 'd'", "'delay'", "2**33")),
    ("cpu-negative", lambda c: c.run(workload=c.workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "c"}],
        {"c": {"type": "parallel_homogeneous", "cpu": -1, "com": 0}})), ("w.json", "profile 'c'", "'cpu'")),
    ("nan-token", lambda c: c.run(workload=c.file("w.json", '{"nb_res": 1, "jobs": [{"id": 1, "subtime": NaN, "res": 1, '
                                                             '"profile": "d"}], "profiles": {}}')),
     ("w.json", "NaN")),
    ("infinity-token", lambda c: c.run(workload=c.file("w.json", '{"nb_res": 1, "jobs": [], "profiles": {"d": {"type": '
                                                                  '"delay", "delay": Infinity}}}')),
     ("w.json", "Infinity")),
    ("number-overflows-double", lambda c: c.run(workload=c.file("w.json", '{"nb_res": 1, "jobs": [{"id": 1, "subtime": 1e400, '
                                                                           '"res": 1, "profile": "d"}]}')),
     ("w.json", "1e400", "too large")),
    ("watts-nan", lambda c: c.run("-E", platform=c.platform("100.0:114.67:200.0", "nan:114.67:200.0")),
     ("p.xml", "host 'a1'", "wattage_per_state")),
    ("watts-negative", lambda c: c.run("-E", platform=c.platform("100.0:114.67:200.0", "-100:114.67:200.0")),
     ("p.xml", "host 'a1'", "wattage_per_state")),
    ("watts-infinite", lambda c: c.run("-E", platform=c.platform("100.0:114.67:200.0", "100:inf:200.0")),
     ("p.xml", "host 'a1'", "wattage_per_state")),
    ("watts-off-nan", lambda c: c.run("-E", platform=c.platform('"wattage_off" value="10"', '"wattage_off" value="nan"')),
     ("p.xml", "host 'a1'", "wattage_off")),
    ("speed-zero", lambda c: c.run(platform=c.platform('"50Mf"', '"0f"')), ("p.xml", "host 'b2'", "speed")),
    ("speed-infinite", lambda c: c.run(platform=c.platform('"50Mf"', '"1e400f"')), ("p.xml", "host 'b2'", "speed")),
    # --- <config> options (SimGrid 3.32 as Batsim 4.2.1 applies them: schedulers/engine/sgconfig.py)
    ("config-unknown-key", lambda c: c.run(platform=_config(c, "network/coordinates", "yes")),
     ("p.xml", "'network/coordinates'", "Bad config key")),
    ("config-old-spelling", lambda c: c.run(platform=_config(c, "network/TCP_gamma", "4194304")),
     ("p.xml", "'network/TCP_gamma'", "'network/TCP-gamma'")),
    ("config-not-a-double", lambda c: c.run(platform=_config(c, "network/TCP-gamma", "abc")),
     ("p.xml", "'network/TCP-gamma'", "double", "aborts")),
    ("config-double-overflows", lambda c: c.run(platform=_config(c, "network/latency-factor", "1e400")),
     ("p.xml", "'network/latency-factor'", "out of range")),
    ("config-not-a-boolean", lambda c: c.run(platform=_config(c, "network/crosstraffic", "Yes")),
     ("p.xml", "'network/crosstraffic'", "boolean")),
    ("config-not-an-int", lambda c: c.run(platform=_config(c, "contexts/stack-size", "08")),
     ("p.xml", "'contexts/stack-size'", "int")),
    ("config-unknown-model", lambda c: c.run(platform=_config(c, "network/model", "Foo")),
     ("p.xml", "'network/model'", "'Foo'", "LV08")),
    ("config-tcp-gamma", lambda c: c.run(platform=_config(c, "network/TCP-gamma", "1000")),
     ("p.xml", "'network/TCP-gamma'", "default", "real Batsim")),
    ("config-loopback-bw", lambda c: c.run(platform=_config(c, "network/loopback-bw", "1e9")),
     ("p.xml", "'network/loopback-bw'", "real Batsim")),
    ("config-solver", lambda c: c.run(platform=_config(c, "host/solver", "bmf")),
     ("p.xml", "'host/solver'", "real Batsim")),
    ("config-precision", lambda c: c.run(platform=_config(c, "maxmin/precision", "1e-9")),
     ("p.xml", "'maxmin/precision'", "real Batsim")),
    ("config-tracing-platform", lambda c: c.run(platform=_config(c, "tracing/platform", "yes")),
     ("p.xml", "'tracing/platform'", "real Batsim")),
    ("config-small-stack", lambda c: c.run(platform=_config(c, "contexts/stack-size", "8")),
     ("p.xml", "'contexts/stack-size'", "16")),
    ("config-value-with-comma", lambda c: c.run(platform=_config(c, "path", "a,b")),
     ("p.xml", "'path'", "commas")),
    ("config-after-zone", lambda c: c.run(platform=c.platform(
        "</zone>", '</zone><config id="c"><prop id="path" value="x"/></config>')), ("p.xml", "<config", "before")),
    ("config-inside-zone", lambda c: c.run(platform=c.platform(
        '<zone id="z" routing="Full">', '<zone id="z" routing="Full"><config><prop id="path" value="x"/></config>')),
     ("p.xml", "<config>", "'z'")),
    # --- simgrid.dtd, as SimGrid 3.32's parser enforces it; recorded on real Batsim 4.2.1, 2026-11-24: "Parse error
    # at p.xml:8: ... Starting tag <prop> is not allowed here.", "p.xml:11: ... Bad attribute `colour' in `host' ..."
    ("prop-after-host", lambda c: c.run(platform=c.platform('<host id="a1"', '<prop id="x" value="y"/><host id="a1"')),
     ("p.xml:8:", "<prop id='x'> inside <zone id='z'> after <host id='master_host'>", "Starting tag <prop>")),
    ("host-unknown-attribute", lambda c: c.run(platform=c.platform('id="b2"', 'id="b2" colour="red"')),
     ("p.xml:11:", "<host id='b2'>: attribute 'colour'", "Bad attribute `colour'")),
    # SimGrid traces change speeds over time in real Batsim; the engine models none: refused, not ignored
    ("host-speed-trace", lambda c: c.run(platform=c.platform('id="b2"', 'id="b2" speed_file="s.txt"')),
     ("p.xml", "<host id='b2'> attribute 'speed_file'", "--engine batsim")),
    # --- options
    ("max-jobs-negative", lambda c: c.run("--max-jobs", "-1", workload=str(FIX / "tiny.swf")), ("--max-jobs", "-1")),
    ("max-jobs-zero", lambda c: c.run("--max-jobs", "0"), ("--max-jobs", "0")),
    ("cores-per-host-zero", lambda c: c.run("--cores-per-host", "0", workload=str(FIX / "tiny.swf")),
     ("--cores-per-host", "0")),
    ("cores-per-host-negative", lambda c: c.run("--cores-per-host", "-2", workload=str(FIX / "tiny.swf")),
     ("--cores-per-host", "-2")),
    ("timeout-zero", lambda c: c.run("--timeout", "0"), ("--timeout",)),
    ("policy-unknown", lambda c: c.run() + ["--policy", "nope"], ("unknown policy 'nope'",)),
    ("policy-option-unknown", lambda c: c.run("--policy-options", '{"zz": 1}'), ("policy 'fcfs'", "'zz'")),
    ("policy-options-array", lambda c: c.run("--policy-options", "[1,2]"), ("--policy-options", "array")),
    ("policy-options-string", lambda c: c.run("--policy-options", '"abc"'), ("--policy-options", "string")),
    ("policy-options-malformed", lambda c: c.run("--policy-options", "{nope"), ("--policy-options", "malformed")),
    ("policy-options-nan", lambda c: c.run("--policy-options", '{"a": NaN}'), ("--policy-options", "NaN")),
    ("policy-options-missing-file", lambda c: c.run("--policy-options", f"@{c.tmp / 'none.json'}"),
     ("none.json", "no such")),
    ("policy-options-not-utf8", lambda c: c.run("--policy-options", "@" + c.file("o.json", b'{"a": "\xff"}')),
     ("o.json", "UTF-8")),
    ("policy-options-too-deep", lambda c: c.run("--policy-options", "@" + c.file("o.json", deep_json())),
     ("o.json", "nested")),
    ("replay-without-transcript", lambda c: c.run() + ["--policy", "replay"], ("'replay'", "transcript")),
    ("replay-missing-transcript", lambda c: c.run("--policy-options", json.dumps({"transcript": str(c.tmp / "t.jsonl")}))
     + ["--policy", "replay"], ("'replay'", "t.jsonl")),
    # --- files that cannot be read
    ("workload-missing", lambda c: c.run(workload=str(c.tmp / "none.json")), ("none.json", "no such")),
    ("workload-is-folder", lambda c: c.run(workload=_folder(c, "wdir")), ("wdir", "folder")),
    ("trace-is-folder", lambda c: c.run(workload=_folder(c, "t.swf")), ("t.swf", "folder")),
    ("trace-truncated-gz", lambda c: c.run(workload=_truncated_gz(c)), ("trunc.swf.gz", "truncated")),
    ("json-gz-truncated", lambda c: c.run(workload=c.file("w.json.gz", gzip.compress(b'{"nb_res": 1, "jobs": []}')[:12])),
     ("w.json.gz", "truncated")),
    ("workload-not-utf8", lambda c: c.run(workload=c.file("w.json", b'{"nb_res": 1, "jobs": [], "x": "\xff\xfe"}')),
     ("w.json", "UTF-8")),
    ("workload-too-deep", lambda c: c.run(workload=c.file("w.json", deep_json())), ("w.json", "nested")),
    ("workload-array", lambda c: c.run(workload=c.file("w.json", "[1, 2]")), ("w.json", "array")),
    ("workload-malformed", lambda c: c.run(workload=c.file("w.json", '{"nb_res": 1, "jobs": [')), ("w.json", "malformed")),
    ("platform-is-folder", lambda c: c.run(platform=_folder(c, "p.xml")), ("p.xml",)),
    ("platform-malformed", lambda c: c.run(platform=c.file("p.xml", "<platform><host")), ("p.xml", "malformed")),
    ("platform-zones-too-deep", lambda c: c.run(platform=c.file(
        "p.xml", "<platform>" + "<zone id='z'>" * 5000 + "<host id='h' speed='1f'/>" + "</zone>" * 5000
        + "</platform>")), ("p.xml",)),
    # --- platform size (counted before a host is built: these allocate nothing)
    ("cluster-huge-radical", lambda c: c.run(platform=_cluster(c, 'id="big" radical="0-99999999"')),
     ("p.xml", "cluster 'big'", "radical '0-99999999' gives 100,000,000 hosts", "at most 250,000")),
    ("cluster-radical-parts", lambda c: c.run(platform=_cluster(c, 'id="c2" radical="0-199999,7,300000-350000"')),
     ("p.xml", "cluster 'c2'", "250,002 hosts")),
    # --- traces that give no job
    ("swf-empty", lambda c: c.run(workload=c.file("e.swf", "")), ("e.swf", "no job")),
    ("swf-header-only", lambda c: c.run(workload=c.file("h.swf", "; Version: 2.2\n; MaxProcs: 16\n")),
     ("h.swf", "no job")),
    ("swf-all-dropped", lambda c: c.run(workload=c.file("d.swf", _swf_line(1, 0, 10, 4, status=5))),
     ("d.swf", "none of its 1 job")),
    ("swf-bad-line", lambda c: c.run(workload=c.file("b.swf", "1 2 3\n")), ("b.swf", "line 1")),
    # --- --max-jobs / --fit on JSON workloads
    ("max-jobs-not-json", lambda c: c.run("--max-jobs", "3", workload=c.file("w.json", "not json")),
     ("w.json", "malformed")),
    ("max-jobs-no-subtime", lambda c: c.run("--max-jobs", "3", workload=c.workload(
        [{"id": 7, "res": 1, "profile": "d"}])), ("w.json", "job 7", "'subtime'")),
    ("max-jobs-subtime-string", lambda c: c.run("--max-jobs", "3", workload=c.workload(
        [{"id": 7, "subtime": "x", "res": 1, "profile": "d"}])), ("w.json", "job 7", "'subtime'")),
    # Batsim 4.2.1 aborts without an integer nb_res > 0 (src/workload.cpp, Workload::load_from_json)
    ("nb-res-missing", lambda c: c.run(workload=c.file("w.json", '{"jobs": [], "profiles": {}}')),
     ("w.json", "'nb_res' field is missing")),
    ("nb-res-float", lambda c: c.run(workload=c.file("w.json", '{"nb_res": 4.0, "jobs": [], "profiles": {}}')),
     ("w.json", "'nb_res' must be an integer > 0", "4.0")),
    ("nb-res-zero", lambda c: c.run(workload=c.file("w.json", '{"nb_res": 0, "jobs": [], "profiles": {}}')),
     ("w.json", "'nb_res' must be an integer > 0", "got 0")),
    ("max-jobs-jobs-not-list", lambda c: c.run("--max-jobs", "3", workload=c.file("w.json", '{"nb_res": 1, "jobs": 3}')),
     ("w.json", "'jobs'")),
    ("fit-clamp-array", lambda c: c.run("--fit", "clamp", workload=c.file("w.json", "[1, 2]")), ("w.json", "array")),
    ("fit-scale-bad-res", lambda c: c.run("--fit", "scale", workload=c.job(res="2")), ("w.json", "'res'")),
    # the default --fit error holds for --engine batsim too (refused before Batsim is looked for)
    ("fit-error-engine-batsim", lambda c: c.run("--engine", "batsim", workload=c.job(res=99)),
     ("w.json", "job 1", "requests 99 hosts")),
    # --- composed profiles
    ("composed-cycle", lambda c: c.run(workload=c.workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "a"}],
        {"a": {"type": "composed", "seq": ["b"]}, "b": {"type": "composed", "seq": ["a"]}})),
     ("w.json", "profile 'a'", "cycle")),
    ("composed-self-cycle-unused", lambda c: c.run(workload=c.workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
        {"d": {"type": "delay", "delay": 1}, "s": {"type": "composed", "seq": ["s"]}})),
     ("w.json", "profile 's'", "cycle")),
    # recorded on real Batsim 4.2.1 (2026-11-24): "profiles.cpp:642 [root/CRITICAL] Invalid JSON file
    # '.../w.json': profile 's' has no 'trace' field" (exit 1): it knows no 'sequence' type
    ("profile-sequence-unknown-to-batsim", lambda c: c.run(workload=c.workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "s"}],
        {"d": {"type": "delay", "delay": 5}, "s": {"type": "sequence", "seq": ["d"], "repeat": 1}})),
     ("w.json", "profile 's'", "has no 'trace' field")),
    ("profile-unknown-type-unused", lambda c: c.run(workload=c.workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
        {"d": {"type": "delay", "delay": 5}, "u": {"type": "foo"}})),
     ("w.json", "profile 'u'", "unknown profile type 'foo'")),
    ("composed-huge-repeat", lambda c: c.run(workload=c.workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "a"}],
        {"d": {"type": "delay", "delay": 1}, "a": {"type": "composed", "repeat": 10 ** 12, "seq": ["d"]}})),
     ("w.json", "profile 'a'", "stages")),
    ("composed-deep-chain", lambda c: c.run(workload=c.workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "p0"}],
        {**{f"p{i}": {"type": "composed", "seq": [f"p{i + 1}"], "repeat": 2} for i in range(40)},
         "p40": {"type": "delay", "delay": 1}})), ("w.json", "profile", "stages")),
    # --- a run that SimGrid's solver cannot end (real Batsim hangs): the workload and job named
    ("solver-never-ends", lambda c: c.run("--compute-sharing", workload=c.workload(
        [{"id": k, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"} for k in range(3)]
        + [{"id": 3, "subtime": 0, "walltime": -1, "res": 1, "profile": "c"}],
        {"d": {"type": "delay", "delay": 1.0}, "c": {"type": "parallel_homogeneous", "cpu": 5e-324, "com": 0}})),
     ("w.json", "w0!3", "never ends")),
    # --- the output folder
    ("output-is-a-file", lambda c: c.run() + ["-o", c.file("afile", "x")], ("afile", "not a folder")),
]


@pytest.mark.parametrize("build, expected", [(b, e) for _, b, e in CASES], ids=[i for i, _, _ in CASES])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, build, expected) -> None:
    case = Case(tmp_path)
    code, _, err = run_main(build(case))
    lines = err.splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("gridsched: error: "), err
    for part in expected:
        assert part in lines[0], (part, lines[0])
    assert not case.out.exists(), "a bad input must not touch the output folder"


def test_non_empty_output_folder_needs_overwrite(tmp_path: Path) -> None:
    case = Case(tmp_path)
    case.out.mkdir()
    (case.out / "notes.txt").write_text("mine")
    code, _, err = run_main(case.run())
    assert code == 2 and err.count("\n") == 1
    assert f"{case.out}: the output folder is not empty (notes.txt)" in err and "--overwrite" in err


# ------------------------------------------------------------------------- silent wrong results
def test_overwrite_removes_the_previous_runs_files_and_only_them(tmp_path: Path) -> None:
    # An energy run, then a run without energy into the same folder: the old energy files must go
    # (they made summarize report "energy 0 J"), the user's file must stay.
    out = tmp_path / "o"
    base = ["run", "--policy", "fcfs", "-p", str(HETERO), "-w", str(FIX / "tiny.swf"), "-o", str(out), "--no-progress"]
    assert run_main(base + ["-E"])[0] == 0
    assert (out / "out_consumed_energy.csv").exists() and (out / "workload_w0.json").exists()
    (out / "notes.txt").write_text("mine")
    code, _, err = run_main(base)
    assert code == 2 and "not empty" in err
    code, stdout, err = run_main(base + ["--overwrite"])
    assert code == 0, err
    assert ("--overwrite: removed the previous run's files from " in err and "out_consumed_energy.csv" in err
            and "out_pstate_changes.csv" in err and "notes.txt" not in err)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "out_jobs.csv", "out_machine_states.csv",
                                                    "out_schedule.csv", "out_schedule.trace", "summary.json",
                                                    "workload_w0.json"]
    assert json.loads((out / "summary.json").read_text())["energy_joules"] is None
    assert "energy" not in stdout


def test_unusual_profile_names_are_quoted_and_workload_form_ids_keep_their_name(tmp_path: Path) -> None:
    # Batsim writes the profile name raw; a comma or quote would split the row. Ids "w0!7" are
    # "workload!job" for Batsim: the job is named 7.
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"nb_res": 64, "jobs": [{"id": "w0!7", "subtime": 0, "res": 1, "profile": 'a,"b"\nc'},
                                       {"id": 8, "subtime": 1, "res": 2, "profile": "plain"}],
                              "profiles": {'a,"b"\nc': {"type": "delay", "delay": 2},
                                           "plain": {"type": "delay", "delay": 5}}}))
    out = tmp_path / "o"
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", str(HETERO), "-w", str(wl), "-o", str(out),
                             "--no-progress"])
    assert code == 0, err
    text = (out / "out_jobs.csv").read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["job_id"], r["profile"], r["allocated_resources"]) for r in rows] == [
        ("7", 'a,"b"\nc', "0"), ("8", "plain", "1-2")]
    # ordinary fields are written as Batsim writes them, unquoted
    assert '\n8,w0,plain,1.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,1.000000,5.000000,6.000000,' in text
    assert '\n7,w0,"a,""b""\nc",0.000000,1,' in text


def test_summary_is_strict_json(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert run_main(["run", "--policy", "easy", "-p", str(HETERO), "-w", str(FIX / "tiny.swf"), "-o", str(out),
                     "--no-progress", "-E"])[0] == 0
    json.loads((out / "summary.json").read_text(), parse_constant=_no_constant)


def _no_constant(token: str) -> Any:
    raise AssertionError(f"non-JSON token {token}")


def test_a_job_that_never_ends_is_named_as_running_not_as_never_executed(tmp_path: Path) -> None:
    # SimGrid accepts a zero-speed host (tasks make no progress; `gridsched run` refuses it as
    # Batsim does). The engine's deadlock message must say the job runs, on which host.
    xml = tmp_path / "p.xml"
    xml.write_text(HETERO.read_text().replace('"50Mf"', '"0f"'))
    w = {"nb_res": 64, "jobs": [{"id": 1, "subtime": 0, "res": 4, "profile": "c"}],
         "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}
    with pytest.raises(EngineError) as err:
        simulate(xml, [w], FCFS())
    msg = str(err.value)
    assert "1 running job(s) never end" in msg and "w0!1 on a1" in msg and "b2 (0 flops/s)" in msg
    assert "never executed" not in msg


# ----------------------------------------------------------------------------------- Ctrl-C
def test_ctrl_c_stops_cleanly_says_where_and_keeps_the_jobs_done(tmp_path: Path) -> None:
    n = 30_000
    wl = tmp_path / "big.json"
    wl.write_text(json.dumps({"nb_res": 64, "jobs": [{"id": i, "subtime": i, "res": 1 + i % 4, "profile": "d"} for i in range(n)],
                              "profiles": {"d": {"type": "delay", "delay": 5}}}))
    out = tmp_path / "o"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "schedulers.cli", "run", "--policy", "fcfs", "-p", str(HETERO),
                             "-w", str(wl), "-o", str(out)], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen, deadline = "", time.monotonic() + 60
        while "t=" not in seen and time.monotonic() < deadline:  # the progress bar shows simulated time
            ch = proc.stderr.read(1)
            if not ch:
                break
            seen += ch
        assert "t=" in seen, seen
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("gridsched: interrupted at simulated time t=") and f"of {n:,} jobs done" in last, last
    done = int(last.split(" with ")[1].split(" of ")[0].replace(",", ""))
    assert 0 < done < n
    assert "out_jobs.partial.csv" in last
    rows = list(csv.DictReader((out / "out_jobs.partial.csv").open()))
    assert len(rows) == done and rows[0]["job_id"] == "0"
    assert not (out / "summary.json").exists() and not (out / "out_jobs.csv").exists()


# ------------------------------------------------------------------------ property-based test
NASTY = st.one_of(
    st.none(), st.booleans(), st.integers(-2 ** 63, 2 ** 63),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1e308, -1e308, 2.0 ** 33, 2.0 ** 33 + 1]),
    st.text(max_size=4), st.sampled_from(["a,b", 'q"', "n\nl", "w0", "w0!1", "x!y", "$&", "", "d", "c"]),
    st.lists(st.integers(0, 3), max_size=3), st.dictionaries(st.sampled_from(["a", "type"]), st.integers(), max_size=1),
)
def mutate(draw: st.DrawFn, obj: dict, keys: list[str]) -> None:
    """Give one field of ``obj`` a nasty value, or remove it."""
    key = draw(st.sampled_from(keys))
    if draw(st.integers(0, 3)) == 0:
        obj.pop(key, None)
    else:
        obj[key] = draw(NASTY)


@st.composite
def workloads(draw: st.DrawFn) -> Any:
    """A valid workload (delay, computing and composed profiles; 0-6 jobs), then a few fields made
    nasty: wrong types, huge or negative numbers, odd ids and names, missing keys."""
    if draw(st.integers(0, 19)) == 0:
        return draw(NASTY)  # not even an object
    profiles: dict[str, Any] = {
        "d": {"type": "delay", "delay": draw(st.floats(0.5, 100))},
        "c": {"type": draw(st.sampled_from(["parallel_homogeneous", "parallel_homogeneous_total"])),
              "cpu": draw(st.floats(0, 1e10)), "com": 0},
        'x,"y"': {"type": "composed", "seq": ["d", "c"], "repeat": draw(st.integers(1, 3))},
    }
    names = list(profiles)
    jobs = [{"id": draw(st.sampled_from([k, f"j-{k}", f"w0!b{k}"])),
             "subtime": draw(st.floats(0, 100)), "walltime": draw(st.one_of(st.just(-1), st.floats(0.5, 50))),
             "res": draw(st.integers(1, 4)), "profile": draw(st.sampled_from(names))}
            for k in range(draw(st.integers(0, 6)))]
    for _ in range(draw(st.integers(0, 2))):
        if jobs and draw(st.booleans()):
            mutate(draw, draw(st.sampled_from(jobs)), ["id", "subtime", "walltime", "res", "profile"])
        else:
            mutate(draw, profiles[draw(st.sampled_from(names))], ["type", "delay", "cpu", "com", "seq", "repeat"])
    data: dict[str, Any] = {"nb_res": 64, "jobs": jobs, "profiles": profiles}
    if draw(st.integers(0, 19)) == 0:
        data[draw(st.sampled_from(["jobs", "profiles"]))] = draw(NASTY)
    return data


WATTS = st.one_of(st.sampled_from(["nan:1:2", "-5:1:2", "inf:1:2", "1e10:1:2", "1:2:3:4", "a:b", "", "0:0:0"]),
                  st.tuples(st.floats(0, 1e3), st.floats(0, 1e3)).map(lambda t: f"{t[0]!r}:{t[1]!r}"))
SPEEDS = st.sampled_from(["0f", "-1f", "nan", "1e400f", "5Xf", "1e-300f", "", "100Mf,50Mf"])


@st.composite
def platforms(draw: st.DrawFn) -> str:
    """Four hosts, valid (speeds, cores, powers), then a few attributes made nasty."""
    hosts = [{"speed": draw(st.sampled_from(["100Mf", "1Gf", "50Mf"])), "core": str(draw(st.integers(1, 4))),
              "watts": "100:120:200"} for _ in range(4)]
    for _ in range(draw(st.integers(0, 2))):
        h = draw(st.sampled_from(hosts))
        key = draw(st.sampled_from(["speed", "core", "watts"]))
        h[key] = draw({"speed": SPEEDS, "core": st.sampled_from(["0", "-1", "x", "1e3"]), "watts": WATTS}[key])
    text = "".join(f"<host id='h{i}' speed='{h['speed']}' core='{h['core']}'>"
                   f"<prop id='wattage_per_state' value='{h['watts']}'/></host>" for i, h in enumerate(hosts))
    return ("<?xml version='1.0'?><platform version='4.1'><zone id='z' routing='Full'>"
            "<host id='master_host' speed='1Gf'/>" + text + "</zone></platform>")


def check_outputs(out: Path) -> None:
    """Valid outputs: Batsim's CSV files parse, hold no NaN or infinity, summary is strict JSON."""
    for f in out.glob("out_*.csv"):
        with f.open(newline="") as stream:
            rows = list(csv.reader(stream))
        width = len(rows[0])
        for row in rows[1:]:
            assert len(row) == width, (f.name, row)
            for cell in row:
                assert cell.lower() not in ("nan", "inf", "-inf"), (f.name, row)
                try:
                    assert math.isfinite(float(cell)), (f.name, row)
                except ValueError:
                    pass
    summary = json.loads((out / "summary.json").read_text(), parse_constant=_no_constant)
    assert all(math.isfinite(v) for v in summary.values() if isinstance(v, (int, float)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(), platform=st.one_of(st.none(), platforms()), energy=st.booleans(),
       policy=st.sampled_from(["fcfs", "easy"]),
       options=st.sampled_from([[], ["--fit", "clamp"], ["--fit", "drop"], ["--max-jobs", "2"], ["--compute-sharing"]]))
def test_random_malformed_inputs_give_one_line_or_valid_outputs(workload, platform, energy, policy, options) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        wl = t / "wl.json"
        wl.write_text(json.dumps(workload))
        plat = HETERO
        if platform is not None:
            plat = t / "plat.xml"
            plat.write_text(platform)
        out = t / "out"
        argv = ["run", "--policy", policy, "-p", str(plat), "-w", str(wl), "-o", str(out), "--no-progress", *options]
        code, _, err = run_main(argv + (["-E"] if energy else []))
        assert code in (0, 2), err
        if code == 2:
            lines = err.splitlines()
            assert len(lines) == 1 and lines[0].startswith("gridsched: error: "), err
            assert "wl.json" in lines[0] or "plat.xml" in lines[0] or "deadlock" in lines[0], lines[0]
            assert not out.exists() or "deadlock" in lines[0]
        else:
            check_outputs(out)


def test_platform_host_limit_counts_hosts_and_clusters_together(tmp_path: Path, monkeypatch) -> None:
    # MAX_HOSTS lowered to 10 so that the limit is reached with a few hosts: <host> elements and
    # cluster radicals add up (master host included), the host or cluster that crosses it is named
    from schedulers.engine import platform as plat
    from schedulers.inputs.errors import PlatformError

    monkeypatch.setattr(plat, "MAX_HOSTS", 10)
    master = "<host id='master_host' speed='1f'/>"

    def read(body: str, hosts: bool = False):
        # hosts in the master host's zone; clusters beside it (a zone holds hosts or zones, not both)
        p = tmp_path / "p.xml"
        p.write_text("<platform version='4.1'><zone id='z' routing='Full'>"
                     + (master + body if hosts else f"<zone id='m' routing='Full'>{master}</zone>{body}")
                     + "</zone></platform>")
        return plat.read_platform(p)

    def cluster(name: str, radical: str) -> str:
        return f"<cluster id='{name}' prefix='{name}' suffix='' radical='{radical}' speed='1f' bw='1GBps' lat='0'/>"

    assert len(read(cluster("a", "0-3,5-9")).compute) == 9  # 10 hosts
    with pytest.raises(PlatformError, match=r"p\.xml: cluster 'b': radical '0-4' gives 5 hosts; a platform "
                                            r"may have at most 10 hosts"):
        read(cluster("a", "0-4") + cluster("b", "0-4"))
    # (<host> elements past the bound are refused before the file is parsed into a tree: with its line)
    with pytest.raises(PlatformError, match=r"p\.xml, line 1: host 'h9': more than 10 hosts"):
        read("".join(f"<host id='h{i}' speed='1f'/>" for i in range(10)), hosts=True)
    with pytest.raises(PlatformError, match=r"cluster 'a': bad radical '1-x'"):
        read(cluster("a", "1-x"))
