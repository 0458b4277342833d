"""Markdown writer: the summary grid with its legend, then one section per client listing every
cell that is not intact or visible: what happens, why, the behaviour and its evidence, the fix.

Everything that came from the server or a profile (tool names, descriptions, reasons, notes)
is untrusted: it is escaped so it renders as text, a table cell stays one cell, and no HTML
reaches a renderer (``|``, ``<script>``, backticks, newlines and control characters included).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import IO
from urllib.parse import quote

from mcp_matrix.core.events import Event, typed_events
from mcp_matrix.core.verdicts import MEANING, SYMBOL
from mcp_matrix.report.cause import Cause
from mcp_matrix.report.cause_words import cause_title, cause_where, citable, problems
from mcp_matrix.report.document import Report, ReportCell
from mcp_matrix.report.grid import ASSUMED_KEY, ASSUMED_MARK, RELEASE_FAILING, assumed_cells
from mcp_matrix.report.json_report import describe_target
from mcp_matrix.report.model import read_model
from mcp_matrix.report.triage import build_triage

# Characters with an inline meaning in CommonMark/GFM wherever they stand (our text never
# starts a line, so block markers like # + - 1. need nothing); each gets a backslash. An
# underscore between two letters or digits cannot start or end emphasis, so it stays bare.
_SPECIAL = re.compile(r"([\\`*\[\]|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_ENTITIES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def visible(text: str) -> str:
    """Every non-printable character as an escape (``\\n``, ``\\x07``, ``\\u202e``), the rest as is."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def md(text: object, name: bool = False) -> str:
    """Escape untrusted text for Markdown inline use (a paragraph, list item or table cell).

    ``name``: an identifier (a tool name) keeps line breaks visible as ``\\n``; prose has
    its line breaks folded to spaces.
    """
    s = "" if text is None else str(text)
    if not name:
        s = re.sub(r"\s*[\r\n]+\s*", " ", s)
    s = visible(s)
    s = _SPECIAL.sub(lambda m: "\\" + m.group(0), s)
    return s.translate(_ENTITIES)


def md_source(source: str) -> str:
    """An evidence source: a link when it is an http(s) URL, escaped text otherwise."""
    if re.match(r"^https?://[^\s]+$", source or ""):
        url = quote(source, safe=":/?#@!$&*+,;=%~-._")
        return f"[{md(source)}]({url})"
    return md(source)


def label(cells: Sequence[ReportCell]) -> str:
    first = cells[0]
    cases = [c.case for c in cells if c.case]
    text = md(first.tool, name=True)
    if cases:
        text += " :: " + ", ".join(md(case, name=True) for case in cases)
    return text + (f" ({len(cells)} calls)" if len(cells) > 1 else "")


def _groups(cells: list[ReportCell]) -> list[list[ReportCell]]:
    """Calls of one tool that share everything but the case name are listed once, with every case."""
    out: list[list[ReportCell]] = []
    index: dict[str, int] = {}
    for c in cells:
        if c.kind != "call":
            out.append([c])
            continue
        key = repr(
            (
                c.tool,
                c.verdict,
                c.reason,
                c.behaviours,
                c.evidence,
                c.advice,
                c.pointer,
                c.mutations,
                c.frequency,
                c.release_failing,
            )
        )
        if key in index:
            out[index[key]].append(c)
        else:
            index[key] = len(out)
            out.append([c])
    return out


