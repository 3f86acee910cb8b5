"""The green-heuristic paper's printed numbers, and what its own tables say about its text.

Source: Pillon, do Amarante, Koslovski, Miers, "Escalonamento de Tarefas em Grades Computacionais
guiado pelo Consumo de Energia com os Algoritmos Easy Backfilling e HEFT"
(``../shared/papers/004_256d972a5ab7dee1.txt``; ``L<n>`` = line ``n`` of that file): Table 2
(energies, L220-244), Table 3 (times, L254-263) and the claims of L15, L41, L246-250, L267,
L279 and L285. :func:`inconsistencies` checks the text against the tables (every number it states
is computed here from the printed values).
"""

from __future__ import annotations

from dataclasses import dataclass

from .numfmt import energy

__all__ = ["DELTAS", "ALGS", "CONFIGS", "PAPER_T2", "PAPER_T2_MINMAX", "PAPER_T3", "PAPER_TIME_S", "extremes",
           "paper_case", "paper_spread", "inconsistencies", "Claim", "CLAIMS"]

#: Δ values (%) and algorithms, in Table 2's column order (Δ-major, EASY then HEFT).
DELTAS = (0, 10, 20, 30, 40, 50)
ALGS = ("EASY", "HEFT")
CONFIGS = tuple((a, d) for d in DELTAS for a in ALGS)

