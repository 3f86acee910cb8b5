"""A platform is checked as SimGrid 3.32 builds it, after its XML parser
(:mod:`schedulers.engine.platform_build`): what makes real Batsim 4.2.1 abort at start, the engine
refuses, in one line naming the file, the line of the element, the element and what is wrong,
quoting SimGrid's words; what Batsim runs, the engine reads as SimGrid reads it.

Every outcome below was recorded on real Batsim 4.2.1 (SimGrid 3.32, release build), 2026-11-24:
each platform of :data:`CASES` was run by ``batsim`` with gridsched's ``fcfs`` and a one-job
workload (:data:`WORKLOAD`). ``None`` means Batsim ran the job to the end; otherwise the tuple holds
the words Batsim's log holds (its SimGrid message; "Segmentation fault" when it crashed), then more
words of the engine's message, which names the line of the element marked ``@`` (none for an abort
at t = 0, when Batsim routes its first message). ``python tests/test_platform_build.py`` runs the
cases on the ``batsim`` found on PATH again and prints any outcome that differs.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from schedulers.cli import main
from schedulers.engine import simulate
from schedulers.engine.platform import read_platform
from schedulers.engine.platform_build import ROUTING_MODELS, check_build, routing_model
from schedulers.fcfs import FCFS
from schedulers.inputs.errors import PlatformError

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
WORKLOAD = {"nb_res": 1, "jobs": [{"id": "1", "subtime": 0, "walltime": 10, "res": 1, "profile": "d"}],
            "profiles": {"d": {"type": "delay", "delay": 5}}}
HEAD = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"


def plat(*lines: str) -> tuple[str, int | None]:
    """A platform of ``lines`` (the first on line 4) and the line of the one marked ``@``."""
    marked = [i for i, text in enumerate(lines) if text.startswith("@")]
    body = "\n".join(text.lstrip("@") for text in lines)
    line = 4 + sum(text.count("\n") + 1 for text in lines[: marked[0]]) if marked else None
    return f'{HEAD}<platform version="4.1">\n{body}\n</platform>\n', line


M = '<host id="master_host" speed="100Mf"/>'
H = '<host id="h0" speed="100Mf"/>'
H1 = '<host id="h1" speed="100Mf"/>'
L = '<link id="l0" bandwidth="1GBps" latency="0"/>'
SPLIT = '<link id="l0" bandwidth="1GBps" latency="0" sharing_policy="SPLITDUPLEX"/>'
UP = '<link id="up" bandwidth="1GBps" latency="0"/>'
ZR = '<zoneRoute src="z1" dst="z2" gw_src="master_host" gw_dst="h0"><link_ctn id="up"/></zoneRoute>'
END = "</zone>"
TRACE = '<trace id="t" periodicity="1">0 1\n</trace>'


def zone(routing: str = "Full", zid: str = "AS0", mark: str = "") -> str:
    return f'{mark}<zone id="{zid}" routing="{routing}">'


def leaf(*body: str, routing: str = "Full") -> tuple[str, int | None]:
    """One zone (line 4) holding the master host and h0 (lines 5, 6), then ``body`` from line 7."""
    return plat(zone(routing), M, H, *body, END)


def two(*z2: str, z1: tuple[str, ...] = (M,), tail: tuple[str, ...] = (UP, ZR), r1: str = "Full",
        r2: str = "Full", root: str = "Full") -> tuple[str, int | None]:
    """Root zone AS0 (line 4); z1 (line 5) holding ``z1``; z2 holding h0 then ``z2``; then ``tail``."""
    return plat(zone(root), zone(r1, "z1"), *z1, END, zone(r2, "z2"), H, *z2, END, *tail, END)


def cluster(attrs: str = "", cid: str = "c", prefix: str = "n", radical: str = "0-1", mark: str = "@") -> str:
    return (f'{mark}<cluster id="{cid}" prefix="{prefix}" suffix="" radical="{radical}" speed="1Gf" bw="1GBps" '
            f'lat="0"{attrs}/>')


def with_cluster(c: str, *more: str, cid: str = "c", router: str = "nc_router") -> tuple[str, int | None]:
    """Root zone; the master host's zone m (lines 5-7); the cluster ``c`` (line 8); ``more``; the route."""
    return plat(zone(), zone(zid="m"), M, END, c, *more, UP,
                f'<zoneRoute src="{cid}" dst="m" gw_src="{router}" gw_dst="master_host"><link_ctn id="up"/></zoneRoute>',
                END)


def route(src: str, dst: str, *links: str, extra: str = "", mark: str = "@", tag: str = "route") -> str:
    return (f'{mark}<{tag} src="{src}" dst="{dst}"{extra}>' + "".join(f'<link_ctn id="{ln}"/>' for ln in links)
            + f"</{tag}>")


def zroute(src: str, dst: str, gs: str, gd: str, *links: str, extra: str = "", tag: str = "zoneRoute") -> str:
    return (f'@<{tag} src="{src}" dst="{dst}" gw_src="{gs}" gw_dst="{gd}"{extra}>'
            + "".join(f'<link_ctn id="{ln}"/>' for ln in links) + f"</{tag}>")