def write_markdown(
    events: Iterable[Event], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    events = typed_events(events)
    stream.write(render_markdown(read_model(events, failing), build_triage(events)))


def problems_section(causes: list[Cause] | None) -> list[str]:
    """The "problems to fix" list every report opens with (the terminal's triage, as Markdown)."""
    if causes is None:
        return []
    todo = problems(causes)
    out = ["## Problems to fix\n"]
    if not todo:
        out.append("No problems to fix: every cell is visible, intact or tolerated.\n")
    for i, c in enumerate(todo, 1):
        out.append(f"{i}. **{md(c.verdict)}**: {md(cause_title(c))}")
        out.append(f"   - {md(cause_where(c))}")
        if c.fix:
            out.append(f"   - fix: {md(c.fix)}")
        sources = [md_source(citable(src)) for _, src in c.evidence[:3]]
        if sources:
            out.append(f"   - evidence ({md(c.weakest or '?')}): " + "; ".join(sources))
    notes = [c for c in causes if c.stricter]
    for c in notes:
        out.append(
            f"- note (a stricter schema, not a loss): {md(c.summary)} ({len(c.tools)} tool(s), in "
            f"{md(', '.join(c.clients))})"
        )
    out.append("")
    return out


def render_markdown(doc: Report, causes: list[Cause] | None = None) -> str:
    out: list[str] = []
    w = out.append
    server = doc.server or {}
    title = " ".join(
        x
        for x in (md(server.get("name") or "unknown server"), md(server.get("version") or ""))
        if x
    )
    w(f"# mcp-matrix report: {title}\n")
    out.extend(problems_section(causes))
    w(_metadata(doc))
    w("## Summary\n")
    w(_grid(doc))
    w("")
    w(_legend(doc))
    w("")
    cells = doc.cells
    for p in doc.profiles:
        mine = [c for c in cells if c.profile == p.name and c.finding]
        w(f"## {md(p.name)}\n")
        about = " · ".join(md(x) for x in (p.client, p.versions) if x)
        if about:
            w(
                f"{about}"
                + (f" · weakest evidence: {md(p.weakest_evidence)}" if p.weakest_evidence else "")
                + "\n"
            )
        if not mine:
            w("Every tool is visible and every call arrived intact.\n")
            continue
        for group in _groups(
            sorted(mine, key=lambda c: (c.severity, c.tool, c.kind, c.case or ""))
        ):
            w(_cell(group))
    if doc.skipped:
        w("## Skipped calls\n")
        for s in doc.skipped:
            w(
                f"- {md(s.tool, name=True)}"
                + (f" :: {md(s.case, name=True)}" if s.case else "")
                + f": {md(s.reason)}"
            )
        w("")
    if doc.profile_errors:
        w("## Profile errors\n")
        for e in doc.profile_errors:
            w(f"- {md(e.profile)}: {md(e.error)}")
        w("")
    return "\n".join(out).rstrip("\n") + "\n"


def _metadata(doc: Report) -> str:
    lines = []
    runs = doc.runs
    for r in runs:
        server = r.server or {}
        status = (
            ("interrupted" if r.interrupted else "not measured" if not r.measured else "finished")
            if r.finished
            else "unfinished (no run-finished event)"
        )
        prefix = f"- Run {md(r.run_id or '?')}" if len(runs) > 1 else "- Run"
        lines.append(
            f"{prefix}: {status}; started {md(r.started_at or '?')}"
            + (f", finished {md(r.finished_at)}" if r.finished_at else "")
            + f"; mcp-matrix {md(r.mcp_matrix or '?')}"
        )
        if len(runs) > 1:
            lines.append(
                f"  - Server: {md(server.get('name') or '?')} {md(server.get('version') or '')}".rstrip()
            )
        lines.append(f"  - Target: {md(describe_target(r.target))}")
        if r.protocolVersion:
            lines.append(f"  - Protocol version: {md(r.protocolVersion)}")
        if r.cases:
            lines.append(f"  - Cases: {md(r.cases)}")
        if r.baseline:
            lines.append(f"  - Baseline: {md(r.baseline)}")
        if isinstance(r.error, Mapping):
            lines.append(f"  - Could not measure: {md(r.error.get('message') or '')}")
    counts = doc.counts
    lines.append(
        f"- {len(doc.tools)} tools × {len(doc.grid.profiles)} clients; {counts.cells} cells, "
        f"{counts.findings} findings, {counts.release_failing} release-failing "
        f"({md(', '.join(doc.release_failing) or 'none')})"
    )
    return "\n".join(lines) + "\n"


def _grid(doc: Report) -> str:
    profiles = doc.grid.profiles
    rows = [
        "| tool | " + " | ".join(md(p) for p in profiles) + " |",
        "|---|" + "|".join(":-:" for _ in profiles) + "|",
    ]
    worst = {(r.tool, p): v for r in doc.grid.rows for p, v in zip(profiles, r.cells)}
    marked = assumed_cells(doc.cells, lambda tool, profile: worst.get((tool, profile)))
    for row in doc.grid.rows:
        cells = [
            f"{SYMBOL[v]} {v}" + (md(ASSUMED_MARK) if (row.tool, p) in marked else "") if v else ""
            for p, v in zip(profiles, row.cells)
        ]
        rows.append(f"| {md(row.tool, name=True)} | " + " | ".join(cells) + " |")
    if marked:
        rows.append("\n" + md(ASSUMED_KEY))
    return "\n".join(rows)


def _legend(doc: Report) -> str:
    return (
        "Legend: " + "; ".join(f"{x.symbol} **{x.verdict}**: {md(x.meaning)}" for x in doc.legend)
        if doc.legend
        else "Legend: no cells."
    )


def _cell(group: list[ReportCell]) -> str:
    c = group[0]
    lines = [
        f"### {c.symbol} {label(group)}: {c.verdict}"
        + (" (release-failing)" if c.release_failing else "")
        + "\n"
    ]
    what = MEANING.get(c.verdict, "")
    if c.kind == "call" and c.frequency == "sometimes":
        what += " (sometimes: only in some of this client's variants)"
    lines.append(
        f"- **What happens**: {md(what)}"
        + (f"; blast radius: {md(c.blast_radius)}" if c.blast_radius else "")
    )
    findings = c.findings
    if c.reason:
        own = (
            f" ({md(findings[0].code)})"
            if len(findings) == 1 and findings[0].message == c.reason
            else ""
        )
        lines.append(f"- **Why**: {md(c.reason)}{own}")
    for f in (
        findings if len(findings) > 1 or (findings and findings[0].message != c.reason) else ()
    ):
        where = f" at {md(f.snapshot_pointer)}" if f.snapshot_pointer else ""
        by = f" by {md(f.behaviour)}" if f.behaviour else ""
        lines.append(f"  - {md(f.code)}{by}{where}: {md(f.message)}")
    if c.mutations:
        lines.append(
            "- **Mutations**: "
            + "; ".join(f"{md(m.kind)} at {md(m.pointer or '/')}" for m in c.mutations[:8])
            + (f"; and {len(c.mutations) - 8} more" if len(c.mutations) > 8 else "")
        )
    if c.pointer:
        lines.append(f"- **Where**: snapshot {md(c.pointer)}")
    if c.behaviours:
        lines.append(
            f"- **Behaviour**: {', '.join(md(b) for b in c.behaviours)}"
            + (f" (weakest evidence: {md(c.weakest_evidence)})" if c.weakest_evidence else "")
        )
    for ev in c.evidence:
        parts = [md(ev.level)]
        if ev.source:
            parts.append(md_source(ev.source))
        text = " ".join(parts) + (f": {md(ev.note)}" if ev.note else "")
        lines.append(f"  - Evidence{' for ' + md(ev.behaviour) if ev.behaviour else ''}: {text}")
    if c.advice:
        lines.append(f"- **Fix**: {md(c.advice)}")
    return "\n".join(lines) + "\n"


__all__ = ["md", "render_markdown", "visible", "write_markdown"]
