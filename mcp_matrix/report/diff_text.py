"""The ``diff`` report as the terminal, Markdown or JSON (``format: mcp-matrix.diff``).

Plain words first: which change, which callers and clients break, and what to do instead.
Everything that came from a server (tool names, messages) is escaped: ``markup`` on the
terminal, ``md`` in Markdown.
"""

from __future__ import annotations

import json
import sys
from typing import IO

from rich.console import Console
from rich.text import Text

from mcp_matrix.core.text import markup, terminal_console
from mcp_matrix.core.verdicts import COLOUR
from mcp_matrix.evolution import SEVERITIES, Change, Diff
from mcp_matrix.evolution.model import POPULATION_LABEL
from mcp_matrix.report.markdown import md

SEVERITY_STYLE = {"breaking": "bold red", "risky": "yellow", "safe": "green"}
EFFECT_STYLE = {
    "permanent-loss": "bold red",
    "diverges": "magenta",
    "silent-loss": "bold magenta",
    "silent-change": "magenta",
    "blocked": "red",
    "recovers": "cyan",
    "unaffected": "green",
}
FORMATS = ("terminal", "md", "json")


# -- writers --------------------------------------------------------------------------------------


def write(result: Diff, fmt: str, fail_on: str, output: str | None) -> None:
    if output:
        with open(output, "w", encoding="utf-8") as stream:
            _write(result, fmt, fail_on, stream, to_terminal=False)
    else:
        _write(result, fmt, fail_on, sys.stdout, to_terminal=True)


def _write(result: Diff, fmt: str, fail_on: str, stream: IO[str], to_terminal: bool) -> None:
    if fmt == "json":
        stream.write(json.dumps(result.to_json(fail_on), indent=2, ensure_ascii=False) + "\n")
    elif fmt == "md":
        stream.write(render_markdown(result, fail_on))
    else:
        console = terminal_console(
            file=stream,
            soft_wrap=not to_terminal,
            force_terminal=None if to_terminal else False,
        )
        render_terminal(result, fail_on, console)


def _grouped(change: Change) -> list[tuple[str, str, list[str]]]:
    """Client effects grouped by (effect, message): one line per distinct outcome."""
    groups: dict[tuple[str, str], list[str]] = {}
    for e in change.clients:
        groups.setdefault((e.effect, e.message), []).append(e.profile)
    return [(effect, message, names) for (effect, message), names in groups.items()]


def _summary(result: Diff, fail_on: str) -> tuple[str, bool]:
    counts = result.counts()
    text = ", ".join(f"{counts[s]} {s}" for s in SEVERITIES)
    return text, bool(result.failing(fail_on))


def _plain(effect: str) -> str:
    return (
        effect.replace("-", " ")
        if effect in ("permanent-loss", "silent-loss", "silent-change")
        else effect
    )


def _shows_detail(change: Change) -> bool:
    return (
        change.severity != "safe"
        or bool(change.advice)
        or any(p.effect != "unaffected" for p in change.populations)
    )


