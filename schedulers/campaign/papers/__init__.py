"""The papers' own sections of a campaign report (``[report] paper = "NAME"``).

Each is a function ``section(table, summary, out_dir) -> list of Markdown lines`` over the
campaign's runs table and summary (:func:`..collect.tables`), written before the generic tables
by :func:`..report.write_report`: the paper's numbers beside ours, its claims checked one by one
(a claims table: claim, source line, our number, verdict), what the paper leaves unspecified with
the value we chose, and how much each headline moves with those choices.

* ``hosep``: OSEP and HOSEP (:mod:`.hosep`); ``hosep-sensitivity``: their sensitivity campaign;
* ``ehosep``: EHOSEP (:mod:`.ehosep`);
* ``buc``: BUC (:mod:`.buc`);
* ``owner-lille``: the owner-share policies on Lille's clusters (:mod:`.owner_lille`).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

import pandas as pd

__all__ = ["PAPERS", "CITATION_KEY"]

#: The line a report with a paper section opens that section with: how its citations read
#: (the numbers of the project's plain-text copies of the papers, ``docs/bibliography.md``).
CITATION_KEY = ("The papers are cited by the number of the project's plain-text copy (`../shared/papers/NNN_*.txt`, "
                "`L<n>` a line of it): 000 the HOSEP paper (Forte et al. 2016), 001 the monograph behind it "
                "(Forte 2015), 002 the BUC paper (Corrêa and Pillon 2020), 003 the EHOSEP paper, 004 the green "
                "heuristic paper (Pillon et al. 2020); `docs/bibliography.md` gives the full references.")

Section = Callable[[pd.DataFrame, pd.DataFrame, Path], list]


class _Lazy(dict):
    """Paper name -> section function, its module imported on first use."""

    _MODULES = {"hosep": "hosep:section", "hosep-sensitivity": "hosep:sensitivity_section",
                "ehosep": "ehosep:section", "buc": "buc:section", "owner-lille": "owner_lille:section"}

    def __init__(self) -> None:
        super().__init__({k: None for k in self._MODULES})

    def __getitem__(self, name: str) -> Section:
        fn = super().__getitem__(name)
        if fn is None:
            module, attr = self._MODULES[name].split(":")
            fn = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
            self[name] = fn
        return fn


#: Paper sections by the name ``[report] paper`` gives.
PAPERS: dict[str, Section] = _Lazy()