#: Table 2 (L225-244): energy (J) per (CPU load %, jobs), in the order of :data:`CONFIGS`, as printed
#: (the 7500-job rows in 10^9 J, the others in 10^3 or 10^6 J).
PAPER_T2: dict[tuple[int, int], tuple[float, ...]] = {
    (100, 10): (16.2e3, 15.2e3, 15.9e3, 13.9e3, 15.0e3, 13.5e3, 14.9e3, 13.2e3, 15.1e3, 13.1e3, 15.3e3, 13.1e3),
    (100, 20): (32.6e3, 31.5e3, 30.5e3, 29.7e3, 30.2e3, 29.6e3, 30.2e3, 29.1e3, 31.1e3, 29.3e3, 31.9e3, 29.5e3),
    (100, 100): (163.9e3, 163.5e3, 158.2e3, 159.9e3, 158.5e3, 159.9e3, 159.8e3, 160.3e3, 161.2e3, 161.5e3,
                 162.9e3, 161.7e3),
    (100, 1000): (1.7e6, 1.9e6, 1.6e6, 1.8e6, 1.6e6, 1.8e6, 1.6e6, 1.8e6, 1.6e6, 1.8e6, 1.6e6, 1.9e6),
    (100, 3500): (21.7e6, 23.9e6, 20.2e6, 22.3e6, 20.3e6, 22.5e6, 20.6e6, 22.8e6, 21.3e6, 23.5e6, 21.8e6, 24.5e6),
    (100, 7500): (39.5e9, 42.0e9, 38.9e9, 39.7e9, 39.5e9, 41.9e9, 40.0e9, 43.7e9, 40.1e9, 43.9e9, 41.8e9, 45.0e9),
    (75, 10): (16.1e3, 15.0e3, 15.2e3, 13.2e3, 14.9e3, 12.9e3, 14.2e3, 12.9e3, 16.0e3, 13.0e3, 15.8e3, 14.0e3),
    (75, 20): (31.5e3, 31.0e3, 29.9e3, 28.3e3, 30.0e3, 29.2e3, 30.1e3, 28.9e3, 30.9e3, 29.2e3, 30.7e3, 29.4e3),
    (75, 100): (159.2e3, 161.2e3, 157.2e3, 159.3e3, 157.3e3, 159.6e3, 158.1e3, 160.0e3, 159.9e3, 160.4e3,
                161.0e3, 161.0e3),
    (75, 1000): (1.5e6, 1.8e6, 1.4e6, 1.7e6, 1.4e6, 1.7e6, 1.4e6, 1.7e6, 1.5e6, 1.7e6, 1.5e6, 1.8e6),
    (75, 3500): (19.8e6, 22.3e6, 17.9e6, 21.5e6, 17.9e6, 21.8e6, 18.2e6, 22.1e6, 18.3e6, 22.1e6, 19.1e6, 22.9e6),
    (75, 7500): (38.9e9, 41.3e9, 37.9e9, 38.2e9, 37.9e9, 38.2e9, 38.0e9, 39.9e9, 38.8e9, 40.9e9, 39.2e9, 41.8e9),
    (50, 10): (15.9e3, 14.9e3, 15.1e3, 13.1e3, 14.0e3, 11.9e3, 14.1e3, 12.2e3, 15.0e3, 13.0e3, 15.2e3, 14.2e3),
    (50, 20): (30.8e3, 29.9e3, 29.5e3, 28.0e3, 29.1e3, 28.8e3, 29.9e3, 28.7e3, 30.2e3, 29.0e3, 30.2e3, 29.1e3),
    (50, 100): (156.3e3, 158.2e3, 153.4e3, 156.1e3, 153.5e3, 156.8e3, 154.9e3, 157.2e3, 155.0e3, 157.9e3,
                155.9e3, 158.5e3),
    (50, 1000): (1.3e6, 1.7e6, 1.1e6, 1.6e6, 1.2e6, 1.6e6, 1.2e6, 1.6e6, 1.2e6, 1.7e6, 1.3e6, 1.8e6),
    (50, 3500): (17.6e6, 20.1e6, 16.2e6, 19.5e6, 16.3e6, 19.9e6, 16.8e6, 19.9e6, 17.2e6, 20.4e6, 17.5e6, 20.5e6),
    (50, 7500): (36.8e9, 41.0e9, 35.8e9, 39.3e9, 35.9e9, 39.9e9, 36.2e9, 39.8e9, 36.9e9, 40.8e9, 37.0e9, 41.8e9),
}
#: Table 2's own MÍNIMO and MÁXIMO columns (J), as printed.
PAPER_T2_MINMAX: dict[tuple[int, int], tuple[float, float]] = {
    (100, 10): (13.1e3, 16.2e3), (100, 20): (29.1e3, 32.6e3), (100, 100): (158.2e3, 163.9e3),
    (100, 1000): (1.6e6, 1.9e6), (100, 3500): (20.2e6, 24.5e6), (100, 7500): (38.9e9, 45.0e9),
    (75, 10): (12.9e3, 16.1e3), (75, 20): (28.3e3, 31.5e3), (75, 100): (157.2e3, 160.4e3),
    (75, 1000): (1.4e6, 1.8e6), (75, 3500): (17.9e6, 22.3e6), (75, 7500): (37.9e9, 41.8e9),
    (50, 10): (11.9e3, 15.9e3), (50, 20): (29.0e3, 30.8e3), (50, 100): (153.4e3, 158.5e3),
    (50, 1000): (1.1e6, 1.8e6), (50, 3500): (16.2e6, 20.5e6), (50, 7500): (35.8e9, 41.8e9),
}
#: Table 3 (L258-263), load 100 %: jobs -> (worst config, its time as printed, best config, its
#: time as printed, "% less" as printed). The 3500- and 7500-job times are printed in days.
PAPER_T3 = {10: (("EASY", 0), "37.0 s", ("HEFT", 40), "34.4 s", 7),
            20: (("EASY", 0), "52.9 s", ("HEFT", 30), "50.3 s", 5),
            100: (("EASY", 0), "260.2 s", ("EASY", 10), "258.1 s", 1),
            1000: (("HEFT", 0), "2145.8 s", ("EASY", 10), "1462.8 s", 32),
            3500: (("HEFT", 50), "536d", ("EASY", 10), "465d", 14),
            7500: (("HEFT", 50), "1.157d", ("EASY", 10), "1.090d", 6)}
