"""Run a campaign's missing runs on Dask (or in this process) and store each result at once.

By default a :class:`distributed.LocalCluster` with one single-threaded worker process per core
(the engine is pure Python: threads would share one interpreter lock); ``address`` connects to
any running Dask scheduler instead (``tcp://host:8786``, e.g. one whose workers were started on a
Slurm or OAR cluster with dask-jobqueue). Runs are sent in batches (several tiny runs per Dask
task, to amortise the scheduler's per-task cost); each finished batch's records are written by
this process, one atomic file per run (:mod:`.store`), as soon as the batch returns, so a killed
runner loses at most the batches in flight. A run that fails is recorded as failed (its error
line) and does not stop the others; a worker that dies (killed, out of memory) fails the runs of
its batch the same way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from .errors import CampaignError
from .execute import execute_batch, new_record
from .provenance import code_of, is_stale
from .spec import Campaign, RunSpec
from .store import ResultStore, Status


@dataclass
class RunStats:
    """What one ``run`` call did: runs executed now, of which failed; runs already present; wall
    time (s); the folder's status at the end."""

    executed: int
    failed: int
    skipped: int
    wall_s: float
    status: Status


def manifest(campaign: Campaign, runs: list[RunSpec]) -> dict[str, Any]:
    """The ``campaign.json`` content: name, source, axes, every run's id and params, ``[report]``."""
    return {"name": campaign.name, "description": campaign.description, "source": str(campaign.path),
            "axes": campaign.axis_names, "report": campaign.report,
            "runs": [{"id": r.id, "params": r.params} for r in runs]}


