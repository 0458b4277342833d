"""A root cause in words: what to fix in one sentence, where it hits, the names listed, the
evidence a reader can follow. Every writer words a cause with these, so the terminal, Markdown,
HTML, summary and GitHub lists read the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mcp_matrix.core.verdicts import rank
from mcp_matrix.report.cause import Cause

LIST_LIMIT = 6  # names listed before "and N more"
# A bare section number ("§4", "notes.md §4, §7 [CODE]:"): it names no page a reader can open.
# The bundled profiles cite URLs, calibration records and docs/clients/<page>.md#<section>.
_SECTION_NUMBERS = re.compile(
    r"\s*\(?(?:[\w./-]+\.md\s*)?§\s*[\d.]+(?:\s*,\s*§?\s*[\d.]+)*\)?(?:\s*\[[A-Z]+\])?:?"
)


def citable(note: str) -> str:
    """An evidence source as a reader can follow it: URLs, calibration records and docs/clients/
    anchors whole, bare section numbers of some other document dropped."""
    return re.sub(r"\s{2,}", " ", _SECTION_NUMBERS.sub("", note or "")).strip()


def name_list(items: list[str], limit: int = LIST_LIMIT, show: Callable[[str], str] = str) -> str:
    shown = ", ".join(show(i) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def whole_server(c: Cause) -> bool:
    """A cause no single tool carries: every tool's own cell has it (the handshake, the era)."""
    return not c.tool and len(c.culprits) > 1


def cause_title(
    c: Cause, show: Callable[[str], str] = str, prose: Callable[[str], str] = str
) -> str:
    """What to fix, in one sentence. Every writer words a cause with this (and ``cause_where``),
    so the terminal, Markdown and HTML lists read the same; ``show`` and ``prose`` make names and
    messages from the server safe for the medium (the terminal's sanitiser; identity where the
    writer escapes)."""
    if c.keywords:
        verb = "change" if c.code.startswith("changed") else "drop"
        return (
            f"clients {verb} {', '.join(repr(k) for k in c.keywords)} in {len(c.tools)} tool(s): "
            f"{name_list(c.tools, 4, show)}"
        )
    if whole_server(c):
        who = f"the server (all {len(c.tools)} tools)"
    else:
        who = show(c.tool) if c.tool else name_list(c.tools, 4, show)
    summary = c.summary.split(" Fix: ", 1)[0] if c.fix else c.summary  # the fix has its own line
    return f"{who}: {prose(summary)}"


def cause_where(c: Cause, show: Callable[[str], str] = str) -> str:
    """The clients a cause hits (by verdict) and its blast radius, in one line."""
    parts = []
    for verdict in sorted(c.by_verdict, key=rank):
        clients = c.by_verdict[verdict]
        parts.append(
            f"{verdict} in {name_list(clients, show=show)}"
            if len(c.by_verdict) > 1 or not c.keywords
            else f"in {name_list(clients, show=show)}"
        )
    blast = []
    radius = f"blast radius: {c.blast_radius}"
    if c.session_tools:  # the other tools' cells are their own: say what the refusal takes
        where = "this client" if len(c.clients) == 1 else "each of these clients"
        radius = (
            f"blast radius: every tool of this server in {where} ({c.session_tools} tools), "
            "if the request is refused; the other cells show each tool as if it were accepted"
        )
    elif c.blast_radius == "run":  # a library raised the failure to the program
        radius = "blast radius: the whole agent run, every other server attached to it included"
        if len(c.tools) > 1:
            blast.append(f"takes down {len(c.tools)} tools of this server")
    elif c.blast_radius in ("server", "session") and len(c.tools) > 1:
        blast.append(f"takes down {len(c.tools)} tools")
    if c.calls_lost:
        blast.append(f"{c.calls_lost} calls could not be made")
    if c.optional:
        blast.append("not required by default (an opt-in configuration or a probe)")
    return " · ".join(parts + ([radius] if c.blast_radius != "tool" else []) + blast)


def problems(causes: list[Cause]) -> list[Cause]:
    """The causes that are problems to fix: not the stricter-schema notes, nor the safe outcomes
    (a loud refusal whose advice is to keep validating strictly: nothing to change)."""
    return [c for c in causes if not c.stricter and not c.safe]


def safe_outcomes(causes: list[Cause]) -> list[Cause]:
    """Loud refusals the model reads and retries on: the server does right, nothing to fix."""
    return [c for c in causes if c.safe and not c.stricter]


__all__ = [
    "LIST_LIMIT",
    "cause_title",
    "cause_where",
    "citable",
    "name_list",
    "problems",
    "safe_outcomes",
    "whole_server",
]
