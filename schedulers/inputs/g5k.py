"""Grid'5000 nodes -> SimGrid platforms for Batsim 4.x and gridsched's embedded engine.

Three steps, all standard library:

1. :func:`load_g5k_nodes` reads node descriptions of Grid'5000's *reference API* (one JSON object per
   node, as stored in the reference repository ``grid5000/reference-repository``, layout
   ``<site>/clusters/<cluster>/nodes/<node>.json``) into :class:`G5KNode` records.
   :func:`fetch_g5k_nodes` gets the same objects from the live API
   (``https://api.grid5000.fr/stable/sites/<site>/clusters/<cluster>/nodes``), which needs a
   Grid'5000 account; the tests only call it with ``urlopen`` replaced (no network there).
2. :class:`PowerModel` holds the power figures of every node: Idle / OneCore / AllCores / Off watts
   and the duration and power of the switch-off and switch-on transitions.
3. :func:`write_simgrid_platform` writes a SimGrid platform (XML, DTD 4.1) with one host per node.
   :func:`build_site_platform` chains the three for one site of a reference snapshot.

Pstate layout of every compute host (``with_sleep=True``; constants below):

=====  ==================  =========================================  =======================
index  role                speed (per core, as SimGrid's ``speed``)   ``wattage_per_state``
=====  ==================  =========================================  =======================
0      computation         node GFlops / cores, in ``Gf``             Idle:Epsilon:AllCores
1      sleep (node off)    ``1e-9Mf`` (as in Batsim's examples)       Off:Off:Off
2      virtual switch-off  1 / switch_off_s flop/s                    P_off:P_off:P_off
3      virtual switch-on   1 / switch_on_s flop/s                     P_on:P_on:P_on
=====  ==================  =========================================  =======================

Each compute host also carries ``watt_per_state``, the same pstates as ``Idle:OneCore:AllCores``
(SimGrid's spelling before 3.24), for batsim-py 1.0.5, which reads no other name
(:meth:`PowerModel.watt_per_state`); SimGrid 3.32 and the embedded engine ignore it.

with ``sleep_pstates="1:2:3"``. Batsim switches a host off by moving it to pstate 2, computing
exactly 1 flop there (so the switch lasts switch_off_s seconds at P_off watts), then to pstate 1;
switching on goes through pstate 3 the same way. SimGrid's host-energy plugin reads
``wattage_per_state`` per pstate as ``Idle:Epsilon:AllCores`` since SimGrid 3.24 (Epsilon = power
with all cores at a near-zero load); :meth:`PowerModel.epsilon` converts the classic OneCore figure
with SimGrid's own formula.

Power figures: Idle 100 W / OneCore 120 W / AllCores 200 W / Off 10 W are the example of SimGrid's
host-energy documentation, used by the green-heuristic paper (Batsim simulation of Nantes econome)
-- not Grid'5000 measurements. The paper gives no switch times; the defaults (6.1 s at
100.99672131147543 W off, 151.52 s at 125.1743848996832 W on) are those of Batsim's example platform
``cluster_energy_128.xml`` and are assumptions for these clusters.

Network and zones: none is modelled (compute-only, like Batsim's ``*_no_net*`` platforms). Batsim
runs SimGrid's ``ptask_L07`` host model and sends a 1-byte message from each job's first host to
``master_host``. With ``zones="single"`` every host sits in one ``routing="Full"`` zone with no link
and no route: the empty routes make those messages instantaneous. With ``zones="cluster"`` (one zone
per cluster) SimGrid 3.32 can only route across zones through gateways and a non-empty
``zoneRoute`` ("Bad gateways" / "Empty route ... forbidden" otherwise; a Vivaldi parent zone would
need coordinates for the child zones themselves), so the zones are joined through one virtual
FATPIPE link of 1 EBps and 0 s latency (a 1-byte message takes 1e-18 s). Both layouts were run on
SimGrid 3.32 (Debian's python3-simgrid) with ``ptask_L07`` and the host-energy plugin.

Errors: malformed or incomplete JSON raises :class:`G5KDataError` (a ``ValueError`` through
:class:`~schedulers.inputs.errors.PlatformError`) naming the file and the node or cluster.
"""

from __future__ import annotations

import base64
import math
import re
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from os import PathLike
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from .errors import PlatformError
from .jsonfile import loads_strict

__all__ = [
    "COMPUTE_PSTATE",
    "DEFAULT_API_URL",
    "G5KDataError",
    "G5KNode",
    "MASTER_HOST",
    "PowerModel",
    "SLEEP_PSTATE",
    "SLEEP_PSTATE_SPEED",
    "SWITCH_OFF_PSTATE",
    "SWITCH_ON_PSTATE",
    "build_site_platform",
    "fetch_g5k_nodes",
    "load_g5k_nodes",
    "node_from_json",
    "write_simgrid_platform",
]

