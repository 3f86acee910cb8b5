"""The works gridsched's policies and engine follow, cited once for the command line and the
documentation (``gridsched policies NAME``; the bibliography page is generated from
:data:`REFERENCES`).

A policy names its sources in :attr:`Policy.references <schedulers.core.policy.Policy.references>`
(keys of :data:`REFERENCES`); :func:`cite` gives their full references.

Where the plain-text copy of a source paper that this project worked from does not give a field
(three of them start at the abstract, without title page), the entry says so and gives where the
field comes from instead (how another of the papers cites it, or the publisher's record).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Reference", "REFERENCES", "cite"]


@dataclass(frozen=True)
class Reference:
    """One work.

    Attributes:
        key: its anchor on the bibliography page (``#osep``...) and its name in
            :attr:`Policy.references <schedulers.core.policy.Policy.references>`.
        short: the short form used in text, e.g. ``"Lifka 1995"``.
        full: the full reference: authors, title, venue, year (plain text, no markup).
        note: what of it the project uses, or where a field of the reference comes from.
    """

    key: str
    short: str
    full: str
    note: str = ""


#: Every work cited, by key, in the bibliography's order.
REFERENCES: dict[str, Reference] = {r.key: r for r in (
    Reference(
        "osep", "Falavinha Jr. et al. 2009",
        "José N. Falavinha Jr. et al. The owner share scheduler for a distributed system. In: International "
        "Conference on Parallel Processing Workshops (ICPPW '09), 2009, pp. 298-305.",
        "OSEP, the Owner Share Enforcement Policy. gridsched's osep follows its full description in the "
        "monograph below (Forte 2015, ch. 3); the reference is as the monograph and the HOSEP paper give it."),
    Reference(
        "forte2015", "Forte 2015",
        "Cássio Henrique Volpatto Forte. Adaptação do Algoritmo OSEP de escalonamento para sistemas "
        "heterogêneos. Monografia (bacharelado em Ciência da Computação), Universidade Estadual Paulista "
        "\"Júlio de Mesquita Filho\" (UNESP), Instituto de Biociências, Letras e Ciências Exatas, São José do "
        "Rio Preto, 2015. Advisor: Aleardo Manacero Jr.",
        "The monograph: OSEP's update and decision algorithms in full, PR_Preemp / PR_Aloc, the adapted "
        "algorithm (Fig. 5), satisfaction (eq. 4.4) and the 12 test cases reproduced by campaigns/hosep.toml."),
    Reference(
        "hosep", "Forte et al. 2016",
        "C. H. V. Forte et al., 2016. The HOSEP paper (Portuguese, with an English abstract): \"an extension "
        "for an owner-share based policy (OSEP), aiming a more effective control of heterogeneous nodes\", "
        "based on penalties for the unfair use of resources.",
        "The copy this project worked from starts at the abstract: title and venue are not in it. Authors "
        "and year as the EHOSEP paper cites it (\"Forte et al. 2016\"). Source of PowerDiff (eq. 3), the "
        "remaining power RP (eq. 4), the heterogeneous decision algorithm (Fig. 2) and satisfaction "
        "(Definition 5)."),
    Reference(
        "ehosep", "EHOSEP paper",
        "The EHOSEP paper (Portuguese, with an English abstract): \"a new scheduling algorithm for grid "
        "computing, that controls energy consumption, guided by a fairness criteria based in resource "
        "ownership\"; it extends HOSEP (Forte et al. 2016).",
        "The copy this project worked from starts at the abstract: authors, title and venue are not in it; "
        "it cites HOSEP as Forte et al. 2016. Source of the per-user power limits, CSP, the fairness "
        "conditions i-iii, the allocation algorithm, the 64-host grid (Table 1) and satisfaction (eq. 1)."),
    Reference(
        "buc", "Corrêa and Pillon 2020",
        "Geremias Corrêa and Maurício A. Pillon. BUC: Beneficiador de Usuários Conscientes em Grades. In: "
        "Escola Regional de Redes de Computadores (ERRC), 2020. doi:10.5753/errc.2020.15184.",
        "The copy this project worked from starts at the abstract; authors, title, venue and year are the "
        "publisher's record of that abstract. Source of the score Su, the precision P = Rt/Wt (eq. 1) and "
        "the queue index Sf (eq. 2)."),
    Reference(
        "green", "Pillon et al. 2020",
        "Maurício Pillon, Tathiana do Amarante, Guilherme Koslovski, Charles Miers (UDESC). Escalonamento de "
        "Tarefas em Grades Computacionais guiado pelo Consumo de Energia com os Algoritmos Easy Backfilling "
        "e HEFT, 2020.",
        "Authors and title from the paper; the year as the BUC paper cites it (\"Pillon et al. 2020\"); the "
        "venue is not in the text. Source of the overlap rate Δ (eqs. 2-4), the Nantes econome platform's "
        "power states and the experiments of Tables 2 and 3."),
    Reference(
        "easy", "Lifka 1995",
        "David A. Lifka. The ANL/IBM SP scheduling system. In: D. G. Feitelson and L. Rudolph (eds.), Job "
        "Scheduling Strategies for Parallel Processing (JSSPP 1995), LNCS 949, Springer, 1995, pp. 295-303.",
        "EASY backfilling, as analysed by Mu'alem and Feitelson 2001 (below)."),
    Reference(
        "conservative", "Mu'alem and Feitelson 2001",
        "Ahuva W. Mu'alem and Dror G. Feitelson. Utilization, predictability, workloads, and user runtime "
        "estimates in scheduling the IBM SP2 with backfilling. IEEE Transactions on Parallel and Distributed "
        "Systems 12(6):529-543, 2001.",
        "Conservative backfilling, and the analysis of EASY."),
    Reference(
        "heft", "Topcuoglu et al. 2002",
        "Haluk Topcuoglu, Salim Hariri and Min-You Wu. Performance-effective and low-complexity task "
        "scheduling for heterogeneous computing. IEEE Transactions on Parallel and Distributed Systems "
        "13(3):260-274, 2002.",
        "HEFT (Heterogeneous Earliest Finish Time), applied here to independent batch jobs."),
    Reference(
        "batsim", "Dutot et al. 2015",
        "Pierre-François Dutot, Michael Mercier, Millian Poquet and Olivier Richard. Batsim: a Realistic "
        "Language-Independent Resources and Jobs Management Systems Simulator. In: Job Scheduling Strategies "
        "for Parallel Processing (JSSPP 2015), Springer, pp. 178-197.",
        "The simulator whose inputs, protocol and outputs gridsched's engine reproduces (Batsim 4.2.1)."),
)}


def cite(keys: tuple[str, ...] | list[str]) -> list[str]:
    """The full references of ``keys`` (keys of :data:`REFERENCES`), in that order.

    Raises:
        KeyError: a key that is not in :data:`REFERENCES` (the message names it).
    """
    out = []
    for k in keys:
        try:
            out.append(REFERENCES[k].full)
        except KeyError:
            raise KeyError(f"no reference {k!r}; known: {', '.join(REFERENCES)}") from None
    return out