#: Table 3's times in seconds, read literally (a "d" is a day of 86,400 s; "1.157d" as 1.157 days).
PAPER_TIME_S = {10: (37.0, 34.4), 20: (52.9, 50.3), 100: (260.2, 258.1), 1000: (2145.8, 1462.8),
                3500: (536 * 86400.0, 465 * 86400.0), 7500: (1.157 * 86400.0, 1.090 * 86400.0)}
#: The paper's power states (L176-179), W, and its node count (L208).
P_IDLE_W, P_ONE_CORE_W, P_ALL_CORES_W, P_OFF_W, NODES = 100.0, 120.0, 200.0, 10.0, 22


def extremes(values: dict[tuple[str, int], float]) -> tuple[tuple[str, int], tuple[str, int]]:
    """(best, worst) configuration of ``{(alg, Δ): value}``; ties go to the lower Δ (004 L246),
    then to EASY (Table 2's column order)."""
    order = [c for c in CONFIGS if c in values]
    best = min(order, key=lambda c: values[c])  # min/max keep the first of equal values
    worst = max(order, key=lambda c: values[c])
    return best, worst


def paper_case(load: int, jobs: int) -> dict[tuple[str, int], float]:
    """Table 2's row as ``{(alg, Δ): J}``."""
    return dict(zip(CONFIGS, PAPER_T2[(load, jobs)]))


def paper_spread(load: int, jobs: int) -> float:
    """(worst - best) / worst (%) of Table 2's row, from the row's own values."""
    row = paper_case(load, jobs)
    best, worst = extremes(row)
    return 100.0 * (row[worst] - row[best]) / row[worst]


def _pct(x: float) -> str:
    return f"{x:.1f} %"


