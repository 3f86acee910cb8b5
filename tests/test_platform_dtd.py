"""A platform's structure is checked as SimGrid 3.32's parser checks it (simgrid.dtd 4.1;
:mod:`schedulers.engine.platform_dtd`): what real Batsim 4.2.1 refuses at start, the engine
refuses, with one line naming the file, the line, the element and what is wrong.

Every outcome below was recorded on real Batsim 4.2.1 (SimGrid 3.32, release build), 2026-11-24:
each platform of :data:`CASES` was given to ``batsim -p`` (with a one-job workload): ``None``
means Batsim read it and waited for its scheduler; otherwise the tuple holds the line Batsim's
"Parse error at p.xml:LINE" named (or the line of the element SimGrid aborted on) and a fragment
of Batsim's own message, which the engine's message quotes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from schedulers.cli import main
from schedulers.engine.platform import read_platform
from schedulers.engine.platform_dtd import ELEMENTS, check_structure
from schedulers.inputs.errors import PlatformError

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
HEAD = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
M = '<host id="master_host" speed="100Mf"/>'
H = '<host id="h0" speed="100Mf"/>'
L = '<link id="l0" bandwidth="1GBps" latency="0"/>'
BB = '<backbone id="bb" bandwidth="1GBps" latency="0"/>'
PROP = '<prop id="a" value="b"/>'
ROUTE = '<route src="master_host" dst="h0"><link_ctn id="l0"/></route>'
CLUSTER = "<cluster id='c' prefix='c' suffix='' radical='0-1' speed='1Gf' bw='1GBps' lat='0'"
NO_SUFFIX = CLUSTER.replace(" suffix=''", "")


def trace(n: int = 1) -> str:
    return f'<trace id="t{n}" periodicity="1">0 1\n</trace>'


def leaf(body: str, top: str = "", tail: str = "", version: str = 'version="4.1"', tag: str = "zone") -> str:
    """A platform: ``top``, then one zone (line 4) holding ``body`` (line 5), then ``tail``."""
    return f'{HEAD}<platform {version}>{top}\n<{tag} id="AS0" routing="Full">\n{body}\n</{tag}>{tail}\n</platform>'


def zones(body: str, tag: str = "zone") -> str:
    """A platform whose root zone (line 4) holds ``body`` on line 5, then two sub-zones (lines 6,
    7: master_host, h0 in z1; h1 in z2), then the link l0 (line 8): what follows ``body``."""
    return (f'{HEAD}<platform version="4.1">\n<{tag} id="AS0" routing="Full">\n{body}\n'
            f'<zone id="z1" routing="Full">{M}{H}</zone>\n<zone id="z2" routing="Full"><host id="h1" speed="1Mf"/></zone>\n'
            f'{L}\n</{tag}>\n</platform>')


def sub(after: str, tag: str = "zone") -> str:
    """The two sub-zones of :func:`zones` (lines 5, 6), the link (line 7), then ``after`` (line 8)."""
    return (f'{HEAD}<platform version="4.1">\n<{tag} id="AS0" routing="Full">\n'
            f'<zone id="z1" routing="Full">{M}{H}</zone>\n<zone id="z2" routing="Full"><host id="h1" speed="1Mf"/></zone>\n'
            f'{L}\n{after}\n</{tag}>\n</platform>')


ZROUTE = '<zoneRoute src="z1" dst="z2" gw_src="master_host" gw_dst="h1"><link_ctn id="l0"/></zoneRoute>'

#: (case, platform, None when real Batsim 4.2.1 reads it, else (line, Batsim's words, more words
#: the engine's message holds)); recorded on real Batsim 4.2.1, 2026-11-24.
CASES: list[tuple[str, str, tuple[str, ...] | None]] = [
    ("valid", leaf(M + H), None),
    ("prop-first-in-zone", leaf(PROP + M + H), None),
    ("prop-after-host", leaf(M + PROP + H), (5, "Starting tag <prop> is not allowed here", "<zone id='AS0'>",
                                             "after <host id='master_host'>")),
    ("prop-after-sub-zone", leaf('<zone id="z1" routing="Full">' + M + H + "</zone>" + PROP),
     (5, "Starting tag <prop> is not allowed here", "after <zone id='z1'>")),
    ("prop-in-host", leaf(M + '<host id="h0" speed="100Mf">' + PROP + "</host>"), None),
    ("disk-in-host", leaf(M + '<host id="h0" speed="100Mf"><disk id="d" read_bw="1MBps" write_bw="1MBps"/></host>'),
     None),
    ("host-in-host", leaf(M + '<host id="h0" speed="100Mf"><host id="h1" speed="1Mf"/></host>'),
     (5, "Starting tag <host> is not allowed here", "<host id='h1'> inside <host id='h0'>", "<disk>, <prop>")),
    ("link-in-host", leaf(M + '<host id="h0" speed="100Mf">' + L + "</host>"),
     (5, "Starting tag <link> is not allowed here", "<link id='l0'> inside <host id='h0'>")),
    ("route-after-hosts", leaf(M + H + L + ROUTE), None),
    ("host-after-route", leaf(M + L + '<route src="master_host" dst="master_host"><link_ctn id="l0"/></route>' + H),
     (5, "Starting tag <host> is not allowed here", "after <route src='master_host' dst='master_host'>")),
    ("link-after-route", leaf(M + H + L + ROUTE + '<link id="l1" bandwidth="1GBps" latency="0"/>'),
     (5, "Starting tag <link> is not allowed here")),
    ("zone-after-host", leaf(M + '<zone id="z1" routing="Full">' + H + "</zone>"),
     (5, "Starting tag <zone> is not allowed here", "<zone id='z1'> inside <zone id='AS0'> after <host id='master_host'>")),
    ("host-after-zone", leaf('<zone id="z1" routing="Full">' + H + "</zone>" + M),
     (5, "Starting tag <host> is not allowed here", "<host id='master_host'> inside <zone id='AS0'> after <zone id='z1'>")),
    ("zoneRoute-in-leaf", leaf(M + H + '<zoneRoute src="a" dst="b" gw_src="c" gw_dst="d"/>'),
     (5, "Starting tag <zoneRoute> is not allowed here")),
    ("route-among-zones", zones("").replace(f"{L}\n", f"{L}\n{ROUTE}\n"),
     (9, "Starting tag <route> is not allowed here", "after <link id='l0'>")),
    ("zoneRoute-after-zones", sub(ZROUTE), None),
    ("zoneRoute-then-trace", sub(ZROUTE + trace()), None),
    ("link-after-zoneRoute", sub(ZROUTE + '<link id="l1" bandwidth="1GBps" latency="0"/>'),
     (8, "Starting tag <link> is not allowed here", "after <zoneRoute src='z1' dst='z2'>")),
    ("zone-after-zoneRoute", sub(ZROUTE + '<zone id="z3" routing="Full"/>'),
     (8, "Starting tag <zone> is not allowed here")),
    ("cluster-in-leaf", leaf(M + CLUSTER + "/>"), (5, "Starting tag <cluster> is not allowed here")),
    ("cluster-with-prop", f'{HEAD}<platform version="4.1">\n<zone id="AS0" routing="Full"><zone id="m" routing="Full">{M}'
                          f'</zone>\n{CLUSTER}>{PROP}</cluster>\n</zone></platform>', None),
    ("cluster-with-host", f'{HEAD}<platform version="4.1">\n{CLUSTER}>{H}</cluster>\n</platform>',
     (4, "Starting tag <host> is not allowed here", "a <cluster> only <prop>")),
    ("cluster-with-link", f'{HEAD}<platform version="4.1">\n{CLUSTER}>{L}</cluster>\n</platform>',
     (4, "Starting tag <link> is not allowed here")),
    # SimGrid's parser settles whether a zone holds sub-zones or hosts at its first element after its
    # props, even one both kinds may hold (simgrid.dtd allows these)
    ("zone-link-then-sub-zones", zones(L.replace("l0", "lx")),
     (6, "Starting tag <zone> is not allowed here", "<zone id='z1'> inside <zone id='AS0'> after <link id='lx'>",
      "declare sub-zones before links")),
    ("zone-backbone-then-sub-zones", zones(BB), (6, "Starting tag <zone> is not allowed here")),
    ("zone-prop-link-then-sub-zones", zones(PROP + L.replace("l0", "lx")), (6, "Starting tag <zone> is not allowed here")),
    ("AS-link-then-sub-zones", zones(L.replace("l0", "lx"), tag="AS"), (6, "Starting tag <zone> is not allowed here")),
    ("AS-prop-link-then-sub-zones", zones(PROP + L.replace("l0", "lx"), tag="AS"), None),
    ("zone-trace-then-hosts", leaf(trace() + M + H), (6, "Starting tag <host> is not allowed here", "only <trace>")),
    ("AS-trace-then-hosts", leaf(trace() + M + H, tag="AS"), None),
    ("AS-prop-trace-then-hosts", leaf(PROP + trace() + M + H, tag="AS"),
     (6, "Starting tag <host> is not allowed here")),
    ("zone-hosts-trace-host", leaf(M + trace() + H), None),
    ("AS-hosts-trace-host", leaf(M + trace() + H, tag="AS"), (6, "Starting tag <host> is not allowed here")),
    ("zone-hosts-trace-route", leaf(M + H + L + trace() + ROUTE), None),
    ("zone-sub-zones-trace-zoneRoute", sub(trace() + ZROUTE), (9, "Starting tag <zoneRoute> is not allowed here")),
    ("AS-sub-zones-trace-ASroute", sub(trace() + ZROUTE.replace("zoneRoute", "ASroute"), tag="AS"), None),
    ("AS-sub-zones-trace-trace-ASroute", sub(trace() + trace(2) + ZROUTE.replace("zoneRoute", "ASroute"), tag="AS"),
     (10, "Starting tag <ASroute> is not allowed here")),
    # <platform>: config, then zones, then actors
    ("config-first", leaf(M + H, top='<config id="General"><prop id="path" value="x"/></config>'), None),
    ("config-after-zone", leaf(M + H, tail='\n<config id="General"><prop id="path" value="x"/></config>'),
     (7, "Starting tag <config> is not allowed here", "before")),
    ("config-in-zone", leaf('<config><prop id="path" value="x"/></config>' + M + H),
     (5, "Starting tag <config> is not allowed here", "<config> inside <zone id='AS0'>")),
    ("model_prop-in-config", leaf(M + H, top='<config><model_prop id="a" value="b"/></config>'),
     (3, "Starting tag <model_prop> is not allowed here")),
    ("prop-in-platform", leaf(M + H, top=PROP), (3, "Starting tag <prop> is not allowed here")),
    ("random-before-zone", leaf(M + H, top='<random id="r" min="0" max="1" mean="0.5" std_deviation="0.1"/>'), None),
    ("trace-before-zone", leaf(M + H, top=trace()), None),
    # actors: Batsim registers no actor function (SimGrid aborts at </actor>)
    ("actor-after-zone", leaf(M + H, tail='\n<actor host="h0" function="f"/>'), (7, "Function 'f' not registered",
                                                                                  "<actor function='f'>")),
    ("process-after-zone", leaf(M + H, tail='\n<process host="h0" function="f"/>'), (7, "not registered")),
    # elements the DTD does not define; names are case-sensitive
    ("unknown-in-zone", leaf(M + H + "<foo/>"), (5, "Unexpected character `<': `</zone>' expected", "<foo>")),
    ("unknown-in-host", leaf(M + '<host id="h0" speed="100Mf"><foo/></host>'),
     (5, "Unexpected character `<': `</host>' expected")),
    ("unknown-in-platform", leaf(M + H, top="<foo/>"), (3, "Unexpected character `<': `</platform>' expected")),
    ("Host-capitalised", leaf(M + '<Host id="h0" speed="100Mf"/>'),
     (5, "Unexpected character `<': `</zone>' expected", "did you mean <host>?")),
    ("child-in-prop", leaf(M + '<host id="h0" speed="100Mf"><prop id="a" value="b">' + PROP + "</prop></host>"),
     (5, "Unexpected character `<': `</prop>' expected")),
    ("prop-in-route", leaf(M + H + L + '<route src="master_host" dst="h0">' + PROP + "</route>"),
     (5, "Starting tag <prop> is not allowed here", "only <link_ctn>")),
    ("child-in-trace", leaf(M + H, top='<trace id="t" periodicity="1">' + PROP + "</trace>"),
     (3, "Spurious `<' in character data")),
    # attributes
    ("host-unknown-attribute", leaf(M + '<host id="h0" speed="100Mf" colour="red"/>'),
     (5, "Bad attribute `colour' in `host' element start tag", "<host id='h0'>")),
    ("zone-unknown-attribute", leaf(M + H).replace('routing="Full"', 'routing="Full" foo="x"'),
     (4, "Bad attribute `foo' in `zone' element start tag")),
    ("platform-unknown-attribute", leaf(M + H, version='version="4.1" foo="x"'),
     (3, "Bad attribute `foo' in `platform' element start tag")),
    ("platform-xmlns", leaf(M + H, version='version="4.1" xmlns="http://x"'),
     (3, "Bad attribute `xmlns' in `platform' element start tag")),
    ("host-xml-lang", leaf(M + '<host id="h0" speed="100Mf" xml:lang="en"/>'),
     (5, "Bad attribute `xml:lang' in `host' element start tag")),
    ("prop-key-not-id", leaf(M + '<host id="h0" speed="100Mf"><prop key="a" value="b"/></host>'),
     (5, "Bad attribute `key' in `prop' element start tag")),
    ("disk-unknown-attribute", leaf(M + '<host id="h0" speed="100Mf"><disk id="d" read_bw="1MBps" write_bw="1MBps" '
                                        'size="1"/></host>'), (5, "Bad attribute `size' in `disk' element start tag")),
    ("host-deprecated-attribute", leaf(M + '<host id="h0" speed="100Mf" availability_file=""/>'), None),
    ("host-no-speed", leaf(M + '<host id="h0"/>'), (5, "Required attribute `speed' not set for `host' element")),
    ("host-no-id", leaf(M + '<host speed="1Gf"/>'), (5, "Required attribute `id' not set for `host' element")),
    ("zone-no-routing", leaf(M + H).replace(' routing="Full"', ""),
     (4, "Required attribute `routing' not set for `zone' element")),
    ("zone-no-id", leaf(M + H).replace('id="AS0" ', ""), (4, "Required attribute `id' not set for `zone' element")),
    ("prop-no-value", leaf(M + '<host id="h0" speed="100Mf"><prop id="a"/></host>'),
     (5, "Required attribute `value' not set for `prop' element")),
    ("cluster-no-suffix", f'{HEAD}<platform version="4.1">\n{NO_SUFFIX}/>\n</platform>',
     (4, "Required attribute `suffix' not set for `cluster' element")),
    ("disk-no-read_bw", leaf(M + '<host id="h0" speed="100Mf"><disk id="d" write_bw="1MBps"/></host>'),
     (5, "Required attribute `read_bw' not set for `disk' element")),
    ("link-no-latency", leaf(M + H + '<link id="l0" bandwidth="1GBps"/>'), (5, "cannot parse number")),
    ("link-no-latency-at-its-end-tag", leaf(M + H + '\n<link id="l0" bandwidth="1GBps">\n' + PROP + "\n</link>"),
     (8, "cannot parse number", "<link id='l0'> has no 'latency'")),
    ("link-sharing-policy", leaf(M + H + '<link id="l0" bandwidth="1GBps" sharing_policy="FOO"/>'),
     (5, "Bad attribute `sharing_policy' in `link' element start tag", "'FOO'")),
    ("route-symmetrical-yes", leaf(M + H + L + ROUTE.replace('dst="h0"', 'dst="h0" symmetrical="yes"')), None),
    ("route-symmetrical-Yes", leaf(M + H + L + ROUTE.replace('dst="h0"', 'dst="h0" symmetrical="Yes"')),
     (5, "Bad attribute `symmetrical' in `route' element start tag")),
    ("link_ctn-direction-up", leaf(M + H + L + ROUTE.replace('id="l0"/>', 'id="l0" direction="up"/>')),
     (5, "Bad attribute `direction' in `link_ctn' element start tag")),
    ("cluster-topology", f'{HEAD}<platform version="4.1">\n{CLUSTER} topology="RING"/>\n</platform>',
     (4, "Bad attribute `topology' in `cluster' element start tag")),
    ("trace_connect-kind-POWER", leaf(M + H + trace() + '<trace_connect kind="POWER" trace="t1" element="h0"/>'),
     (6, "Bad attribute `kind' in `trace_connect' element start tag")),
    # text: only in a <trace>
    ("text-in-zone", leaf(M + "hello" + H), (5, "Unexpected character `h'", "text 'hello' inside <zone id='AS0'>")),
    ("text-in-host", leaf(M + '<host id="h0" speed="100Mf">hello</host>'), (5, "Unexpected character `h'")),
    ("text-in-platform", leaf(M + H, top="hello"), (3, "Unexpected character `h'")),
    ("text-in-prop", leaf(M + '<host id="h0" speed="100Mf"><prop id="a" value="b">x</prop></host>'),
     (5, "Unexpected character `x'")),
    ("entity-text-in-host", leaf(M + '<host id="h0" speed="100Mf">&amp;</host>'), (5, "Unexpected character `&'")),
    ("text-in-config", leaf(M + H, top='<config>x<prop id="path" value="x"/></config>'), (3, "Unexpected character `x'")),
    ("blank-cdata-in-zone", leaf(M + "<![CDATA[ ]]>" + H), (5, "Unexpected character `<'", "CDATA")),
    ("blanks-in-prop", leaf(M + '<host id="h0" speed="100Mf"><prop id="a" value="b"> </prop></host>'), None),
    ("comment-in-zone", leaf(M + "<!-- c -->" + H), None),
    ("processing-instruction-in-zone", leaf(M + "<?foo bar?>" + H), None),
    # what SimGrid does at an element
    ("platform-version-missing", leaf(M + H, version=""), (3, "BIG FAT WARNING", "has no version")),
    ("platform-version-3", leaf(M + H, version='version="3"'), (3, "THIS FILE IS TOO OLD")),
    ("platform-version-4", leaf(M + H, version='version="4"'), None),
    ("platform-version-4.104", leaf(M + H, version='version="4.104"'), None),
    ("platform-version-3.996", leaf(M + H, version='version="3.996"'), None),
    ("platform-version-4.1abc", leaf(M + H, version='version="4.1abc"'), None),
    ("platform-version-hex", leaf(M + H, version='version="0x4"'), None),
    ("platform-version-4.15", leaf(M + H, version='version="4.15"'), (3, "THIS FILE COMES FROM THE FUTURE")),
    ("platform-version-4.2", leaf(M + H, version='version="4.2"'), (3, "THIS FILE COMES FROM THE FUTURE")),
    ("platform-version-abc", leaf(M + H, version='version="abc"'), (3, "abc is not a double")),
    ("platform-version-empty", leaf(M + H, version='version=""'), (3, "is not a double")),
    ("AS-for-zone", leaf(M + H, tag="AS"), None),
    ("ASroute", sub(ZROUTE.replace("zoneRoute", "ASroute")), None),
    ("include", leaf(M + H + '<include file="x.xml"/>'), (5, "<include> tag was removed in SimGrid v3.18")),
    ("storage_type", leaf(M + H + '<storage_type id="st" size="1TB"/>'), (5, "<storage_type> tag was removed")),
    ("storage", leaf(M + H + '<storage id="s" typeId="t" attach="h0"/>'), (5, "<storage> tag was removed")),
    ("mount", leaf(M + '<host id="h0" speed="100Mf"><mount storageId="s" name="/"/></host>'),
     (5, "<mount> tag was removed")),
]


@pytest.mark.parametrize("xml, expected", [(x, e) for _, x, e in CASES], ids=[c for c, _, _ in CASES])
def test_platform_structure_as_real_batsim(tmp_path: Path, xml: str, expected: tuple | None) -> None:
    # recorded on real Batsim 4.2.1, 2026-11-24 (module docstring)
    p = tmp_path / "p.xml"
    p.write_text(xml)
    if expected is None:
        assert read_platform(p).compute  # read, as Batsim read it
        return
    line, *words = expected
    with pytest.raises(PlatformError) as err:
        read_platform(p)
    message = str(err.value)
    assert message.startswith(f"{p}:{line}: "), message
    assert "\n" not in message
    for w in words:
        assert w in message, (w, message)


def test_run_refuses_it_in_one_line_before_touching_the_output(tmp_path: Path, capsys) -> None:
    # recorded on real Batsim 4.2.1, 2026-11-24: "Parse error at p.xml:5: Invalid XML (XML input line 5,
    # state 156): Starting tag <prop> is not allowed here."
    p = tmp_path / "p.xml"
    p.write_text(leaf(M + PROP + H))
    w = tmp_path / "w.json"
    w.write_text('{"nb_res": 1, "jobs": [{"id": "1", "subtime": 0, "walltime": 10, "res": 1, "profile": "d"}], '
                 '"profiles": {"d": {"type": "delay", "delay": 5}}}')
    out = tmp_path / "out"
    code = main(["run", "--policy", "fcfs", "-p", str(p), "-w", str(w), "-o", str(out), "--no-progress"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert err == [f"gridsched: error: {p}:5: <prop id='a'> inside <zone id='AS0'> after <host id='master_host'>: "
                   "SimGrid 3.32's parser accepts there only <backbone>, <bypassRoute>, <cabinet>, <host>, <host_link>, "
                   "<link>, <route>, <router>, <trace>, <trace_connect> (a zone holds either sub-zones (with clusters, "
                   "peers and links, then <zoneRoute>) or hosts (with routers and links, then <route>); SimGrid's "
                   "parser takes a zone whose first element after its <prop> is a host, a link, a backbone or a cabinet "
                   "for a zone of hosts: declare sub-zones before links); real Batsim 4.2.1 aborts (\"Starting tag "
                   "<prop> is not allowed here\")"]
    assert not out.exists()


def test_line_counts_blank_lines_before_the_declaration(tmp_path: Path) -> None:
    # SimGrid reads blank lines before <?xml (Batsim's cluster_energy_128.xml starts with one) and
    # counts them: recorded on real Batsim 4.2.1, 2026-11-24 (prop after host: line 7 with 2 blank lines)
    p = tmp_path / "p.xml"
    p.write_text("\n\n" + leaf(M + PROP + H))
    with pytest.raises(PlatformError, match=r"p\.xml:7: <prop id='a'> inside <zone id='AS0'>"):
        read_platform(p)


def test_first_error_in_document_order(tmp_path: Path) -> None:
    # SimGrid's parser stops at the first error: the unknown attribute of line 5 before the text of
    # line 6 and the misplaced <prop> of line 7; then the text (recorded on real Batsim 4.2.1,
    # 2026-11-24: "p.xml:5: ... Bad attribute `colour'", then "p.xml:6: ... Unexpected character `h'")
    p = tmp_path / "p.xml"
    p.write_text(leaf(M + '<host id="h0" speed="1f" colour="red"/>\nhello\n' + PROP))
    with pytest.raises(PlatformError, match=r"p\.xml:5: <host id='h0'>: attribute 'colour'"):
        read_platform(p)
    p.write_text(leaf(M + '<host id="h0" speed="1f"/>\nhello\n' + PROP))
    with pytest.raises(PlatformError, match=r"p\.xml:6: text 'hello'"):
        read_platform(p)


def test_cdata_in_a_trace_is_read(tmp_path: Path) -> None:
    # <trace> is #PCDATA: a CDATA section there is text (recorded on real Batsim 4.2.1, 2026-11-24: read);
    # elsewhere it is refused (blank-cdata-in-zone)
    p = tmp_path / "p.xml"
    p.write_text(leaf(M + H, top='<trace id="t" periodicity="1"><![CDATA[0 1]]>\n</trace>'))
    assert [h.name for h in read_platform(p).compute] == ["h0"]


def test_in_memory_platform_without_line(tmp_path: Path) -> None:
    # platforms built in memory (text=...) are checked too; the name given is the one in the message
    with pytest.raises(PlatformError, match=r"^<synthetic>:5: <zone id='z1'> inside <zone id='AS0'> after <host"):
        read_platform("<synthetic>", text=leaf(M + '<zone id="z1" routing="Full">' + H + "</zone>"))


def test_every_element_of_the_dtd_is_known() -> None:
    # the 32 elements of simgrid.dtd 4.1 (SimGrid 3.32, src/surf/xml/simgrid.dtd)
    assert ELEMENTS == {
        "platform", "include", "trace", "random", "trace_connect", "AS", "zone", "storage_type", "storage", "mount",
        "host", "disk", "host_link", "cluster", "cabinet", "peer", "router", "backbone", "link", "route", "ASroute",
        "bypassASroute", "zoneRoute", "link_ctn", "bypassRoute", "bypassZoneRoute", "process", "actor", "argument",
        "config", "prop", "model_prop"}


def _shipped() -> list[Path]:
    found = sorted((ROOT / "platforms").glob("*.xml")) + sorted((ROOT / "tests" / "fixtures").rglob("*.xml"))
    for folder in ("data/batsim-examples", "data/traces/g5k-lyon-gridgym/platforms", "batsim-4.2.1/inputs"):
        found += sorted((SHARED / folder).glob("*.xml"))
    return found


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_shipped_platforms_pass(path: Path) -> None:
    # the project's platforms, the test fixtures and the shared ones (when ../shared is there): real
    # Batsim 4.2.1's parser reads them all (some are refused later, for their <config> or pstates)
    data = path.read_bytes()
    check_structure(ET.fromstring(data.lstrip()), data, str(path))


@pytest.mark.skipif(not (SHARED / "data" / "batsim-examples").is_dir(), reason="../shared is absent")
@pytest.mark.parametrize("name, reason", [
    ("energy_platform_homogeneous_no_net.xml", "<config> key 'network/coordinates'"),
    ("graphene.xml", "<config> key 'network/TCP_gamma'"),
])
def test_shared_platforms_refused_for_their_own_reasons(name: str, reason: str) -> None:
    # refused before this check existed, for these reasons; the structure check lets them through
    path = SHARED / "data" / "batsim-examples" / name
    with pytest.raises(PlatformError, match="^" + re.escape(f"{path}: ") + ".*" + re.escape(reason)):
        read_platform(path)


@pytest.mark.skipif(not (SHARED / "data" / "batsim-examples").is_dir(), reason="../shared is absent")
def test_power_properties_that_only_the_energy_plugin_refuses(tmp_path: Path) -> None:
    # energy_platform.xml: Venus has 7 speeds and 6 wattage_per_state entries, Earth 9 and 6. Real
    # Batsim 4.2.1 runs it without -E (its out_jobs.csv on 30 jobs under EASY equals the engine's);
    # with -E SimGrid's energy plugin aborts as it creates the hosts, in file order: "Invalid XML
    # file. Found 6 energetic profiles for 7 pstates" (Venus, before Earth in the file; recorded
    # with batsim -p energy_platform.xml -w w.json -E: status 134)
    from schedulers.cli import main
    from schedulers.engine.platform import check_compute_speeds

    path = SHARED / "data" / "batsim-examples" / "energy_platform.xml"
    spec = read_platform(path)
    assert [h.name for h in spec.compute if h.power is None] == ["Earth", "Venus"]
    want = (f"{path}: host 'Venus' has 7 pstates in 'speed' but 6 entries in wattage_per_state "
            "(SimGrid's energy plugin aborts with -E)")
    check_compute_speeds(spec, False)
    with pytest.raises(PlatformError) as err:
        check_compute_speeds(spec, True)
    assert str(err.value) == want
    wl = tmp_path / "w.json"
    wl.write_text('{"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "walltime": 10, "res": 4, "profile": "d"}], '
                  '"profiles": {"d": {"type": "delay", "delay": 5}}}')
    assert main(["run", "--policy", "fcfs", "-p", str(path), "-w", str(wl), "-o", str(tmp_path / "a"),
                 "--no-progress"]) == 0
    assert (tmp_path / "a" / "out_jobs.csv").read_text().count("COMPLETED_SUCCESSFULLY") == 1
    assert main(["run", "--policy", "fcfs", "-p", str(path), "-w", str(wl), "-o", str(tmp_path / "b"), "-E",
                 "--no-progress"]) == 2
