"""BUC's per-run metrics (paper 002 §4, Fig. 1 and Fig. 2), computed from a run's output files.

Source: ``shared/papers/002_3dc427a6f94ba187.txt`` (``L<n>`` = line).

**Users compared (Fig. 1, L148-169)**: the three injected users ``inj0``, ``inj50``, ``inj100``
(:mod:`schedulers.inputs.buc_scenario`), the gaming user's long jobs (``gamer_long``, when present)
and three real users chosen as the paper did (L155-160): by mean Su, low / medium / high, the one
with most jobs in each. Mean Su is taken from the workload alone, so that every policy and seed
compares the same users: each user's jobs in submission order, Su updated by BUC's default rule
(:func:`schedulers.buc.update_score`, ``threshold``, from 60) with each job's precision
``delay / walltime`` (jobs that reach their walltime skipped, L106-111); the mean is over the Su
each job saw at submission. Ranges (ours): low < 100/3 <= medium < 200/3 <= high. Roles:
``real_low``, ``real_mid``, ``real_high``.

**Waiting-time change (Fig. 1, L148-151)**: ``buc.wait.<role>`` is the role's mean waiting time
(s) in this run; ``buc.wait_reduction.<role>`` is ``100 x (W_fcfs - W) / W_fcfs`` (%), positive
when the user waits less than under FCFS. ``W_fcfs`` comes from the output files of an FCFS run of
the same platform and workloads, simulated here with the embedded engine (FCFS is deterministic:
it is the campaign's FCFS run).

**Queue-position gain at submission (Fig. 2, L182-196)**: for each job ``j`` arriving at ``t``,
the queue it joins is the jobs submitted before it (Batsim's order: subtime, then id string) and
not started before ``t``. When that queue, ``j`` included, is longer than 5 jobs (L186), its
FCFS position is the last one (``n`` jobs ahead) and its BUC position is the number ``k`` of queued
jobs whose eq. 2 key ranks before it at ``t`` (:meth:`schedulers.buc.BUCOrder.queue_key`, with
the Su of each user at ``t`` replayed from this run's completions with the default rule); the
gain is ``100 x (n - k) / n`` (%): 100 at the head, 0 when it stays last. The scores are replayed
with the run's rule (its policy options ``rule``, ``up``, ``down``, ``alpha``, ``gain``, ``p0``;
BUC's defaults for a run of another policy). The gain is given for both of the paper's Kp (1440
and 10800), whatever the run's:
``buc.gain_kp<Kp>.median.su<range>`` and ``buc.gain_kp<Kp>.n.su<range>``, grouped by the Su of the
job's user at ``t`` (ranges 0-24, 25-49, 50-74, 75-100: lower bounds included, L191-196). In a
BUC run with that Kp they are the gains BUC gave; in another run they are what BUC's order would
have given against that run's queues.

**Final scores and load**: ``buc.su_final.<role>`` is the role's Su after the run's last completion
(replayed as above; the role's user's ``policy.su.<user>`` in a BUC run); ``buc.offered_load`` (%)
is the workload's work (``res`` x run time, capped at the walltime) over the 39 hosts (the
workload's ``nb_res``) times the span of the submissions: the load the density sets.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..buc import DEFAULTS, precision, update_score
from .run_outputs import OutputsError, out_jobs_rows

__all__ = ["read_jobs", "workload_users", "choose_real_users", "wait_means", "score_rule", "position_gains",
           "final_scores", "offered_load", "buc_metrics"]

INJECTED_ROLES = ("inj0", "inj50", "inj100")
SU_RANGES = ((0.0, 25.0, "0_24"), (25.0, 50.0, "25_49"), (50.0, 75.0, "50_74"), (75.0, math.inf, "75_100"))
KPS = (1440.0, 10800.0)
SU0 = 60.0


def read_jobs(out_jobs: str | Path) -> list[dict[str, Any]]:
    """The rows of ``out_jobs.csv`` with ``id`` (``w0!n``), ``sub``, ``wt`` (requested time),
    ``start``, ``run`` (execution time), ``finish`` (s) and ``state``; rejected jobs left out.

    Raises:
        OutputsError: missing file or column, or a non-numeric time (names the file and job).
    """
    cols = ("job_id", "workload_name", "submission_time", "requested_time", "starting_time",
            "execution_time", "finish_time", "final_state")
    p, table = out_jobs_rows(out_jobs, cols)
    rows = []
    for r in table:
        if r["final_state"] == "REJECTED":
            continue
        jid = f"{r['workload_name']}!{r['job_id']}"
        try:
            vals = [float(r[c]) for c in cols[2:7]]
        except ValueError:
            raise OutputsError(f"{p}: job {jid}: a time column is not a number") from None
        rows.append(dict(zip(("id", "sub", "wt", "start", "run", "finish"), [jid, *vals]),
                         state=r["final_state"]))
    return rows


def workload_users(workloads: list[str | Path | dict]) -> tuple[dict[str, str], dict[str, dict]]:
    """``(user by job id, job by job id)`` of the workloads (``w0``, ``w1``... in order); a job
    without ``user`` belongs to ``""``. Jobs are the workload's job objects (``delay`` read from
    their profile when it is a delay profile)."""
    users, jobs = {}, {}
    for i, w in enumerate(workloads):
        data = w if isinstance(w, dict) else json.loads(Path(w).read_text(encoding="utf-8"))
        profiles = data.get("profiles", {})
        for j in data.get("jobs", []):
            jid = f"w{i}!{j['id']}"
            users[jid] = str(j.get("user", ""))
            prof = profiles.get(j.get("profile"), {})
            jobs[jid] = dict(j, delay=prof.get("delay") if prof.get("type") == "delay" else None)
    return users, jobs


def choose_real_users(jobs: dict[str, dict], rule: Callable[[float, float], float] | None = None
                      ) -> dict[str, tuple[str, float]]:
    """``role -> (user, mean Su)`` for ``real_low``, ``real_mid``, ``real_high`` (module docstring;
    Su replayed with ``rule``, :func:`score_rule`, default: BUC's default rule); a role without a
    user is left out. Injected users and ``gamer`` are not real users."""
    rule = rule or score_rule()
    by_user: dict[str, list[dict]] = defaultdict(list)
    for jid, j in sorted(jobs.items(), key=lambda kv: (kv[1]["subtime"], kv[0])):
        u = str(j.get("user", ""))
        if u and u not in INJECTED_ROLES and u != "gamer":
            by_user[u].append(j)
    best: dict[str, tuple[int, str, float]] = {}
    for u, js in by_user.items():
        su, seen = SU0, []
        for j in js:
            seen.append(su)
            wt, d = float(j.get("walltime", -1)), j.get("delay")
            if d is not None and d < wt:
                p = precision(d, wt)
                if p is not None:
                    su = rule(su, p)
        mean = float(np.mean(seen))
        role = "real_low" if mean < 100 / 3 else ("real_mid" if mean < 200 / 3 else "real_high")
        cand = (len(js), u, mean)
        if role not in best or (cand[0], best[role][1]) > (best[role][0], u):
            best[role] = cand
    return {role: (u, mean) for role, (_, u, mean) in best.items()}


def wait_means(rows: list[dict], users: dict[str, str], roles: dict[str, Any]) -> dict[str, float]:
    """Mean waiting time (s) of each role's jobs: ``roles`` maps a role to a user, or to a job-id
    prefix for ``gamer_long`` (its jobs ``gamer-long-*``). Roles without jobs are left out."""
    out = {}
    for role, who in roles.items():
        if role == "gamer_long":
            w = [r["start"] - r["sub"] for r in rows if r["id"].split("!", 1)[1].startswith("gamer-long-")]
        else:
            w = [r["start"] - r["sub"] for r in rows if users.get(r["id"]) == who]
        if w:
            out[role] = float(np.mean(w))
    return out


def _su_range(su: float) -> str:
    return next(label for lo, hi, label in SU_RANGES if lo <= su < hi)


#: The options of :func:`schedulers.buc.update_score` a run's policy options may set.
RULE_OPTIONS = ("rule", "up", "down", "alpha", "gain", "p0")


def score_rule(options: dict[str, Any] | None = None) -> Callable[[float, float], float]:
    """``(su, p) -> new su``: :func:`schedulers.buc.update_score` with the rule options found in
    a run's policy ``options`` (BUC's defaults for the others)."""
    opts = {k: (options or {}).get(k, DEFAULTS[k]) for k in RULE_OPTIONS}
    return partial(update_score, **opts)


def position_gains(rows: list[dict], users: dict[str, str], kp: float, min_queue: int = 6,
                   rule: Callable[[float, float], float] | None = None) -> dict[str, list[float]]:
    """Queue-position gains (%) at submission by Su range label (module docstring, Fig. 2), for
    queues of at least ``min_queue`` jobs (the arriving job included); Su replayed with ``rule``
    (:func:`score_rule`; default: BUC's default rule)."""
    rule = rule or score_rule()
    order = sorted(rows, key=lambda r: (r["sub"], r["id"]))
    n = len(order)
    sub = np.array([r["sub"] for r in order])
    start = np.array([r["start"] for r in order])
    wt = np.array([r["wt"] for r in order])
    wt_term = np.where(wt > 0, 100000.0 / np.where(wt > 0, wt, 1.0), 0.0) * 0.2
    ulist = sorted({users.get(r["id"], "") for r in order})
    uidx = {u: i for i, u in enumerate(ulist)}
    owner = np.array([uidx[users.get(r["id"], "")] for r in order])
    ranks = np.arange(n)  # tie-break rank = arrival order (subtime, then id string)
    updates = sorted((r["finish"], r["id"], users.get(r["id"], ""), _completed_precision(r))
                     for r in rows if r["state"] == "COMPLETED_SUCCESSFULLY" and r["wt"] > 0)
    su = np.full(len(ulist), SU0)
    gains: dict[str, list[float]] = defaultdict(list)
    u_ptr = 0
    for i in range(n):
        t = sub[i]
        while u_ptr < len(updates) and updates[u_ptr][0] <= t:
            _, _, u, p = updates[u_ptr]
            su[uidx[u]] = rule(su[uidx[u]], p)
            u_ptr += 1
        ahead = np.nonzero(start[:i] >= t)[0]
        if len(ahead) + 1 < min_queue:
            continue
        sf = (su[owner[ahead]] * 0.8 + wt_term[ahead]) * kp + (t - sub[ahead])
        sf_i = (su[owner[i]] * 0.8 + wt_term[i]) * kp
        before = np.count_nonzero((sf > sf_i) | ((sf == sf_i) & (ranks[ahead] < i)))
        gains[_su_range(su[owner[i]])].append(100.0 * (len(ahead) - before) / len(ahead))
    return gains


def _fcfs_rows(workloads: list, platform: Any) -> list[dict]:
    from ..engine import simulate
    from ..fcfs import FCFS

    with tempfile.TemporaryDirectory(prefix="gridsched-buc-fcfs-") as tmp:
        simulate(platform, workloads, FCFS(), export_prefix=Path(tmp) / "out_")
        return read_jobs(Path(tmp) / "out_jobs.csv")


def _completed_precision(row: dict) -> float:
    """``P`` (eq. 1) of a row of :func:`read_rows` with a walltime (``wt > 0``: never None)."""
    p = precision(row["run"], row["wt"])
    assert p is not None, row["id"]  # the callers keep rows with wt > 0
    return p


def final_scores(rows: list[dict], users: dict[str, str], rule: Callable[[float, float], float]) -> dict[str, float]:
    """Su of every user after the run's last completion (replayed in completion order, module
    docstring); users without an update keep the initial 60."""
    su: dict[str, float] = {}
    for _, _, u, p in sorted((r["finish"], r["id"], users.get(r["id"], ""), _completed_precision(r))
                             for r in rows if r["state"] == "COMPLETED_SUCCESSFULLY" and r["wt"] > 0):
        su[u] = rule(su.get(u, SU0), p)
    return su


def offered_load(workloads: list, jobs: dict[str, dict]) -> float | None:
    """The workloads' work (``res`` x delay, capped at the walltime; delay profiles only) over
    ``nb_res`` hosts x the span of the submissions (%); None without a span or ``nb_res``."""
    hosts = 0
    for w in workloads:
        data = w if isinstance(w, dict) else json.loads(Path(w).read_text(encoding="utf-8"))
        hosts = max(hosts, int(data.get("nb_res", 0) or 0))
    subs = [float(j["subtime"]) for j in jobs.values()]
    span = max(subs, default=0.0) - min(subs, default=0.0)
    if not (hosts and span > 0):
        return None
    work = 0.0
    for j in jobs.values():
        d = j.get("delay")
        if d is None:
            continue
        wt = float(j.get("walltime", -1))
        work += int(j.get("res", 1)) * (min(d, wt) if wt > 0 else d)
    return 100.0 * work / (hosts * span)


def buc_metrics(out_jobs: str | Path, workloads: list, platform: Any, *, fcfs_rows: list | None = None,
                policy_options: dict[str, Any] | None = None) -> dict[str, float]:
    """Every metric of the module docstring for one run, as ``{column: number}``.

    Args:
        out_jobs: the run's ``out_jobs.csv``. workloads: its workloads (paths or dicts).
        platform: its platform (path or parsed), to simulate the FCFS baseline.
        fcfs_rows: :func:`read_jobs` of the FCFS baseline, when already known (else simulated).
        policy_options: the run's policy options (their score-rule options replay Su).

    Raises:
        OutputsError: unreadable output file. The engine's errors for a bad platform/workload.
    """
    rows = read_jobs(out_jobs)
    users, jobs = workload_users(workloads)
    real = choose_real_users(jobs)
    rule = score_rule(policy_options)
    roles: dict[str, Any] = {role: u for role, (u, _) in real.items()}
    roles.update({u: u for u in INJECTED_ROLES})
    roles["gamer_long"] = "gamer-long-"
    out: dict[str, float] = {f"buc.su_mean.{role}": m for role, (_, m) in real.items()}
    final = final_scores(rows, users, rule)
    for role, who in roles.items():
        if role != "gamer_long" and who in final:
            out[f"buc.su_final.{role}"] = final[who]
    load = offered_load(workloads, jobs)
    if load is not None:
        out["buc.offered_load"] = load
    waits = wait_means(rows, users, roles)
    base = wait_means(fcfs_rows if fcfs_rows is not None else _fcfs_rows(workloads, platform), users, roles)
    for role, w in waits.items():
        out[f"buc.wait.{role}"] = w
        if base.get(role, 0) > 0:
            out[f"buc.wait_reduction.{role}"] = 100.0 * (base[role] - w) / base[role]
    for kp in KPS:
        gains = position_gains(rows, users, kp, rule=rule)
        for _, _, label in SU_RANGES:
            g = gains.get(label, [])
            out[f"buc.gain_kp{kp:g}.n.su{label}"] = float(len(g))
            if g:
                out[f"buc.gain_kp{kp:g}.median.su{label}"] = float(np.median(g))
    return out