#: Pstate indexes of every compute host written by :func:`write_simgrid_platform`.
COMPUTE_PSTATE = 0
SLEEP_PSTATE = 1
SWITCH_OFF_PSTATE = 2
SWITCH_ON_PSTATE = 3

#: Speed of the sleep pstate (0.001 flop/s), written as Batsim's example platforms write it.
SLEEP_PSTATE_SPEED = "1e-9Mf"

#: Batsim's default master host name (``--master-host``); it runs Batsim's own actors, not jobs.
MASTER_HOST = "master_host"

#: Root of Grid'5000's reference API (stable version).
DEFAULT_API_URL = "https://api.grid5000.fr/stable"

#: Bandwidth of the one zero-latency FATPIPE link that ``zones="cluster"`` needs (see the XML comment).
VIRTUAL_LINK_BANDWIDTH = "1EBps"
VIRTUAL_LINK_ID = "g5k_virtual_interconnect"
MASTER_ZONE = "master"

_ZONE_MODES = ("cluster", "single")


class G5KDataError(PlatformError):
    """Grid'5000 reference data is missing, malformed or inconsistent.

    The message names the file (or URL) and the node or cluster concerned.
    """


# --------------------------------------------------------------------------------------------
# Nodes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class G5KNode:
    """One Grid'5000 node as described by the reference API.

    Attributes:
        site: site uid, e.g. ``"nantes"``.
        cluster: cluster uid, e.g. ``"econome"``.
        name: node uid and SimGrid host name, e.g. ``"econome-1"``.
        cores: physical cores of the whole node (``architecture.nb_cores``; 16 for econome's
            2 x 8-core Xeon E5-2660), hyper-threads excluded.
        gflops: node performance in GFlops as given (``performance.node_flops`` / 1e9; 207.4 for
            econome in the 2020-03-31 data).
        clock_ghz: nominal clock (``processor.clock_speed`` / 1e9), GHz.
        memory_gib: RAM (``main_memory.ram_size`` / 2**30), GiB.
        processor: processor model (``processor.other_description``, else ``model version``).
        cpus: processor sockets (``architecture.nb_procs``), 0 when absent.
        core_gflops: single-core performance in GFlops as given (``performance.core_flops`` / 1e9),
            0.0 when absent. Not used for the platform: the node figure divided by the cores is.
    """

    site: str
    cluster: str
    name: str
    cores: int
    gflops: float
    clock_ghz: float
    memory_gib: float
    processor: str
    cpus: int = 0
    core_gflops: float = 0.0

    @property
    def core_speed_gflops(self) -> float:
        """Per-core speed written in SimGrid's ``speed``: ``gflops / cores``, in GFlops.

        Divided in decimal and rounded once, so that 408.9 / 24 gives 17.0375 (not 17.037499999999998).
        """
        return float(Decimal(repr(self.gflops)) / self.cores)

    @property
    def core_speed_flops(self) -> float:
        """Per-core speed in flop/s (``gflops / cores * 1e9``)."""
        return float(Decimal(repr(self.gflops)) * 10**9 / self.cores)