def render_terminal(result: Diff, fail_on: str, console: Console) -> None:
    """Plain words first: which change, which callers and clients break, and what to do instead."""

    def line(text: str, indent: int = 0, hang: int = 0) -> None:
        # Wrapped by hand with a hanging indent and no trailing spaces (clean when piped).
        parts = Text.from_markup(text).wrap(console, max(20, console.width - indent - hang))
        for i, part in enumerate(parts):
            part.rstrip()
            console.print(Text(" " * (indent + (hang if i else 0))) + part, soft_wrap=True)

    counts, failed = _summary(result, fail_on)
    line(f"[bold]mcp-matrix diff[/]  {markup(result.old.label)}  ->  {markup(result.new.label)}")
    caching = (
        f"; {len(result.caching)} keep a cached tool list ({', '.join(result.caching)})"
        if result.caching
        else ""
    )
    line(f"{len(result.profiles)} client profiles{markup(caching)}")
    for name, lives in result.stale_for.items():
        line(f"  a stale schema lives in {markup(name)} {markup(lives)}")
    if not result.changes:
        line("[green]No changes: the two tool lists are the same.[/]")
    for change in result.changes:
        console.print()
        style = SEVERITY_STYLE[change.severity]
        line(
            f"[{style}]{change.severity.upper()}[/]  [bold]{markup(change.tool)}[/]: {markup(change.message)}"
            f"  [dim]{change.kind}[/]"
        )
        if not _shows_detail(change):
            for effect, message, names in _grouped(change):
                line(
                    f"[{COLOUR.get(effect, '')}]{markup(effect)}[/] in {markup(', '.join(names))}: {markup(message)}",
                    4,
                )
            continue
        if change.reasons:
            line(f"[dim]why {change.severity}:[/] {markup('; '.join(change.reasons))}", 2)
        if any(p.effect != "unaffected" for p in change.populations):
            line("[bold]frozen callers[/]", 2)
            for p in change.populations:
                st = EFFECT_STYLE.get(p.effect, "")
                line(
                    f"{POPULATION_LABEL[p.population]}: [{st}]{_plain(p.effect)}[/]. {markup(p.message)}",
                    4,
                )
        if change.clients:
            line("[bold]clients[/]", 2)
            for effect, message, names in _grouped(change):
                line(
                    f"[{COLOUR.get(effect, '')}]{markup(effect)}[/] in {markup(', '.join(names))}: {markup(message)}",
                    4,
                )
        if change.advice:
            line("[bold]do instead[/]", 2)
            for piece in change.advice:
                line(f"- {markup(piece)}", 4, hang=2)
    console.print()
    verdict = "[bold red]FAIL[/]" if failed else "[green]OK[/]"
    line(f"{counts}.  --fail-on {fail_on}: {verdict}")


def render_markdown(result: Diff, fail_on: str) -> str:
    counts, failed = _summary(result, fail_on)
    out = ["# mcp-matrix diff", ""]
    out.append(f"- **Old:** {md(result.old.label)}")
    out.append(f"- **New:** {md(result.new.label)}")
    out.append(
        f"- **Clients:** {len(result.profiles)} profiles"
        + (
            f"; keeping a cached tool list: {md(', '.join(result.caching))}"
            if result.caching
            else ""
        )
    )
    out.append(f"- **Result:** {counts}; `--fail-on {fail_on}`: **{'FAIL' if failed else 'OK'}**")
    out.append("")
    if not result.changes:
        out += ["No changes: the two tool lists are the same.", ""]
        return "\n".join(out)
    out += ["| severity | tool | change | kind |", "|---|---|---|---|"]
    for c in result.changes:
        out.append(f"| {c.severity} | {md(c.tool, name=True)} | {md(c.message)} | `{c.kind}` |")
    out.append("")
    for c in result.changes:
        if not _shows_detail(c) and not c.clients:
            continue
        out += [f"## {c.severity.capitalize()}: {md(c.tool, name=True)}: {md(c.message)}", ""]
        out += [f"Kind: `{c.kind}`" + (f"; where: {md(c.pointer)}" if c.pointer else ""), ""]
        if c.reasons:
            out += [f"Why {c.severity}: {md('; '.join(c.reasons))}", ""]
        if any(p.effect != "unaffected" for p in c.populations):
            out += ["| frozen callers | effect | what happens |", "|---|---|---|"]
            for p in c.populations:
                out.append(
                    f"| {POPULATION_LABEL[p.population]} | {_plain(p.effect)} | {md(p.message)} |"
                )
            out.append("")
        if c.clients:
            out += ["| effect | clients | what happens |", "|---|---|---|"]
            for effect, message, names in _grouped(c):
                out.append(f"| {md(effect)} | {md(', '.join(names))} | {md(message)} |")
            out.append("")
        if c.advice:
            out += ["**Do instead**", ""] + [f"- {md(a)}" for a in c.advice] + [""]
    return "\n".join(out)


__all__ = ["FORMATS", "render_markdown", "render_terminal", "write"]