def inconsistencies() -> list[str]:
    """The paper's statements its own tables contradict, each as one Markdown sentence with the
    numbers computed from Tables 2-3 and the line it concerns."""
    out = []
    out.append("**136 simulations of a 216-run plan.** L204 says the plan gave 136 simulations, but "
               f"Fig. 8's plan (L202-204) and Table 2 hold {len(ALGS)} algorithms x {len(DELTAS)} Δ x "
               f"{len({j for _, j in PAPER_T2})} job counts x {len({l for l, _ in PAPER_T2})} loads = "
               f"{len(CONFIGS) * len(PAPER_T2)} energies.")
    r35, r75 = PAPER_T2[(100, 3500)][0], PAPER_T2[(100, 7500)][0]
    out.append("**7,500-job energies in 10^9 J.** Table 2 prints the 3,500-job rows in 10^6 J and the "
               f"7,500-job rows in 10^9 J: EASY Δ 0 at 100 % load uses {r75 / r35:,.0f} times the energy for "
               f"{7500 / 3500:.1f} times the jobs (L229-230); L246 remarks that values range from 10^3 to 10^9.")
    lo = {k: 100 * (mx - mn) / mx for k, (mn, mx) in PAPER_T2_MINMAX.items()}
    hi_k = max(lo, key=lambda k: lo[k])
    by_min = {k: 100 * (mx - mn) / mn for k, (mn, mx) in PAPER_T2_MINMAX.items()}
    rows = {k: paper_spread(*k) for k in PAPER_T2}
    own = "" if _pct(max(rows.values())) == _pct(lo[hi_k]) else \
        f", {_pct(max(rows.values()))} from the rows' own values"
    out.append("**49 % is not in Table 2.** The text's energy reduction of 2-49 % (L15, L41, L250, L285): "
               f"the largest (max − min) / max of Table 2 is {_pct(lo[hi_k])} ({hi_k[1]:,} jobs, {hi_k[0]} % "
               f"load, the row L250 names){own}; as (max − min) / min it would be {_pct(max(by_min.values()))}. "
               f"The smallest, {_pct(min(lo.values()))} (100 jobs, 75 %), is the 2 %.")
    bad = []
    for k in sorted(PAPER_T2, key=lambda k: (-k[0], k[1])):
        row = paper_case(*k)
        mn, mx = PAPER_T2_MINMAX[k]
        b, w = extremes(row)
        if abs(row[b] - mn) > 1e-9 * mn:
            bad.append(f"{k[1]:,} jobs at {k[0]} %: MÍNIMO {energy(mn)} but {b[0]} Δ {b[1]} % has {energy(row[b])}")
        if abs(row[w] - mx) > 1e-9 * mx:
            bad.append(f"{k[1]:,} jobs at {k[0]} %: MÁXIMO {energy(mx)} but {w[0]} Δ {w[1]} % has {energy(row[w])}")
    if bad:
        out.append("**MÍNIMO/MÁXIMO columns that disagree with their row** (L232-244): " + "; ".join(bad)
                   + f". With the row's own maximum, the 2 % of 100 jobs at 75 % becomes "
                   f"{_pct(rows[(75, 100)])}.")
    t = PAPER_TIME_S[3500]
    out.append("**Table 3's days.** 3,500 jobs take 536 and 465 days but 7,500 jobs 1.157 and 1.090 days "
               f"(L262-263); the printed 14 % for 3,500 jobs is {_pct(100 * (t[0] - t[1]) / t[0])} of 536 d.")
    powers = []
    for jobs, (w_cfg, _, b_cfg, _, _) in PAPER_T3.items():
        row = paper_case(100, jobs)
        tw, tb = PAPER_TIME_S[jobs]
        powers.append((jobs, row[w_cfg] / tw, row[b_cfg] / tb))
    small = [p for p in powers if p[0] <= 1000]
    lo_w = min(min(p[1], p[2]) for p in small)
    hi_w = max(max(p[1], p[2]) for p in small)
    p35 = [p for p in powers if p[0] == 3500][0]
    p75 = [p for p in powers if p[0] == 7500][0]
    out.append("**Energies below the idle floor.** Table 2's energy over Table 3's time is a mean power of "
               f"{lo_w:,.0f}-{hi_w:,.0f} W for 10-1,000 jobs, {p35[1]:.2f} W for 3,500 and {p75[1] / 1e3:,.0f} kW "
               f"for 7,500 jobs, while {NODES} nodes draw {NODES * P_IDLE_W:,.0f} W idle and "
               f"{NODES * P_ALL_CORES_W:,.0f} W fully busy by the paper's own power states (L176-178, L208): "
               "the printed energies are not the 22 nodes' total over the run, so only their relative "
               "differences can be compared with ours.")
    return out


@dataclass(frozen=True)
class Claim:
    """One claim of the paper: key, text (our translation), lines, and what Table 2/3 give for it."""

    key: str
    text: str
    lines: str


#: The claims the report checks, in the order of the claims table.
CLAIMS = (
    Claim("spread_e", "energy reduction between the worst and the best case: 2-49 %", "L15, L41, L250, L285"),
    Claim("spread_t", "makespan reduction between the worst and the best energy case: 1-32 %", "L15, L41, L263-267"),
    Claim("easy10_share", "EASY with Δ = 10 % gives 67 % of the best (lowest-energy) results", "L250, L285"),
    Claim("easy10_big", "with more than 100 jobs the best result is always EASY Δ = 10 %", "L250"),
    Claim("worst_sides", "the worst cases are at Δ = 0 (small sets) or Δ = 50 % (large sets)", "L246-248"),
    Claim("heft_worst", "61 % of the worst cases are HEFT, 38 % HEFT with Δ = 50 %", "L248"),
    Claim("easy10_vs_0", "EASY Δ = 10 % saves up to 16 % energy against plain EASY (1000 jobs, 50 % load)",
          "L41, L279"),
    Claim("delta50_delay", "Δ = 50 % delays the makespan by more than 10 % in some cases", "L285"),
    Claim("queue", "the heuristic acts where a queue exists (higher arrival rates)", "L39, L204, L267"),
)