def host(extra: str = "", speed: str = "100Mf", hid: str = "h0") -> str:
    return f'@<host id="{hid}" speed="{speed}"{extra}/>'


NOT_A_MODEL = "Not a valid model!"
EMPTY_ZONE = "There can't be route in an Empty zone"
SEGFAULT = "Segmentation fault"

#: (case, (platform, line of the element marked @), None when real Batsim 4.2.1 runs the job, else
#: (Batsim's words, more words of the engine's message)); recorded on real Batsim 4.2.1, 2026-11-24.
CASES: list[tuple[str, tuple[str, int | None], tuple | None]] = [
    # --- routing models (sg_platf_create_zone: strcasecmp against eight names)
    ("routing-empty", plat(zone("", mark="@"), M, H, END), (NOT_A_MODEL, "routing=''")),
    ("routing-unknown", plat(zone("Foo", mark="@"), M, H, END), (NOT_A_MODEL, "routing='Foo'", "Full, None, Vivaldi")),
    ("routing-ClusterTorus", plat(zone("ClusterTorus", mark="@"), M, H, END), (NOT_A_MODEL,)),
    ("routing-RuleBased", plat(zone("RuleBased", mark="@"), M, H, END), (NOT_A_MODEL,)),
    ("routing-padded", plat(zone(" Full", mark="@"), M, H, END), (NOT_A_MODEL,)),
    ("routing-sub-zone-unknown", plat(zone(), zone(zid="z1"), M, H, END, zone("Foo", "z2", "@"), END, END),
     (NOT_A_MODEL, "zone 'z2'")),
    ("routing-full-lowercase", leaf(routing="full"), None),
    ("routing-FULL", leaf(routing="FULL"), None),
    ("routing-Cluster", leaf(routing="Cluster"), None),
    ("routing-cluster-lowercase", leaf(routing="cluster"), None),
    ("routing-Wifi", leaf(routing="Wifi"), None),
    ("routing-Vivaldi-coordinates", plat(zone("Vivaldi"), M.replace("/>", ' coordinates="0 0 0"/>'),
                                         H.replace("/>", ' coordinates="0 0 0"/>'), END), None),
    ("master-in-Floyd-sub-zone", two(r1="Floyd"), None),
    # at t = 0, Batsim's first message: from the master host to itself
    ("master-in-None-zone", leaf(routing="None"), (EMPTY_ZONE, "master host 'master_host'", "at t = 0")),
    ("master-in-None-sub-zone", two(r1="None"), (EMPTY_ZONE,)),
    ("master-in-Dijkstra-zone", leaf(routing="Dijkstra"), (SEGFAULT, "no <route> names it")),
    ("master-in-DijkstraCache-sub-zone", two(r1="dijkstracache"), (SEGFAULT, "no <route> names it", "DijkstraCache")),
    # --- one root zone (the first NetZoneImpl is the root, the only one given the models)
    ("second-root-with-host", plat(zone(), M, H, END, zone(zid="AS1"), host(hid="h1"), END),
     ("Impossible to create host: h1. Invalid CPU model: nullptr. Have you set the parent of this NetZone: AS1?",
      "host 'h1'", "second top-level zone")),
    ("second-root-with-link", plat(zone(), M, H, END, zone(zid="AS1"), "@" + L, END),
     ("Impossible to create link: l0. Invalid network model: nullptr", "link 'l0'")),
    ("second-root-sub-zone-with-host", plat(zone(), M, H, END, zone(zid="AS1"), zone(zid="z2"), host(hid="h1"), END, END),
     ("Have you set the parent of this NetZone: z2?",)),
    ("first-root-empty", plat(zone(), END, zone(zid="AS1"), "@" + M, H, END),
     ("Impossible to create host: master_host. Invalid CPU model: nullptr",)),
    ("root-cluster-then-zone", plat(cluster(mark=""), zone(zid="AS1"), "@" + M, END),
     ("Impossible to create host: master_host",)),
    ("zone-then-root-cluster", plat(zone(), M, H, END, cluster()),
     ("Impossible to create host: n0. Invalid CPU model: nullptr. Have you set the parent of this NetZone: c?",
      "cluster 'c'")),
    ("zone-then-root-cluster-backbone", plat(zone(), M, H, END, cluster(' bb_bw="1GBps"')),
     ("Impossible to create link: c_backbone",)),
    ("second-root-empty", plat(zone(), M, H, END, zone(zid="AS1"), END), None),
    ("second-root-router", plat(zone(), M, H, END, zone(zid="AS1"), '<router id="r1"/>', END), None),
    ("second-root-cluster-without-hosts", plat(zone(), M, H, END, cluster(radical="3-1", mark="")), None),
    # --- names
    ("host-twice", leaf(host()), ("Refusing to create a second host named 'h0'.", "duplicate host id 'h0'")),
    ("cluster-hosts-twice", with_cluster(cluster(mark=""), cluster(cid="d")),
     ("Refusing to create a second host named 'n0'.",)),
    ("zone-twice", plat(zone(), zone(zid="z1"), M, END, zone(zid="z1", mark="@"), H, END, END),
     ("Refusing to create a second NetZone called 'z1'.",)),
    ("zone-named-like-root", plat(zone(), zone(zid="AS0", mark="@"), M, H, END, END),
     ("Refusing to create a second NetZone called 'AS0'.",)),
    ("zone-named-like-host", plat(zone(), zone(zid="z1"), M, END, zone(zid="master_host", mark="@"), H, END, END),
     ("Refusing to create a second NetZone called 'master_host'.", "already names a host")),
    ("cluster-named-like-host", with_cluster(cluster(cid="master_host"), cid="master_host"),
     ("Refusing to create a second NetZone called 'master_host'.",)),
    ("router-named-like-host", leaf('@<router id="h0"/>'),
     ("Refusing to create a router named 'h0': this name already describes a node.",)),
    ("router-named-like-zone", leaf('@<router id="AS0"/>'), ("Refusing to create a router named 'AS0'",)),
    ("router-twice", leaf('<router id="r"/>', '@<router id="r"/>'), ("Refusing to create a router named 'r'",)),
    ("cluster-router-named-like-host", plat(zone(), zone(zid="m"), M, '<host id="nc_router" speed="1Mf"/>', END,
                                            cluster(), UP, END),
     ("Refusing to create a router named 'nc_router'", "its router 'nc_router'")),
    ("host-named-like-router", plat(zone(), M, '<router id="h0"/>', H, END), None),
    ("link-twice", leaf(L, "@" + L), ("Link 'l0' declared several times in the platform.", "link 'l0'")),
    ("link-twice-in-two-zones", two("@" + L, z1=(M, L)), ("Link 'l0' declared several times in the platform.",)),
    ("link-named-like-split-half", leaf(SPLIT, '@<link id="l0_UP" bandwidth="1GBps" latency="0"/>'),
     ("Link 'l0_UP' declared several times in the platform.",)),
    ("link-named-like-cluster-link", with_cluster(cluster(' sharing_policy="SHARED"', mark=""),
                                                  '@<link id="c_link_0" bandwidth="1GBps" latency="0"/>'),
     ("Link 'c_link_0' declared several times in the platform.",)),
    ("link-named-like-cluster-link-half", with_cluster(cluster(mark=""), '@<link id="c_link_1_DOWN" bandwidth="1GBps" '
                                                                         'latency="0"/>'),
     ("Link 'c_link_1_DOWN' declared several times in the platform.",)),
    ("split-link-and-plain-link-of-one-name", leaf(SPLIT, L), None),
    ("link-named-loopback", leaf('<link id="__loopback__" bandwidth="1GBps" latency="0"/>'), None),
    # --- values: units (xbt_parse_units.cpp: strtod, then a unit of the table, case-sensitive)
    ("speed-unit-lowercase", leaf(host(speed="1gf", hid="h1")), ("unknown unit: gf", "host 'h1'", "unknown speed unit")),
    ("speed-unit-Kf", leaf(host(speed="1Kf", hid="h1")), ("unknown unit: Kf",)),
    ("speed-unit-GF", leaf(host(speed="1GF", hid="h1")), ("unknown unit: GF",)),
    ("speed-space-before-unit", leaf(host(speed="1 Gf", hid="h1")), ("unknown unit:  Gf",)),
    ("speed-Mflops", leaf(host(speed="1Mflops", hid="h1")), ("unknown unit: Mflops",)),
    ("speed-empty-pstate", leaf(host(speed="1Gf,", hid="h1")), ("cannot parse number:", "speed '1Gf,'")),
    ("speed-not-a-number", leaf(host(speed="abc", hid="h1")), ("cannot parse number:abc",)),
    ("speed-overflow", leaf(host(speed="1e999f", hid="h1")), ("value out of range: 1e999f",)),
    ("speed-underflow", leaf(host(speed="1e-310f", hid="h1")), ("value out of range: 1e-310f",)),
    ("speed-kf-megaflops-hex-unitless", leaf('<host id="h1" speed="1kf, 1megaflops, 0x10f, 1e3, 0x1p-1030f"/>'), None),
    ("link-two-bandwidths", leaf('@<link id="l0" bandwidth="1GBps,2GBps" latency="0"/>'),
     ("Non WIFI link must have only 1 bandwidth.", "gives 2 bandwidths")),
    ("link-bandwidth-unit", leaf('@<link id="l0" bandwidth="1gbps" latency="0"/>'), ("unknown unit: gbps", "link 'l0'")),
    ("link-latency-unit", leaf('@<link id="l0" bandwidth="1GBps" latency="1 ms"/>'), ("unknown unit:  ms",)),
    ("link-bandwidth-empty", leaf('@<link id="l0" bandwidth="" latency="0"/>'), ("cannot parse number:",)),
    ("link-in-Wifi-zone", two('@<link id="w" bandwidth="1GBps" latency="0"/>', r2="Wifi"),
     ("Feature unimplemented yet", "Wifi zone 'z2'")),
    ("cluster-bw-unit", with_cluster(cluster().replace('bw="1GBps"', 'bw="1GB"')), ("unknown unit: GB", "cluster 'c'")),
    ("cluster-bb_lat", with_cluster(cluster(' bb_lat="abc"')), ("cannot parse number:abc", "bb_lat")),
    ("cluster-speed-unit", with_cluster(cluster().replace('speed="1Gf"', 'speed="1gf"')), ("unknown unit: gf",)),
    ("disk-write_bw", leaf('@<host id="h1" speed="1Gf"><disk id="d" read_bw="1MBps" write_bw="x"/></host>'),
     ("cannot parse number:x", "disk 'd'")),
    # --- values: integers (std::stoi: the leading integer), core, pstate, coordinates
    ("core-0", leaf(host(' core="0"', hid="h1")), ("Host h1 must have at least one core, not 0.",)),
    ("core-negative", leaf(host(' core="-1"', hid="h1")), ("Host h1 must have at least one core, not 0.",)),
    ("core-hexadecimal", leaf(host(' core="0x2"', hid="h1")), ("Host h1 must have at least one core, not 0.",)),
    ("core-empty", leaf(host(' core=""', hid="h1")), (" is not an int", "core=''")),
    ("core-overflow", leaf(host(' core="99999999999"', hid="h1")), ("std::out_of_range: stoi",)),
    ("core-2x-1.5-+2", leaf('<host id="h1" speed="1Gf" core="2x"/>', '<host id="h2" speed="1Gf" core="1.5"/>',
                            '<host id="h3" speed="1Gf" core="+2"/>'), None),
    ("pstate-out-of-range", leaf(host(' pstate="2"', speed="1Gf, 2Gf", hid="h1")),
     ("Invalid parameters for CPU h1 (pstate 2 >= length of pstates 2)", "initial pstate 2")),
    ("pstate-negative", leaf(host(' pstate="-1"', speed="1Gf, 2Gf", hid="h1")),
     ("Invalid parameters for CPU h1 (pstate 18446744073709551615 >= length of pstates 2)",)),
    ("pstate-not-a-number", leaf(host(' pstate="abc"', speed="1Gf, 2Gf", hid="h1")), ("abc is not an int",)),
    ("pstate-empty", leaf(host(' pstate=""', speed="1Gf, 2Gf", hid="h1")), (" is not an int",)),
    ("pstate-overflow", leaf(host(' pstate="99999999999"', speed="1Gf, 2Gf", hid="h1")), ("std::out_of_range: stoi",)),
    ("pstate-1.0-and-0.9", leaf('<host id="h1" speed="1Gf, 2Gf" pstate="1.0"/>',
                                '<host id="h2" speed="1Gf, 2Gf" pstate="0.9"/>'), None),
    ("radical-trailing-comma", with_cluster(cluster(radical="0-1,")), (" is not an int", "bad radical '0-1,'")),
    ("radical-letter", with_cluster(cluster(radical="a")), ("a is not an int", "cluster 'c': bad radical 'a'")),
    ("radical-two-dashes", with_cluster(cluster(radical="0-1-2")), ("Malformed radical: 0-1-2",)),
    ("radical-empty", with_cluster(cluster(radical="")), (" is not an int",)),
    ("radical-negative", with_cluster(cluster(radical="-1")), (" is not an int",)),
    ("radical-overflow", with_cluster(cluster(radical="99999999999")), ("std::out_of_range: stoi",)),
    ("radical-1abc-+2-spaces", with_cluster(cluster(radical="1abc,+2, 3- 4", mark="")), None),
    ("coordinates-two", leaf(host(' coordinates="1 2"', hid="h1")), ("Coordinates of h1 must have 3 dimensions",)),
    ("coordinates-two-spaces", leaf(host(' coordinates="1  2 3"', hid="h1")), ("Coordinates of h1 must have 3 dimensions",)),
    ("coordinates-letters", leaf(host(' coordinates="a b c"', hid="h1")), ("Invalid coordinate: stod",)),
    ("router-coordinates", leaf('@<router id="r" coordinates="1 2"/>'), ("Coordinates of r must have 3 dimensions",)),
    ("coordinates-in-Full-zone", leaf('<host id="h1" speed="1Gf" coordinates="1 2 3"/>'), None),
    # --- traces (the engine refuses traces for itself; real Batsim aborts on these)
    ("trace-periodicity", plat('@<trace id="t" periodicity="abc">0 1\n</trace>', zone(), M, H, END),
     ("abc is not a double",)),
    ("trace-empty", plat('@<trace id="t" periodicity="1"></trace>', zone(), M, H, END),
     ("Trace 't' must have either a content, or point to a file on disk.",)),
    ("trace_connect-unknown-trace", leaf('@<trace_connect trace="tx" element="h0" kind="SPEED"/>'),
     ("Cannot connect trace tx to h0: trace unknown",)),
    ("trace_connect-unknown-host", plat(TRACE, zone(), M, H, '@<trace_connect trace="t" element="hx" kind="SPEED"/>',
                                        END), ('<trace_connect kind="SPEED">: Host hx undefined.',)),
    ("trace_connect-unknown-link", plat(TRACE, zone(), M, H, '@<trace_connect trace="t" element="l9" kind="BANDWIDTH"/>',
                                        END), ('<trace_connect kind="BANDWIDTH">: Link l9 undefined.',)),
    # --- peers, Wifi zones
    ("peer-outside-Vivaldi", plat(zone(), zone(zid="z1"), M, H, END,
                                  '@<peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/>', END),
     ("<peer> tag can only be used in Vivaldi netzones.",)),
    ("Wifi-access-point-unknown", plat(zone(), zone(zid="z1"), M, END, zone("Wifi", "z2", "@"),
                                       '<prop id="access_point" value="apx"/>', H, END, UP, ZR, END),
     ("Access point 'apx' of WIFI zone 'z2' does not exist: no such host or router.",)),
    ("Wifi-access-point-zone", plat(zone(), zone(zid="z1"), M, END, zone("Wifi", "z2", "@"),
                                    '<prop id="access_point" value="z1"/>', H, END, UP, ZR, END),
     ("Access point 'z1' of WIFI zone 'z2' must be either a host or a router.",)),
    ("Wifi-access-point-host", plat(zone(), zone(zid="z1"), M, END, zone("Wifi", "z2"),
                                    '<prop id="access_point" value="h0"/>', H, END, UP, ZR, END), None),
    # --- routes (RoutedZone::add_route_check_params, FullZone, FloydZone, DijkstraZone, StarZone)
    ("route", leaf(L, route("master_host", "h0", "l0")), None),
    ("route-without-link", leaf(L, route("master_host", "h0")),
     ("Empty route (between master_host and h0) forbidden.", "<route src='master_host' dst='h0'> has no <link_ctn>")),
    ("route-without-link-to-itself", leaf(L, route("h0", "h0")), ("Empty route (between h0 and h0) forbidden.",)),
    ("route-without-link-asymmetrical", leaf(L, route("master_host", "h0", extra=' symmetrical="NO"')),
     ("Empty route (between master_host and h0) forbidden.",)),
    ("route-unknown-src", leaf(L, route("hx", "h0", "l0")), ("Route src='hx' does name a node.",)),
    ("route-unknown-dst", leaf(L, route("master_host", "hx", "l0")), ("Route dst='hx' does name a node.",)),
    ("route-to-a-later-host", plat(zone(), zone(zid="z1"), M, UP, route("master_host", "h0", "up"), END, zone(zid="z2"),
                                   H, END, '<link id="l1" bandwidth="1GBps" latency="0"/>',
                                   ZR.replace("up", "l1"), END), ("Route dst='h0' does name a node.",)),
    ("route-to-the-root-zone", leaf(L, route("h0", "AS0", "l0")), (SEGFAULT, "root zone 'AS0'")),
    ("route-twice", leaf(L, route("master_host", "h0", "l0", mark=""), route("master_host", "h0", "l0")),
     ("The route between master_host and h0 already exists (Rq: routes are symmetrical by default).",)),
    ("route-and-its-reverse", leaf(L, route("master_host", "h0", "l0", mark=""), route("h0", "master_host", "l0")),
     ("The route between h0 and master_host already exists (Rq: routes are symmetrical by default).",)),
    ("route-asymmetrical-then-symmetrical-reverse", leaf(L, route("h0", "master_host", "l0", extra=' symmetrical="NO"',
                                                                  mark=""), route("master_host", "h0", "l0")),
     ("The route between h0 and master_host already exists. You should not declare the reverse path as symmetrical.",)),
    ("route-asymmetrical-both-ways", leaf(L, route("h0", "master_host", "l0", extra=' symmetrical="NO"', mark=""),
                                          route("master_host", "h0", "l0", extra=' symmetrical="NO"', mark="")), None),
    ("route-to-itself-twice", leaf(L, route("h0", "h0", "l0", mark=""), route("h0", "h0", "l0")),
     ("The route between h0 and h0 already exists",)),
    ("route-from-another-zone", two(L, route("h0", "master_host", "l0")),
     ("Internal error: h0@z2 and master_host@z1 are not in the same netzone as expected.",)),
    ("route-between-hosts-of-another-zone", two(L, route("master_host", "h1", "l0"), z1=(M, H1)),
     ("Internal error: route destination master_host@h1 is not in netzone z1 as expected (route source: z1@z2).",)),
    ("route-from-a-sub-zone", two(L, route("z1", "h0", "l0")), ("Internal error: z1@AS0 and h0@z2 are not in the same",)),
    ("zoneRoute", two(), None),
    ("zoneRoute-without-link", two(tail=(UP, zroute("z1", "z2", "master_host", "h0"))),
     ("Empty route (between z1@master_host and z2@h0) forbidden.", "<zoneRoute src='z1' dst='z2'>")),
    ("ASroute-without-link", two(tail=(UP, zroute("z1", "z2", "master_host", "h0", tag="ASroute"))),
     ("Empty route (between z1@master_host and z2@h0) forbidden.", "<ASroute")),
    ("zoneRoute-unknown-gateway", two(tail=(UP, zroute("z1", "z2", "gx", "h0", "up"))),
     ("zoneRoute gw_src='gx' does name a node.",)),
    ("ASroute-unknown-zone", two(tail=(UP, zroute("zx", "z2", "master_host", "h0", "up", tag="ASroute"))),
     ("ASroute src='zx' does name a node.",)),
    ("zoneRoute-gateway-outside", two(tail=(UP, zroute("z1", "z2", "h0", "master_host", "up"))),
     ("Invalid NetzoneRoute from z1@h0 to z2@master_host: gw_src h0 belongs to z2, not to z1.",)),
    ("zoneRoute-one-gateway", two(tail=(UP, zroute("z1", "z2", "master_host", "master_host", "up"))),
     ("Cannot define a NetzoneRoute from 'master_host' to itself",)),
    ("zoneRoute-from-a-host", two(tail=(UP, zroute("master_host", "z2", "master_host", "h0", "up"))),
     ("Internal error: master_host@z1 and z2@AS0 are not in the same netzone as expected.",)),
    ("zoneRoute-gateway-a-zone", two(tail=(UP, zroute("z1", "z2", "z1", "h0", "up"))),
     ("When defining a NetzoneRoute, gw_src must be a host or a router but 'z1' is not.",)),
    ("zoneRoute-twice", two(tail=(UP, ZR, zroute("z1", "z2", "master_host", "h0", "up"))),
     ("The route between z1@master_host and z2@h0 already exists (Rq: routes are symmetrical by default).",)),
    ("zoneRoute-reverse-exists", two(tail=(UP, zroute("z2", "z1", "h0", "master_host", "up", extra=' symmetrical="NO"')
                                           .lstrip("@"), zroute("z1", "z2", "master_host", "h0", "up"))),
     ("The route between z2@master_host and z1@h0 already exists. You should not declare the reverse path as "
      "symmetrical.",)),
    ("zoneRoute-not-a-child", plat(zone(), zone(zid="z1"), zone(zid="z1a"), M, END, END, zone(zid="z2"), H, END, UP,
                                   zroute("z1a", "z2", "master_host", "h0", "up"), END),
     ("Internal error: z1a@z1 and z2@AS0 are not in the same netzone as expected.",)),
    ("zoneRoute-gateway-deep", plat(zone(), zone(zid="z1"), zone(zid="z1a"), M, END, END, zone(zid="z2"), H, END, UP,
                                    zroute("z1", "z2", "master_host", "h0", "up").lstrip("@"), END), None),
    ("bypassRoute-without-link", leaf(L, route("master_host", "h0", "l0", mark=""), route("master_host", "h0",
                                                                                          tag="bypassRoute")),
     ("Bypass route between master_host and h0 cannot be empty.",)),
    ("bypassRoute-twice", leaf(L, route("master_host", "h0", "l0", mark=""),
                               route("master_host", "h0", "l0", tag="bypassRoute", mark=""),
                               route("master_host", "h0", "l0", tag="bypassRoute")),
     ("The bypass route between master_host and h0 already exists.",)),
    ("route-in-None-zone", two(L, route("h0", "h0", "l0"), r2="None"),
     ("NetZone 'z2' does not accept new routes (wrong class).", "routing 'None'")),
    ("route-in-Wifi-zone", two(H1, route("h0", "h1"), r2="Wifi"), ("NetZone 'z2' does not accept new routes",)),
    ("zoneRoute-in-None-root", two(root="None", tail=(UP, "@" + ZR)),
     ("NetZone 'AS0' does not accept new routes (wrong class).",)),
    ("route-in-Cluster-zone", leaf(L, route("master_host", "h0", "l0"), routing="Cluster"),
     ("Cannot add route from master_host to h0. In a StarZone, route must be:",)),
    ("route-in-Vivaldi-zone", plat(zone("Vivaldi"), M.replace("/>", ' coordinates="0 0 0"/>'),
                                   H.replace("/>", ' coordinates="0 0 0"/>'), L, route("master_host", "h0", "l0"), END),
     ("Cannot add route from master_host to h0. In a StarZone",)),
    ("zoneRoute-in-Cluster-zone", two(root="Cluster", tail=(UP, "@" + ZR)),
     ("Cannot add route from z1 to z2. In a StarZone",)),
    ("route-twice-in-Floyd-zone", leaf(L, route("master_host", "h0", "l0", mark=""), route("master_host", "h0", "l0"),
                                       routing="Floyd"), ("The route between master_host and h0 already exists",)),
    ("route-to-itself-in-Floyd-zone", leaf(L, route("h0", "h0", "l0"), routing="Floyd"),
     ("The route between h0 and h0 already exists. You should not declare the reverse path as symmetrical.",
      "its own twin")),
    ("route-to-itself-in-Dijkstra-zone", leaf(L, route("h0", "h0", "l0"), routing="Dijkstra"), (SEGFAULT,)),
    ("route-twice-in-Dijkstra-zone", leaf(L, route("master_host", "h0", "l0", mark=""), route("master_host", "h0", "l0"),
                                          routing="Dijkstra"), (SEGFAULT,)),
    ("route-in-Floyd-zone", leaf(L, route("master_host", "h0", "l0"), routing="Floyd"), None),
    ("route-in-Dijkstra-zone", leaf(L, route("master_host", "h0", "l0"), routing="Dijkstra"), None),
    # --- <link_ctn> (Engine::link_by_name, split_duplex_link_by_name)
    ("link_ctn-unknown", leaf(L, '<route src="master_host" dst="h0">', '@<link_ctn id="lx"/>', "</route>"),
     ("Link not found: lx", "<link_ctn id='lx'>")),
    ("link_ctn-up-of-a-plain-link", leaf(L, '<route src="master_host" dst="h0">', '@<link_ctn id="l0" direction="UP"/>',
                                         "</route>"), ("Link not found: l0", "needs a SPLITDUPLEX link")),
    ("link_ctn-split-link-without-direction", leaf(SPLIT, '<route src="master_host" dst="h0">', '@<link_ctn id="l0"/>',
                                                   "</route>"), ("Link not found: l0", "needs direction")),
    ("link_ctn-split-link-half", leaf(SPLIT, route("master_host", "h0", "l0_UP")), None),
    ("link_ctn-split-link-up", leaf(SPLIT, '<route src="master_host" dst="h0"><link_ctn id="l0" direction="UP"/></route>'),
     None),
    ("link_ctn-loopback", leaf(route("master_host", "h0", "__loopback__")), None),
    ("link_ctn-link-of-another-zone", two(H1, route("h0", "h1", "lz"), z1=(M, '<link id="lz" bandwidth="1GBps" '
                                                                              'latency="0"/>')), None),
]


