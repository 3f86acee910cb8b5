"""Griffe extension (mkdocs.yml, mkdocstrings' ``extensions``): the package's docstrings write
cross-references the Sphinx way (``:class:`~schedulers.core.model.Job```); mkdocstrings renders
Markdown, so each role becomes a code span: its label, or the last part of its target with ``~``,
or the whole target."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:data|meth|class|func|attr|mod|exc|obj|const|ref):`(~?)([^`<]*?)\s*(?:<([^>`]+)>)?`")


def plain(text: str) -> str:
    """``text`` with every Sphinx cross-reference role replaced by a Markdown code span."""
    def one(m: re.Match) -> str:
        tilde, label, target = m.groups()
        if target is not None and label:
            return f"`{label}`"
        name = (target or label).strip()
        return f"`{name.rsplit('.', 1)[-1] if tilde else name}`"
    return ROLE.sub(one, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain(obj.docstring.value)
