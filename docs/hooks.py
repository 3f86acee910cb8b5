"""MkDocs hooks (``hooks:`` in mkdocs.yml): pages whose content comes from the code.

A page holds a marker on a line of its own, replaced at build time:

* ``<!-- generated: cli -->``: every ``gridsched`` command and option, from the argument parser
  (:func:`schedulers.cli.build_parser`), so the reference cannot drift from ``--help``;
* ``<!-- generated: policies -->``: every registered policy, its one-line summary, sources and
  options (:data:`schedulers.registry.POLICIES`, ``option_docs``);
* ``<!-- generated: bibliography -->``: the references of :mod:`schedulers.references`, each
  under a heading whose anchor is its key (``#osep``, ``#easy``...);
* ``<!-- generated: generators -->``: the scenario generators campaigns and ``gridsched scenario``
  use, with their parameters and defaults.

Each generator is a plain function of this module, so tests can call it.
"""

from __future__ import annotations

import argparse
import posixpath
import re
from typing import Any

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)

#: Bibliography sections and the keys of :data:`schedulers.references.REFERENCES` they hold.
BIBLIOGRAPHY_SECTIONS = (
    ("The source papers", ("osep", "forte2015", "hosep", "ehosep", "buc", "green")),
    ("Classic algorithms", ("easy", "conservative", "heft")),
    ("The simulator", ("batsim",)),
)


def _md(text: str) -> str:
    """Plain text made safe for Markdown prose: no HTML, no emphasis, no table cell breaks."""
    text = text.replace("\\", "\\\\").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("*", "\\*").replace("|", "\\|").replace("_", "\\_")
    return text


# --------------------------------------------------------------------------------------- cli
def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()  # noqa: SLF001 - argparse's own expansion of %(default)s
    return formatter._expand_help(action) if action.help else ""  # noqa: SLF001


def _invocation(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return parser._get_formatter()._format_action_invocation(action)  # noqa: SLF001


def _parser_md(prog: str, parser: argparse.ArgumentParser, depth: int, summary: str) -> list[str]:
    out = [f"{'#' * depth} `{prog}`", ""]
    desc = parser.description or summary.replace("%%", "%")   # (a sub-command's help, %-escaped for argparse)
    if desc:
        out += [_md(" ".join(desc.split())), ""]
    usage = parser.format_usage().strip().removeprefix("usage: ").splitlines()
    # (argparse indents the continuation lines under the program name after "usage: ")
    usage = usage[:1] + [ln.removeprefix(" " * len("usage: ")) for ln in usage[1:]]
    out += ["```text", *usage, "```", ""]
    subs: list[tuple[str, argparse.ArgumentParser, str]] = []
    rows = []
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            helps = {a.dest: a.help or "" for a in action._choices_actions}  # noqa: SLF001
            subs += [(name, p, helps.get(name, "")) for name, p in action.choices.items()]
            continue
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):  # noqa: SLF001
            continue
        text = _md(" ".join(_help(parser, action).split()))
        extra = []
        if action.required and action.option_strings:
            extra.append("required")
        if action.choices is not None and not isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            extra.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
        if (action.option_strings and action.default not in (None, False, [], argparse.SUPPRESS)
                and "default" not in text):
            extra.append(f"default `{action.default}`")
        tail = f" ({'; '.join(extra)})" if extra else ""
        rows.append(f"- `{_invocation(parser, action)}`: {text or 'see the description'}{tail}")
    if rows:
        out += rows + [""]
    for name, p, sub_help in subs:
        if p.description is None and not p._actions[1:]:  # noqa: SLF001 - an unbuilt placeholder
            continue
        out += _parser_md(f"{prog} {name}", p, min(depth + 1, 4), sub_help)
    return out


def cli_reference() -> str:
    """Every ``gridsched`` command, sub-command and option, as Markdown (headings from level 2)."""
    from schedulers.cli import build_parser

    parser = build_parser()
    lines = []
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            helps = {a.dest: a.help or "" for a in action._choices_actions}  # noqa: SLF001
            for name, p in action.choices.items():
                lines += _parser_md(f"gridsched {name}", p, 2, helps.get(name, ""))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- policies
def _cite_links(keys: tuple[str, ...], bib: str) -> str:
    from schedulers.references import REFERENCES

    return "; ".join(f"[{REFERENCES[k].short}]({bib}#{k})" for k in keys)