@pytest.mark.parametrize("case, expected", [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_platform_build_as_real_batsim(tmp_path: Path, case: tuple[str, int | None], expected: tuple | None) -> None:
    # recorded on real Batsim 4.2.1, 2026-11-24 (module docstring)
    xml, line = case
    p = tmp_path / "p.xml"
    p.write_text(xml)
    if expected is None:
        assert read_platform(p).compute  # read, as Batsim read it
        return
    with pytest.raises(PlatformError) as err:
        read_platform(p)
    message = str(err.value)
    assert message.startswith(f"{p}:{line}: " if line else f"{p}: "), message
    assert "\n" not in message
    assert "real Batsim 4.2.1" in message
    for w in expected:
        assert w in message, (w, message)


def test_every_case_marks_its_element() -> None:
    # a case refused while SimGrid builds the platform names the line of its element (marked @);
    # aborts at t = 0 (the master host's zone) have none
    for name, (_, line), expected in CASES:
        if expected is not None:
            at_start = expected[0] == EMPTY_ZONE or "no <route> names it" in expected
            assert (line is None) == at_start, name


def test_run_refuses_it_in_one_line_before_touching_the_output(tmp_path: Path, capsys) -> None:
    # recorded on real Batsim 4.2.1, 2026-11-24: "[0.000000] ./src/surf/sg_platf.cpp:529: [root/CRITICAL] Not a
    # valid model!", exit status 1 after the abort, no output
    p = tmp_path / "p.xml"
    p.write_text(plat(zone(""), M, H, END)[0])
    w = tmp_path / "w.json"
    w.write_text(json.dumps(WORKLOAD))
    out = tmp_path / "out"
    code = main(["run", "--policy", "fcfs", "-p", str(p), "-w", str(w), "-o", str(out), "--no-progress"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert err == [f"gridsched: error: {p}:4: zone 'AS0': routing='' is not a routing model of SimGrid 3.32 (Cluster, "
                   "Dijkstra, DijkstraCache, Floyd, Full, None, Vivaldi, Wifi, in any case): real Batsim 4.2.1 aborts "
                   "(\"Not a valid model!\")"]
    assert not out.exists()


def test_the_routing_models() -> None:
    # SimGrid 3.32's sg_platf_create_zone: these eight names, compared with strcasecmp
    assert ROUTING_MODELS == ("Cluster", "Dijkstra", "DijkstraCache", "Floyd", "Full", "None", "Vivaldi", "Wifi")
    assert routing_model("dijkstraCACHE") == "DijkstraCache" and routing_model("full") == "Full"
    assert routing_model("") is None and routing_model(" Full") is None and routing_model("ClusterTorus") is None


def test_values_read_as_simgrid_reads_them(tmp_path: Path) -> None:
    # real Batsim 4.2.1 ran these (CASES: core-2x-1.5-+2, pstate-1.0-and-0.9, radical-1abc-+2-spaces,
    # speed-kf-megaflops-hex-unitless); std::stoi reads the leading integer, strtod hexadecimal (0x10f is
    # 271, no unit), and SimGrid's tables give kf = 1e3 f, megaflops = 1e6 f, a number without unit flops
    spec = read_platform(tmp_path / "a.xml", text=leaf('<host id="h1" speed="1Gf" core="2x"/>',
                                                       '<host id="h2" speed="1Gf" core="1.5"/>',
                                                       '<host id="h3" speed="1Gf, 2Gf" core="+2" pstate="1.0"/>',
                                                       '<host id="h4" speed="1kf, 1megaflops, 0x10f, 1e3"/>')[0])
    hosts = {h.name: h for h in spec.compute}
    assert [hosts[n].cores for n in ("h1", "h2", "h3")] == [2, 1, 2]
    assert hosts["h3"].pstate == 1
    assert hosts["h4"].speeds == [1e3, 1e6, 271.0, 1e3]
    spec = read_platform(tmp_path / "c.xml", text=with_cluster(cluster(radical="1abc,+2, 3- 4"))[0])
    assert [h.name for h in spec.compute] == ["n1", "n2", "n3", "n4"]


FULL_LOOPBACK = ROOT / "tests" / "fixtures" / "batsim_full_loopback"


@pytest.mark.parametrize("case", ["tie", "same_end", "late"])
def test_routing_full_in_lower_case_is_a_full_zone(tmp_path: Path, case: str) -> None:
    # recorded on real Batsim 4.2.1, 2026-11-24: fixtures/batsim_full_loopback/platform.xml with
    # routing="full" gives out_jobs.csv and out_machine_states.csv byte-identical to routing="Full"'s
    # (SimGrid compares routing names without case: the master host's loopback times Batsim's messages)
    p = tmp_path / "p.xml"
    p.write_text((FULL_LOOPBACK / "platform.xml").read_text().replace('routing="Full"', 'routing="full"'))
    assert read_platform(p).master_loopback
    simulate(p, [FULL_LOOPBACK / f"{case}.json"], FCFS(), energy=True, export_prefix=tmp_path / "out_")
    for name in ("jobs", "machine_states"):
        assert (tmp_path / f"out_{name}.csv").read_text() == (FULL_LOOPBACK / f"{case}_{name}.csv").read_text(), name


def _local_platforms() -> list[Path]:
    return sorted((ROOT / "platforms").glob("*.xml")) + sorted((ROOT / "tests" / "fixtures").rglob("*.xml"))


@pytest.mark.parametrize("path", _local_platforms(), ids=lambda p: str(p.relative_to(ROOT)))
def test_project_platforms_pass(path: Path) -> None:
    # real Batsim 4.2.1 builds every platform of the project (platforms/, the test fixtures)
    data = path.read_bytes()
    check_build(ET.fromstring(data.lstrip()), data, str(path), 250_000)


@pytest.mark.skipif(not (SHARED / "data").is_dir(), reason="../shared is absent")
def test_shared_platforms_pass() -> None:
    # the shared Batsim examples and Batsim 4.2.1's own inputs: SimGrid builds them all
    found = sorted((SHARED / "data").rglob("*.xml")) + sorted((SHARED / "batsim-4.2.1" / "inputs").glob("*.xml"))
    assert found
    for path in found:
        data = path.read_bytes()
        root = ET.fromstring(data.lstrip())
        if root.tag == "platform":
            check_build(root, data, str(path), 250_000)


# ------------------------------------------------------------------ recording on real Batsim
def _record() -> int:  # pragma: no cover - needs a batsim binary on PATH
    """Run every case of :data:`CASES` on real Batsim (``batsim`` on PATH) with ``fcfs`` and the
    one-job workload; print the cases whose outcome differs from the table."""
    from schedulers.batsim import runner
    from schedulers.batsim.runner import run_with_batsim

    class Server(runner._ServerThread):   # fcfs without the platform file (the engine's reader refuses these)
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args[:5], None)

    runner._ServerThread = Server
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp) / "w.json"
        w.write_text(json.dumps(WORKLOAD))
        for name, (xml, _), expected in CASES:
            folder = Path(tmp) / re.sub(r"[^A-Za-z0-9_.-]", "_", name)
            folder.mkdir()
            p = folder / "p.xml"
            p.write_text(xml)
            res = run_with_batsim(p, w, "fcfs", None, folder / "out_", energy=False, socket=None, timeout=60,
                                  connect_timeout=10, check=False)
            log = Path(res.log_path).read_text(errors="replace")
            if expected is None:
                ok = res.returncode == 0 and "success=1" in log
            else:
                ok = res.returncode != 0 and expected[0] in log
            if not ok:
                bad += 1
                tail = " | ".join(line for line in log.splitlines() if "CRITICAL" in line or "rror" in line)[:400]
                print(f"DIFFERS {name}: rc={res.returncode} {tail}")
    print(f"{len(CASES)} cases, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(_record())