def _natural_key(text: str) -> tuple[Any, ...]:
    """Sort key putting ``econome-2`` before ``econome-10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def _node_sort_key(node: G5KNode) -> tuple[Any, ...]:
    return (node.site, node.cluster, _natural_key(node.name))


def _field(data: dict[str, Any], dotted: str, where: str) -> Any:
    value: Any = data
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value or value[key] is None:
            raise G5KDataError(f"{where}: missing field {dotted!r}")
        value = value[key]
    return value


def _positive_number(data: dict[str, Any], dotted: str, where: str) -> float:
    value = _field(data, dotted, where)
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not is_number or not (math.isfinite(value) and value > 0):
        raise G5KDataError(f"{where}: field {dotted!r} must be a positive number, got {value!r}")
    return float(value)


def _optional_number(data: dict[str, Any], dotted: str) -> float:
    value: Any = data
    for key in dotted.split("."):
        if not isinstance(value, dict) or value.get(key) is None:
            return 0.0
        value = value[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(value)


def _cluster_of_uid(uid: str) -> str | None:
    match = re.fullmatch(r"(.+)-\d+", uid)
    return match.group(1) if match else None


def _site_of_node(data: dict[str, Any]) -> str | None:
    """Site uid from a network address ``<node>.<site>.grid5000.fr``, if any."""
    for adapter in data.get("network_adapters") or []:
        address = adapter.get("network_address") if isinstance(adapter, dict) else None
        if isinstance(address, str):
            parts = address.split(".")
            if len(parts) >= 4 and parts[-2:] == ["grid5000", "fr"] and parts[0] == data.get("uid"):
                return parts[-3]
    return None


def node_from_json(data: Any, *, site: str | None = None, cluster: str | None = None,
                   source: str = "<json>") -> G5KNode:
    """Build a :class:`G5KNode` from one node object of the reference API.

    Args:
        data: the parsed JSON object of one node (``uid``, ``architecture``, ``performance``,
            ``processor``, ``main_memory``, ...).
        site: site uid; when None, taken from the node's ``<uid>.<site>.grid5000.fr`` address.
        cluster: cluster uid; when None, the uid without its ``-<number>`` suffix.
        source: file or URL named in error messages.

    Raises:
        G5KDataError: a required field is missing or not a positive number, or the site or
            cluster cannot be determined. The message names ``source`` and the node.
    """
    if not isinstance(data, dict):
        raise G5KDataError(f"{source}: a node description must be a JSON object, got {type(data).__name__}")
    uid = data.get("uid")
    if not isinstance(uid, str) or not uid:
        raise G5KDataError(f"{source}: node without a string 'uid'")
    if data.get("type", "node") != "node":
        raise G5KDataError(f"{source}: node {uid}: 'type' is {data.get('type')!r}, expected 'node'")
    where = f"{source}: node {uid}"
    site = site or _site_of_node(data)
    if not site:
        raise G5KDataError(f"{where}: cannot tell its site (pass site=...)")
    cluster = cluster or _cluster_of_uid(uid)
    if not cluster:
        raise G5KDataError(f"{where}: cannot tell its cluster from the uid (pass cluster=...)")
    cores = _positive_number(data, "architecture.nb_cores", where)
    if cores != int(cores):
        raise G5KDataError(f"{where}: field 'architecture.nb_cores' must be an integer, got {cores!r}")
    node_flops = _positive_number(data, "performance.node_flops", where)
    clock = _positive_number(data, "processor.clock_speed", where)
    ram = _positive_number(data, "main_memory.ram_size", where)
    processor = data.get("processor") or {}
    model = processor.get("other_description") if isinstance(processor, dict) else None
    if not isinstance(model, str) or not model.strip():
        parts = [processor.get(k) for k in ("model", "version")] if isinstance(processor, dict) else []
        model = " ".join(p for p in parts if isinstance(p, str) and p)
    if not model:
        raise G5KDataError(f"{where}: missing field 'processor.other_description' (or 'processor.model')")
    return G5KNode(
        site=site,
        cluster=cluster,
        name=uid,
        cores=int(cores),
        gflops=node_flops / 1e9,
        clock_ghz=clock / 1e9,
        memory_gib=ram / 2**30,
        processor=model.strip(),
        cpus=int(_optional_number(data, "architecture.nb_procs")),
        core_gflops=_optional_number(data, "performance.core_flops") / 1e9,
    )


def _read_json(path: Path) -> Any:
    from .jsonfile import read_json

    return read_json(path, G5KDataError, "reference-API JSON")   # (strict: see inputs.jsonfile)


def _node_files(root: Path) -> list[tuple[Path, str | None, str | None]]:
    """Node files under ``root`` with the (site, cluster) their place in the layout tells."""
    found: list[tuple[Path, str | None, str | None]] = []
    if (root / "nodes").is_dir():  # a cluster folder
        site = root.parent.parent.name if root.parent.name == "clusters" else None
        found += [(f, site, root.name) for f in (root / "nodes").glob("*.json")]
    elif (root / "clusters").is_dir():  # a site folder
        found += [(f, root.name, f.parent.parent.name) for f in root.glob("clusters/*/nodes/*.json")]
    else:  # a snapshot folder holding sites
        found += [(f, f.parents[3].name, f.parent.parent.name)
                  for f in root.glob("*/clusters/*/nodes/*.json")]
    return found


def load_g5k_nodes(path_or_dir: str | PathLike[str], site: str | None = None,
                   clusters: Iterable[str] | None = None) -> list[G5KNode]:
    """Read Grid'5000 reference-API node descriptions from files.

    ``path_or_dir`` may be:

    * a snapshot folder holding sites (``sites-2020-03-31/``: ``<site>/clusters/<cluster>/nodes/*.json``);
    * a site folder (``.../nantes/``), a cluster folder (``.../clusters/econome/``);
    * one node file (``econome-1.json``), or a saved API collection (a JSON object with ``items``,
      the nodes of one cluster, as :func:`fetch_g5k_nodes` receives; or a JSON list of nodes).

    Args:
        path_or_dir: file or folder, as above.
        site: keep only this site's nodes; also the site of nodes whose place and content do not
            tell it (a lone file without network addresses).
        clusters: keep only these clusters (each must be found).

    Returns:
        The nodes sorted by site, cluster and node number (``econome-2`` before ``econome-10``).

    Raises:
        G5KDataError: nothing found, a requested cluster is absent, a node appears twice, or a node
            lacks a field (the message names the file and the node or cluster).
    """
    root = Path(path_or_dir)
    wanted = None if clusters is None else list(dict.fromkeys(clusters))
    nodes: list[G5KNode] = []
    if root.is_file():
        data = _read_json(root)
        items = data.get("items") if isinstance(data, dict) and "items" in data else data
        def own_site(item: Any) -> str | None:  # the node's own address first, then ``site``
            return (_site_of_node(item) if isinstance(item, dict) else None) or site

        if isinstance(items, list):
            nodes = [node_from_json(item, site=own_site(item), source=f"{root} (items[{i}])")
                     for i, item in enumerate(items)]
        else:
            nodes = [node_from_json(items, site=own_site(items), source=str(root))]
    elif root.is_dir():
        for file, file_site, file_cluster in _node_files(root):
            if site is not None and file_site is not None and file_site != site:
                continue
            if wanted is not None and file_cluster is not None and file_cluster not in wanted:
                continue
            nodes.append(node_from_json(_read_json(file), site=file_site or site, cluster=file_cluster,
                                        source=str(file)))
    else:
        raise G5KDataError(f"{root}: no such file or folder")

    if site is not None:
        nodes = [n for n in nodes if n.site == site]
    if wanted is not None:
        nodes = [n for n in nodes if n.cluster in wanted]
        missing = sorted(set(wanted) - {n.cluster for n in nodes})
        if missing:
            where = f"site {site}" if site else "the data"
            raise G5KDataError(f"{root}: cluster(s) {', '.join(missing)} not found in {where}")
    if not nodes:
        raise G5KDataError(f"{root}: no Grid'5000 node description found"
                           + (f" for site {site}" if site else ""))
    seen: dict[str, G5KNode] = {}
    for node in nodes:
        if node.name in seen:
            raise G5KDataError(f"{root}: node {node.name} appears twice (cluster {node.cluster})")
        seen[node.name] = node
    return sorted(nodes, key=_node_sort_key)


def fetch_g5k_nodes(site: str, cluster: str, *, api_url: str = DEFAULT_API_URL,
                    auth: tuple[str, str] | None = None, version: str | None = None,
                    timeout: float = 60.0) -> list[G5KNode]:
    """Get one cluster's nodes from the live Grid'5000 reference API (needs network access).

    Sends ``GET <api_url>/sites/<site>/clusters/<cluster>/nodes`` (``Accept: application/json``)
    and reads the collection's ``items``. From outside Grid'5000 the API asks for the user's
    Grid'5000 login and password (HTTP Basic); from a Grid'5000 frontend none is needed.
    To keep a copy for :func:`load_g5k_nodes`, save the response body to a ``.json`` file.

    Args:
        site: site uid, e.g. ``"lille"``.
        cluster: cluster uid, e.g. ``"chifflot"``.
        api_url: API root, default ``https://api.grid5000.fr/stable``.
        auth: ``(login, password)`` for HTTP Basic authentication, or None.
        version: optional reference-repository version (commit id, or a Unix time) passed as the
            API's ``version`` query parameter, to get the description as it was then.
        timeout: seconds before giving up on the connection.

    Returns:
        The nodes sorted by node number.

    Raises:
        urllib.error.URLError / HTTPError: network failure, unknown site or cluster (404), bad
            credentials (401).
        G5KDataError: the answer is not a node collection or a node lacks a field.
    """
    quote = urllib.parse.quote
    url = f"{api_url.rstrip('/')}/sites/{quote(site)}/clusters/{quote(cluster)}/nodes"
    if version:
        url += "?" + urllib.parse.urlencode({"version": version})
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
        request.add_header("Authorization", f"Basic {token}")
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (https URL by default)
        try:
            data = loads_strict(response.read().decode("utf-8"), url)   # (strict: see inputs.jsonfile)
        except (UnicodeDecodeError, ValueError) as exc:
            raise G5KDataError(f"{url}: the answer is not JSON ({exc})") from exc
    items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise G5KDataError(f"{url}: expected a collection with 'items', got {type(data).__name__}")
    total = data.get("total") if isinstance(data, dict) else None
    if isinstance(total, int) and total > len(items):
        raise G5KDataError(f"{url}: cluster {cluster}: the API sent {len(items)} of {total} nodes")
    nodes = [node_from_json(item, site=site, cluster=cluster, source=f"{url} (items[{i}])")
             for i, item in enumerate(items)]
    if not nodes:
        raise G5KDataError(f"{url}: cluster {cluster} of site {site} has no node")
    return sorted(nodes, key=_node_sort_key)


# --------------------------------------------------------------------------------------------
# Power
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PowerModel:
    """Power figures (watts) and switch durations (seconds) given to every compute host.

    Attributes:
        idle_w: node on, no load (W). Default 100.
        one_core_w: one core at 100 % load (W). Default 120.
        all_cores_w: every core at 100 % load (W). Default 200.
        off_w: node off / asleep (W), the sleep pstate's power and ``wattage_off``. Default 10.
        switch_off_s: seconds to switch a node off. Default 6.1 (assumption, see below).
        switch_on_s: seconds to boot a node. Default 151.52 (assumption).
        switch_off_w: power while switching off (W). Default 100.99672131147543 (assumption).
        switch_on_w: power while booting (W). Default 125.1743848996832 (assumption).

    Sources: Idle / OneCore / AllCores / Off are SimGrid's host-energy documentation example and
    the values of the green-heuristic paper (Batsim simulation of Nantes econome: Idle 100 W,
    OneCore 120 W, AllCores 200 W, Off 10 W); they are not Grid'5000 measurements. The paper gives
    no switch time or power: the defaults are copied from Batsim's example platform
    ``cluster_energy_128.xml`` (shutdown 6.1 s at 100.9967 W, boot 151.52 s at 125.1744 W) and are
    assumptions for econome and the Lille clusters.

    Raises:
        ValueError: a power is negative or not finite, or a switch duration is not > 0.
    """

    idle_w: float = 100.0
    one_core_w: float = 120.0
    all_cores_w: float = 200.0
    off_w: float = 10.0
    switch_off_s: float = 6.1
    switch_on_s: float = 151.52
    switch_off_w: float = 100.99672131147543
    switch_on_w: float = 125.1743848996832

    def __post_init__(self) -> None:
        for name in ("idle_w", "one_core_w", "all_cores_w", "off_w", "switch_off_w", "switch_on_w"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"PowerModel.{name} must be a finite number >= 0 W, got {value!r}")
        for name in ("switch_off_s", "switch_on_s"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"PowerModel.{name} must be a finite number > 0 s, got {value!r}")

    def epsilon(self, cores: int) -> float:
        """Epsilon power (W) of SimGrid's ``Idle:Epsilon:AllCores`` form for a node of ``cores`` cores.

        SimGrid's conversion of the older OneCore figure (host-energy plugin, SimGrid >= 3.24):
        ``OneCore - (AllCores - OneCore) / (cores - 1)``, and ``AllCores`` when ``cores == 1``.
        E.g. 120 - 80 / 15 = 114.666... W for 16 cores. A host with ``k`` of ``cores`` cores busy
        then draws ``Epsilon + (AllCores - Epsilon) * k / cores``: OneCore for k = 1.

        Raises:
            ValueError: ``cores`` is not an integer >= 1.
        """
        if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
            raise ValueError(f"cores must be an integer >= 1, got {cores!r}")
        if cores == 1:
            return float(self.all_cores_w)
        return self.one_core_w - (self.all_cores_w - self.one_core_w) / (cores - 1)

    def wattage_per_state(self, cores: int, *, with_sleep: bool = True) -> str:
        """The ``wattage_per_state`` value of a host of ``cores`` cores (pstates as in the module doc)."""
        states = [(self.idle_w, self.epsilon(cores), self.all_cores_w)]
        if with_sleep:
            states += [(self.off_w,) * 3, (self.switch_off_w,) * 3, (self.switch_on_w,) * 3]
        return ", ".join(":".join(_num(v) for v in state) for state in states)

    def watt_per_state(self, cores: int, *, with_sleep: bool = True) -> str:
        """The same power states in the older spelling ``watt_per_state`` (``Idle:OneCore:AllCores``
        per pstate, SimGrid before 3.24), the property batsim-py 1.0.5 reads.

        batsim-py (``Converters.json_to_power_states``, ``batsim_py/protocol.py``) takes each
        pstate's first figure as the host's idle power and its second as its power while it
        computes a job; SimGrid 3.32 ignores the property (it reads ``wattage_per_state`` only),
        so the two never disagree for Batsim or the engine. OneCore is the power of one busy core
        -- what SimGrid 3.32 draws from a host that runs one part of a job -- i.e.
        :attr:`one_core_w`, and :attr:`all_cores_w` on a one-core host.

        Raises:
            ValueError: ``cores`` is not an integer >= 1 (:meth:`epsilon`).
        """
        self.epsilon(cores)   # (checks cores)
        one = self.one_core_w if cores > 1 else self.all_cores_w
        states = [(self.idle_w, one, self.all_cores_w)]
        if with_sleep:
            states += [(self.off_w,) * 3, (self.switch_off_w,) * 3, (self.switch_on_w,) * 3]
        return ", ".join(":".join(_num(v) for v in state) for state in states)


# --------------------------------------------------------------------------------------------
# SimGrid platform
# --------------------------------------------------------------------------------------------


def _num(value: float) -> str:
    """Shortest text that reads back as the same float (``repr``), e.g. ``12.9625``, ``100.0``."""
    return repr(float(value))


def _pstate_speeds(node: G5KNode, power: PowerModel, with_sleep: bool) -> str:
    speeds = [f"{_num(node.core_speed_gflops)}Gf"]
    if with_sleep:
        speeds += [SLEEP_PSTATE_SPEED, f"{_num(1.0 / power.switch_off_s)}f",
                   f"{_num(1.0 / power.switch_on_s)}f"]
    return ", ".join(speeds)


def _check_comment(text: str) -> str:
    if "--" in text or text.endswith("-"):
        raise ValueError("an XML comment cannot contain '--' nor end with '-': rephrase the comment")
    return text


def _default_comment(nodes: Sequence[G5KNode], power: PowerModel, zones: str, with_sleep: bool,
                     master_host: bool, source: str) -> str:
    by_cluster: dict[tuple[str, str], list[G5KNode]] = {}
    for node in nodes:
        by_cluster.setdefault((node.site, node.cluster), []).append(node)
    lines = [
        "SimGrid platform (DTD 4.1) of Grid'5000 nodes for Batsim 4.x (SimGrid 3.32) and gridsched's",
        "embedded engine. Generated by schedulers.inputs.g5k.write_simgrid_platform: do not edit by hand.",
        "",
        f"Source: {source}",
        "",
        "Nodes (one SimGrid host each, named after the node; 'core' = physical cores of the node):",
    ]
    for (site, cluster), members in by_cluster.items():
        first = members[0]
        names = f"{members[0].name} ... {members[-1].name}" if len(members) > 1 else first.name
        lines.append(f"  {site}/{cluster}: {len(members)} nodes ({names}): {first.processor},")
        lines.append(f"    {first.cores} cores, {_num(first.clock_ghz)} GHz, {_num(first.memory_gib)} GiB,"
                     f" {_num(first.gflops)} GFlops per node"
                     f" -> {_num(first.core_speed_gflops)} GFlops per core")
        odd = [n.name for n in members if (n.cores, n.gflops) != (first.cores, first.gflops)]
        if odd:
            lines.append(f"    (differing cores or GFlops: {', '.join(odd)}; each host has its own figures)")
    lines += [
        "Speeds are per core (SimGrid's speed is the speed of one core; Batsim runs one task part per",
        "core): the node 'performance' GFlops of the reference data divided by its cores, so that a",
        "node with every core busy delivers the node figure. The single-core 'core_flops' is not used.",
        "",
        "Power (SimGrid host-energy plugin; 'wattage_per_state' is Idle:Epsilon:AllCores per pstate):",
        f"  Idle {_num(power.idle_w)} W, OneCore {_num(power.one_core_w)} W,"
        f" AllCores {_num(power.all_cores_w)} W, Off {_num(power.off_w)} W: the example of SimGrid's",
        "  energy documentation and the values of the green-heuristic paper (Batsim simulation of Nantes",
        "  econome), NOT Grid'5000 measurements. Epsilon = OneCore - (AllCores - OneCore) / (cores - 1),",
        "  SimGrid's conversion (AllCores on a 1-core node):",
        *[f"    {cores} cores: Epsilon = {_num(power.epsilon(cores))} W"
          for cores in sorted({n.cores for n in nodes})],
        "  'watt_per_state' holds the same figures as Idle:OneCore:AllCores (SimGrid's spelling before",
        "  3.24) for batsim-py 1.0.5, which reads that name only (Idle, and OneCore as a busy host's",
        "  power); SimGrid 3.32 and gridsched's engine read 'wattage_per_state' and ignore it.",
    ]
    if with_sleep:
        lines += [
            "Pstates of every compute host:",
            f"  {COMPUTE_PSTATE} computation; {SLEEP_PSTATE} sleep ({SLEEP_PSTATE_SPEED}, Off power);"
            f" {SWITCH_OFF_PSTATE} virtual switch-off; {SWITCH_ON_PSTATE} virtual switch-on;"
            f" sleep_pstates=\"{SLEEP_PSTATE}:{SWITCH_OFF_PSTATE}:{SWITCH_ON_PSTATE}\".",
            "  Batsim computes exactly 1 flop in a virtual pstate, so its speed 1/T flop/s makes the switch",
            "  last T seconds. ASSUMPTIONS (the paper gives no switch figures; these are the values of",
            "  Batsim's example platform cluster_energy_128.xml, not measured on these clusters):",
            f"  switch-off {_num(power.switch_off_s)} s at {_num(power.switch_off_w)} W,"
            f" switch-on {_num(power.switch_on_s)} s at {_num(power.switch_on_w)} W.",
        ]
    else:
        lines.append(f"One computation pstate ({COMPUTE_PSTATE}) per host; no sleep pstates.")
    if master_host:
        lines += [
            f"'{MASTER_HOST}' is Batsim's default master host (it runs Batsim's own actors): not a compute",
            "resource, its wattage is only there because the energy plugin reads one on every host.",
        ]
    lines += [
        "Batsim numbers the compute resources in the lexicographic order of host names, not in file",
        "order: " + ", ".join(sorted(n.name for n in nodes)[:4]) + ", ... are resources 0, 1, 2, 3, ...",
        "",
        "Network: none modelled (compute-only, like Batsim's *_no_net* platforms). Batsim uses SimGrid's",
        "ptask_L07 host model, under which a message between two hosts of one zone that has no route",
        "takes no time; Batsim sends a 1-byte message from each job's first host to the master host.",
    ]
    if zones == "single":
        lines += [
            "All hosts are in one zone with routing=\"Full\" and no link and no route: SimGrid 3.32",
            "accepts it and the empty routes make messages instantaneous. (Batsim's no_net examples use",
            "routing=\"Vivaldi\" with coordinates \"0 0 0\", which behaves the same in one zone.) The",
            "cluster of each host is its 'cluster' property.",
        ]
    else:
        lines += [
            "One zone per cluster (routing=\"Full\", no link inside), plus a zone for the master host,"
            " inside",
            "a top zone with routing=\"Full\". SimGrid 3.32 routes between zones only through gateways and",
            "refuses an empty zoneRoute (\"Empty route ... forbidden\"); without them a message across",
            "zones aborts (\"Bad gateways\"; a Vivaldi top zone needs coordinates for the zones themselves,",
            "which the XML cannot give). So each cluster zone has a router as gateway and the top zone",
            f"links the zones through ONE virtual link '{VIRTUAL_LINK_ID}'"
            f" (FATPIPE, {VIRTUAL_LINK_BANDWIDTH}, 0 s),",
            "a 1-byte message across zones takes 1e-18 s: still no network model (the link has the",
            "property virtual=yes so that readers can ignore it). Checked with SimGrid 3.32.",
        ]
    lines += [
        "",
        "Regenerate: python scripts/make_g5k_platforms.py (reads ../shared, writes platforms/).",
    ]
    return "\n".join(lines)


def _host_xml(node: G5KNode, power: PowerModel, with_sleep: bool, indent: str) -> list[str]:
    attrs = (f"id={quoteattr(node.name)} speed={quoteattr(_pstate_speeds(node, power, with_sleep))}"
             f" core=\"{node.cores}\" pstate=\"{COMPUTE_PSTATE}\"")
    props = [("wattage_per_state", power.wattage_per_state(node.cores, with_sleep=with_sleep)),
             ("wattage_off", _num(power.off_w)),
             ("watt_per_state", power.watt_per_state(node.cores, with_sleep=with_sleep))]
    if with_sleep:
        props.append(("sleep_pstates", f"{SLEEP_PSTATE}:{SWITCH_OFF_PSTATE}:{SWITCH_ON_PSTATE}"))
    props += [("cluster", node.cluster), ("site", node.site)]
    lines = [f"{indent}<host {attrs}>"]
    lines += [f"{indent}  <prop id={quoteattr(k)} value={quoteattr(v)}/>" for k, v in props]
    lines.append(f"{indent}</host>")
    return lines


def _master_xml(power: PowerModel, indent: str) -> list[str]:
    return [
        f"{indent}<host id=\"{MASTER_HOST}\" speed=\"100Mf\">",
        f"{indent}  <prop id=\"wattage_per_state\""
        f" value=\"{_num(power.idle_w)}:{_num(power.all_cores_w)}\"/>",
        f"{indent}  <prop id=\"wattage_off\" value=\"{_num(power.off_w)}\"/>",
        f"{indent}</host>",
    ]


def _gateway(cluster: str) -> str:
    return f"{cluster}_gateway"


def write_simgrid_platform(nodes: Sequence[G5KNode], path: str | PathLike[str], *,
                           power: PowerModel = PowerModel(), zones: str = "cluster", with_sleep: bool = True,
                           master_host: bool = True, comment: str | None = None) -> Path:
    """Write a SimGrid platform (XML, DTD 4.1) with one host per node.

    Each compute host has ``core`` = the node's cores, ``speed`` = per-core speed
    (``gflops / cores`` in ``Gf``) followed, with ``with_sleep``, by the sleep and the two virtual
    transition pstates (see the module doc), ``wattage_per_state`` in the ``Idle:Epsilon:AllCores``
    form per pstate, ``wattage_off``, ``sleep_pstates`` and the properties ``cluster`` and ``site``.
    No network is modelled. The XML comment at the top records the source, power figures,
    assumptions, pstate layout and the routing choice.

    Args:
        nodes: the nodes (host order in the file: as given, grouped by cluster in cluster mode).
        path: output file (parent folders are created).
        power: power figures and switch times of every compute host.
        zones: ``"cluster"``: one zone per cluster (and one for the master host) inside a top zone,
            joined through gateways and one zero-latency virtual link (SimGrid needs a link to route
            across zones); ``"single"``: every host in one zone, without any link.
        with_sleep: add the sleep / switch-off / switch-on pstates and ``sleep_pstates``.
        master_host: add Batsim's ``master_host`` (not a compute resource).
        comment: source description placed first in the comment (e.g. which snapshot); default
            "Grid'5000 reference API node descriptions".

    Returns:
        The path written.

    Raises:
        ValueError: no node, duplicate host names, a node named ``master_host``, a cluster name
            clashing with a host or zone, an unknown ``zones``, or a comment containing ``--``.
    """
    if zones not in _ZONE_MODES:
        raise ValueError(f"zones must be one of {_ZONE_MODES}, got {zones!r}")
    nodes = list(nodes)
    if not nodes:
        raise ValueError("write_simgrid_platform: no node to write")
    names = [n.name for n in nodes]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate host names: {', '.join(duplicates)}")
    if master_host and MASTER_HOST in names:
        raise ValueError(f"a node is named {MASTER_HOST!r}, Batsim's master host")
    sites = sorted({n.site for n in nodes})
    top_id = f"g5k_{sites[0]}" if len(sites) == 1 else "g5k"
    source = _check_comment(comment if comment is not None else "Grid'5000 reference API node descriptions")
    text = _check_comment(_default_comment(nodes, power, zones, with_sleep, master_host, source))

    out = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        "<!--",
        *[f"  {line}".rstrip() for line in text.splitlines()],
        "-->",
        '<platform version="4.1">',
        f"<zone id={quoteattr(top_id)} routing=\"Full\">",
    ]
    if zones == "single":
        if master_host:
            out += _master_xml(power, "  ")
        for node in nodes:
            out += _host_xml(node, power, with_sleep, "  ")
    else:
        clusters: dict[str, list[G5KNode]] = {}
        for node in nodes:
            clusters.setdefault(node.cluster, []).append(node)
        zone_ids = list(clusters)
        reserved = set(names) | {top_id, VIRTUAL_LINK_ID}
        if master_host:
            reserved |= {MASTER_ZONE, MASTER_HOST}
        for cluster in zone_ids:
            if cluster in reserved or _gateway(cluster) in reserved:
                raise ValueError(f"cluster {cluster!r}: its zone or gateway name clashes with a host or zone")
        gateways: list[tuple[str, str]] = []
        if master_host:
            out.append(f"  <zone id=\"{MASTER_ZONE}\" routing=\"Full\">")
            out += _master_xml(power, "    ")
            out.append("  </zone>")
            gateways.append((MASTER_ZONE, MASTER_HOST))
        for cluster in zone_ids:
            out.append(f"  <zone id={quoteattr(cluster)} routing=\"Full\">")
            for node in clusters[cluster]:
                out += _host_xml(node, power, with_sleep, "    ")
            out.append(f"    <router id={quoteattr(_gateway(cluster))}/>")
            out.append("  </zone>")
            gateways.append((cluster, _gateway(cluster)))
        if len(gateways) > 1:
            out.append(f"  <link id=\"{VIRTUAL_LINK_ID}\" bandwidth=\"{VIRTUAL_LINK_BANDWIDTH}\""
                       " latency=\"0s\" sharing_policy=\"FATPIPE\">")
            out.append("    <prop id=\"virtual\" value=\"yes\"/>")
            out.append("  </link>")
            for i, (src, gw_src) in enumerate(gateways):
                for dst, gw_dst in gateways[i + 1:]:
                    out.append(f"  <zoneRoute src={quoteattr(src)} dst={quoteattr(dst)}"
                               f" gw_src={quoteattr(gw_src)} gw_dst={quoteattr(gw_dst)}>"
                               f"<link_ctn id=\"{VIRTUAL_LINK_ID}\"/></zoneRoute>")
    out += ["</zone>", "</platform>", ""]

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(out), encoding="utf-8", newline="\n")
    return target


def build_site_platform(site: str, clusters: Iterable[str] | None, output: str | PathLike[str],
                        reference_dir: str | PathLike[str], *, power: PowerModel = PowerModel(),
                        zones: str = "cluster", with_sleep: bool = True, master_host: bool = True,
                        source: str | None = None) -> list[G5KNode]:
    """Load ``site``'s nodes (optionally only ``clusters``) from a reference snapshot and write a platform.

    Args:
        site: site uid, e.g. ``"lille"``.
        clusters: cluster uids to keep, or None for all the site's clusters.
        output: platform file to write.
        reference_dir: folder holding ``<site>/clusters/<cluster>/nodes/*.json`` (a snapshot such as
            ``sites-2020-03-31``), or the site folder itself.
        power, zones, with_sleep, master_host: as in :func:`write_simgrid_platform`.
        source: text naming the data source for the XML comment; default names the snapshot folder
            (its last component only, so the output does not depend on where the data lives).

    Returns:
        The nodes written, in file order.

    Raises:
        G5KDataError: see :func:`load_g5k_nodes`; ValueError: see :func:`write_simgrid_platform`.
    """
    ref = Path(reference_dir)
    site_dir = ref if ref.name == site and (ref / "clusters").is_dir() else ref / site
    if not site_dir.is_dir():
        raise G5KDataError(f"{site_dir}: no folder for site {site}")
    nodes = load_g5k_nodes(site_dir, site=site, clusters=clusters)
    if source is None:
        source = f"Grid'5000 reference API node descriptions ({ref.name}/{site})"
    write_simgrid_platform(nodes, output, power=power, zones=zones, with_sleep=with_sleep,
                           master_host=master_host, comment=source)
    return nodes