def batch_size(n_runs: int, n_workers: int) -> int:
    """Runs per Dask task: about 16 tasks per worker, at most 50 runs each, at least 1."""
    return max(1, min(50, n_runs // max(1, 16 * n_workers)))


class _Bar:
    def __init__(self, total: int, initial: int, enabled: bool) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=total, initial=initial, unit="run", desc="campaign", dynamic_ncols=True,
                            mininterval=0.2, file=sys.stderr)

    def update(self, n: int, failed: int) -> None:
        if self.bar is not None:
            self.bar.update(n)
            if failed:
                self.bar.set_postfix_str(f"{failed} failed", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


#: Batch systems ``--jobqueue`` knows: dask-jobqueue's cluster classes (configured as usual for
#: dask-jobqueue: ``~/.config/dask/jobqueue.yaml`` or ``DASK_JOBQUEUE__...`` variables give cores,
#: memory, queue, walltime).
JOBQUEUES = {"slurm": "SLURMCluster", "oar": "OARCluster", "pbs": "PBSCluster", "sge": "SGECluster",
             "lsf": "LSFCluster", "htcondor": "HTCondorCluster"}


def jobqueue_cluster(kind: str) -> Any:
    """A dask-jobqueue cluster of ``kind`` (see :data:`JOBQUEUES`), not yet scaled.

    Raises:
        CampaignError: unknown kind, dask-jobqueue not installed, or a configuration it refuses.
    """
    from .errors import CampaignError

    if kind not in JOBQUEUES:
        raise CampaignError(f"--jobqueue {kind!r}: unknown; known: {', '.join(JOBQUEUES)}")
    try:
        import dask_jobqueue
    except ImportError:
        raise CampaignError("--jobqueue needs dask-jobqueue: pip install 'gridsched[cluster]'") from None
    try:
        return getattr(dask_jobqueue, JOBQUEUES[kind])()
    except ValueError as exc:  # e.g. cores/memory not configured
        raise CampaignError(f"--jobqueue {kind}: {' '.join(str(exc).split())} (set them in "
                            "~/.config/dask/jobqueue.yaml, see docs/guides/campaigns.md)") from None


def _batch_error(exc: BaseException, n: int) -> str:
    """The one-line error recorded for each run of a batch whose Dask task failed as a whole."""
    from ..exits import one_line

    if type(exc).__name__ == "KilledWorker":   # (distributed.scheduler.KilledWorker)
        batch = f" (in a batch of {n} runs)" if n > 1 else ""
        return (f"KilledWorker: the Dask worker process running this run{batch} died each time it was tried: "
                "a run ended the process (os._exit, a crash) or ran out of memory")
    return one_line(f"{type(exc).__name__}: {' '.join(str(exc).split()) or type(exc).__name__}")


def _dask_client(address: str | None, workers: int | None, jobqueue: str | None = None) -> Any:
    from distributed import Client, LocalCluster

    if address:
        try:
            return Client(address, timeout="30s")
        except (OSError, ValueError, TypeError) as exc:   # (a refused, silent or malformed address)
            raise CampaignError(f"--scheduler-address {address!r}: {' '.join(str(exc).split())}; is a Dask scheduler "
                                "running there (dask scheduler, or dask-jobqueue's scheduler_address)?") from None
    if jobqueue:
        cluster = jobqueue_cluster(jobqueue)
        cluster.scale(jobs=workers or 1)
        return Client(cluster)
    n = workers or os.cpu_count() or 1
    # (a run's failure is said once, in its record and the summary line: not in Dask's logs;
    # dashboard_address=None still tries port 8787 and warns when another cluster holds it,
    # ":0" takes a free port without a word)
    with _sigint_ignored():   # (the workers inherit it: Ctrl-C stops this process, which stops them)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=logging.CRITICAL, death_timeout=30)
    return Client(cluster)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while the LocalCluster starts its worker processes. A process started with
    SIGINT ignored keeps it so (Python raises KeyboardInterrupt only "if the parent process has not
    changed it", the :mod:`signal` documentation): at a Ctrl-C, which the terminal sends to every
    process of its group, the workers do not print their own tracebacks; this process catches it
    and closes the cluster. Outside the main thread signals cannot be set: nothing is changed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def run_campaign(campaign: Campaign, out: str | Path, *, address: str | None = None, workers: int | None = None,
                 jobqueue: str | None = None, serial: bool = False, retry_failed: bool = False,
                 rerun_stale: bool = False, progress: bool = True,
                 on_record: Callable[[dict], None] | None = None) -> RunStats:
    """Execute the runs of ``campaign`` that ``out`` does not hold yet.

    Args:
        campaign: the parsed campaign.
        out: output folder (created; layout in :mod:`schedulers.campaign`).
        address: a Dask scheduler to use (``tcp://host:8786``); None starts a LocalCluster.
        workers: LocalCluster worker processes (default: one per core); with ``jobqueue``, the
            number of batch jobs to submit (default 1).
        jobqueue: start the workers as batch jobs with dask-jobqueue (``"slurm"``, ``"oar"``...,
            :data:`JOBQUEUES`) instead of a LocalCluster.
        serial: run in this process, no Dask (debugging, profiling).
        retry_failed: run again the runs recorded as failed.
        rerun_stale: run again the runs whose record another gridsched code made (another
            version, or an edited checkout: :mod:`.provenance`); without it such records stop
            the campaign before anything runs.
        progress: a progress bar over runs on stderr.
        on_record: called with each record once it is stored.

    Returns:
        :class:`RunStats`.

    Raises:
        CampaignError: ``out`` is not a folder, holds unreadable records, holds records of
            another gridsched code (without ``rerun_stale``), or another runner is writing into it
            (:meth:`~.store.ResultStore.locked`). OSError: cannot write.
    """
    t0 = time.perf_counter()
    store = ResultStore(out)
    with store.locked():   # one runner per folder (a second one stops, naming the first)
        return _run_locked(campaign, store, t0, address=address, workers=workers, jobqueue=jobqueue, serial=serial,
                           retry_failed=retry_failed, rerun_stale=rerun_stale, progress=progress,
                           on_record=on_record)


def _check_batsim_here(path: Path, todo: list[RunSpec]) -> None:
    """Runs on this machine (serial, or a LocalCluster) that need real Batsim (``simulator =
    "batsim"``) stop the campaign at once when no real Batsim is on PATH, instead of each run
    failing with the same error. (Workers of a remote cluster have their own PATH: not checked.)

    Raises:
        CampaignError: a run to do needs real Batsim and :func:`~schedulers.batsim.runner.find_batsim`
            finds none.
    """
    need = sum(1 for r in todo if r.engine.get("simulator") == "batsim")
    if not need:
        return
    from ..batsim.runner import BatsimNotFound, find_batsim
    try:
        find_batsim()
    except BatsimNotFound as exc:
        raise CampaignError(f"{path}: {need:,} run(s) to do have simulator = \"batsim\": {exc}") from None


def _check_same_campaign(store: ResultStore, campaign: Campaign) -> None:
    """Refuse to run ``campaign`` into a folder whose ``campaign.json`` names another campaign:
    its manifest would be replaced, and ``collect`` and ``report`` would then read the other
    campaign's results as stray files of this one. (An edited campaign of the same name, whose
    runs changed, goes on in its folder: the records of runs it no longer has stay beside.)

    Raises:
        CampaignError: the folder holds another campaign (one line naming both and the folder).
    """
    try:
        old = store.read_manifest().get("name")
    except CampaignError:
        return   # (no manifest yet; or a damaged or foreign one: replaced, as before)
    if isinstance(old, str) and old != campaign.name:
        raise CampaignError(f"{store.out}: holds the results of campaign {old!r} (its campaign.json), not of "
                            f"{campaign.name!r}: running here would replace that campaign's manifest; give "
                            "another --out, or move the folder away")


def _run_locked(campaign: Campaign, store: ResultStore, t0: float, *, address: str | None, workers: int | None,
                jobqueue: str | None, serial: bool, retry_failed: bool, rerun_stale: bool, progress: bool,
                on_record: Callable[[dict], None] | None) -> RunStats:
    """:func:`run_campaign` once the folder's lock is held."""
    store.prepare()
    runs = campaign.runs()
    ids = [r.id for r in runs]
    before = store.status(ids)
    if before.stale and not rerun_stale:
        from .provenance import describe, stamp
        here = describe(code_of(stamp()))
        raise CampaignError(f"{store.out}: {len(before.stale)} of its {len(before.done) + len(before.failed)} "
                            f"stored results were made by {before.other_code()}, not by this {here}: resuming "
                            "would mix the results of two codes; --rerun-stale runs them again with this one "
                            "(or give another --out)")
    _check_same_campaign(store, campaign)
    store.write_manifest(manifest(campaign, runs))
    states = {**{rid: "done" for rid in before.done}, **{rid: "failed" for rid in before.failed}}
    codes = dict(before.codes)   # (stale records: those of workers running another code too)
    skip = set(before.done) | (set() if retry_failed else set(before.failed))
    skip -= set(before.stale)
    todo = [r for r in runs if r.id not in skip]
    executed = failed = 0
    if serial or (address is None and jobqueue is None):
        _check_batsim_here(campaign.path, todo)
    bar = _Bar(len(runs), len(runs) - len(todo), progress)

    def store_all(records: list[dict]) -> None:
        nonlocal executed, failed
        for rec in records:
            store.write(rec)
            states[rec["id"]] = rec["status"]
            codes.pop(rec["id"], None)
            if is_stale(rec):
                codes[rec["id"]] = code_of(rec)
            executed += 1
            failed += rec["status"] != "done"
            if on_record is not None:
                on_record(rec)
        bar.update(len(records), failed)

    try:
        if serial or not todo:
            for spec in todo:
                store_all(execute_batch([spec], str(store.out)))
        else:
            from distributed import as_completed

            client = _dask_client(address, workers, jobqueue)
            try:
                n = max(1, len(client.scheduler_info().get("workers", {})) or (workers or os.cpu_count() or 1))
                if jobqueue and not address:
                    client.wait_for_workers(1)  # batch jobs may wait in the queue
                size = batch_size(len(todo), n)
                batches = [todo[i:i + size] for i in range(0, len(todo), size)]
                futures = client.map(execute_batch, batches, out_dir=str(store.out.resolve()), pure=False)
                index = {f.key: b for f, b in zip(futures, batches)}
                for fut in as_completed(futures):
                    try:
                        records = fut.result()
                    except Exception as exc:  # noqa: BLE001 -- a dead worker fails its batch, not the campaign
                        records = [new_record(s, _batch_error(exc, len(index[fut.key]))) for s in index[fut.key]]
                    store_all(records)
                    fut.release()
            finally:
                cluster = getattr(client, "cluster", None)
                client.close()
                if cluster is not None:
                    cluster.close()
    finally:
        bar.close()
    return RunStats(executed=executed, failed=failed, skipped=len(runs) - len(todo),
                    wall_s=time.perf_counter() - t0, status=Status.of(ids, states, before.stray, codes))