def policies_reference(bib: str = "../bibliography.md") -> str:
    """Every registered policy: its summary, its sources (links into the bibliography page at
    ``bib``, relative to the page), the Batsim features it needs and its options."""
    from schedulers.core.options import describe_options
    from schedulers.core.policy import batsim_flags
    from schedulers.registry import POLICIES, policy_summary

    out = ["| policy | what it does | sources |", "|---|---|---|"]
    for name in sorted(POLICIES):
        cls = POLICIES[name]
        out.append(f"| [`{name}`](#{name}) | {_md(policy_summary(cls))} | {_cite_links(cls.references, bib) or '-'} |")
    out.append("")
    for name in sorted(POLICIES):
        cls = POLICIES[name]
        out += [f"## `{name}` {{#{name}}}", "", _md(policy_summary(cls)), ""]
        out += [f"Class `{cls.__module__}.{cls.__qualname__}`."
                + (f" Sources: {_cite_links(cls.references, bib)}." if cls.references else ""), ""]
        flags = batsim_flags(cls)
        if flags:
            out += ["Needs Batsim's " + " and ".join(f"`{f}`" for f in flags)
                    + " (`gridsched run` and campaigns set them; give them to `batsim` yourself behind "
                    "`gridsched serve`).", ""]
        if cls.needs_speeds:
            out += ["Reads the hosts' speeds and cores: behind real Batsim, start `gridsched serve` with "
                    "`--platform FILE`.", ""]
        out += ["| option | values | default | meaning |", "|---|---|---|---|"]
        for opt, kind, default, doc in describe_options(cls.option_docs):
            out.append(f"| `{opt}` | {_md(kind)} | {_md(default)} | {_md(doc)} |")
        out.append("")
    return "\n".join(out)


# -------------------------------------------------------------------------------- generators
def generators_reference() -> str:
    """Every registered scenario generator (:data:`schedulers.inputs.generators.GENERATORS`): its
    name, what it builds and its parameters with their defaults."""
    from schedulers.inputs.generators import GENERATORS

    out = ["| generator | what it builds | parameters (defaults) |", "|---|---|---|"]
    for name, gen in GENERATORS.items():
        params = "<br>".join(f"`{k}` = `{v!r}`" + (f": {_md(gen.param_docs[k])}" if k in gen.param_docs else "")
                             for k, v in gen.params.items()) or "none"
        out.append(f"| `{name}` | {_md(' '.join(gen.doc.split()))} | {params} |")
    return "\n".join(out)


# ------------------------------------------------------------------------------ bibliography
def bibliography() -> str:
    """The references of :mod:`schedulers.references`, by section, each with its key as anchor.

    Raises:
        ValueError: a reference in no section, or a section naming an unknown key.
    """
    from schedulers.references import REFERENCES

    listed = [k for _, keys in BIBLIOGRAPHY_SECTIONS for k in keys]
    if sorted(listed) != sorted(REFERENCES):
        raise ValueError(f"bibliography sections {listed} do not list the references {list(REFERENCES)}")
    out = []
    for title, keys in BIBLIOGRAPHY_SECTIONS:
        out += [f"## {title}", ""]
        for k in keys:
            r = REFERENCES[k]
            out += [f"### {_md(r.short)} {{#{k}}}", "", _md(r.full), ""]
            if r.note:
                out += [_md(r.note), ""]
    return "\n".join(out)


GENERATORS = {"cli": lambda page: cli_reference(),
              "policies": lambda page: policies_reference(_relative(page, "bibliography.md")),
              "bibliography": lambda page: bibliography(),
              "generators": lambda page: generators_reference()}


def _relative(page: Any, target: str) -> str:
    """``target`` (a path under docs/) relative to ``page``'s folder."""
    here = posixpath.dirname(page.file.src_uri) if page is not None else ""
    return posixpath.relpath(target, here or ".")


def expand(markdown: str, page: Any = None) -> str:
    """``markdown`` with each marker replaced by its generated content.

    Raises:
        ValueError: an unknown marker name.
    """
    def one(m: re.Match) -> str:
        gen = GENERATORS.get(m.group(1))
        if gen is None:
            raise ValueError(f"unknown generated section {m.group(1)!r}; known: {', '.join(GENERATORS)}")
        return gen(page)
    return MARKER.sub(one, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs hook: expand the markers of every page."""
    return expand(markdown, page)
