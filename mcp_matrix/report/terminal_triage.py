"""The terminal's list of problems to fix first: one entry per root cause of the triage
(``mcp_matrix.report.triage``), worst first, worded as every writer words it
(``mcp_matrix.report.cause_words``) in the terminal's safe text.
"""

from __future__ import annotations

import textwrap

from rich.console import Console
from rich.text import Text

from mcp_matrix.core.verdicts import COLOUR
from mcp_matrix.report import cause_words
from mcp_matrix.report.cause import Cause
from mcp_matrix.report.cause_words import citable, problems, safe_outcomes
from mcp_matrix.report.terminal_text import clean, names, print_wrapped, printable, text_width


def cause_title(c: Cause) -> str:
    return cause_words.cause_title(c, printable, clean)


def cause_where(c: Cause) -> str:
    return cause_words.cause_where(c, printable)


def evidence_line(c: Cause, limit: int = 1) -> str:
    seen = []
    for level, source in c.evidence:
        item = f"{level} {clean(citable(source))}"
        if item not in seen:
            seen.append(item)
    text = "; ".join(seen[:limit]) + (
        f"; and {len(seen) - limit} more" if len(seen) > limit else ""
    )
    weakest = f" (weakest: {c.weakest})" if c.weakest else ""
    return (text or "no source cited") + weakest


def write_triage(
    causes: list[Cause],
    console: Console,
    verbose: bool = True,
    limit: int | None = None,
    unmeasured: bool = False,
) -> None:
    """``limit``: show only the first causes (a large server), then say how many were left out.
    ``unmeasured``: some cells could not be measured, so an empty list is no all-clear."""
    todo = problems(causes)
    notes = [c for c in causes if c.stricter]
    if not todo and unmeasured:
        console.print(
            Text(
                "No problem among the cells measured, but not every cell was measured "
                "(could not measure: see above, on stderr); nothing about those passed.",
                style="yellow",
            ),
            soft_wrap=True,
        )
    elif not todo:
        loud = " (or loud, the safe outcome: below)" if safe_outcomes(causes) else ""
        console.print(
            Text(
                f"No problems to fix: every cell is visible, intact or tolerated{loud}.",
                style="green",
            ),
            soft_wrap=True,
        )
    else:
        cells = sum(c.cells for c in todo)
        console.print(
            Text(
                f"Problems to fix, worst first ({len(todo)} root cause(s), {cells} cell(s)):",
                style="bold",
            )
        )
    width = max((len(c.verdict) for c in todo), default=0)
    for i, c in enumerate(todo[:limit] if limit else todo, 1):
        number = f"{i:>2}. "
        head = (
            Text(number)
            + Text(f"{c.verdict:<{width}}", style=COLOUR.get(c.verdict, ""))
            + Text("  ")
        )
        title = textwrap.wrap(
            cause_title(c), width=text_width(console) - len(head), break_on_hyphens=False
        ) or [""]
        console.print(head + Text(title[0]), soft_wrap=True)
        for line in title[1:]:
            console.print(" " * len(head) + line, soft_wrap=True, markup=False)
        indent = " " * len(number)
        print_wrapped(console, cause_where(c), 0, first=indent + "   ")
        if c.lost and verbose:
            print_wrapped(
                console, "loses: " + names([clean(x) for x in c.lost], 8), 0, first=indent + "   "
            )
        if c.fix:
            print_wrapped(console, clean(c.fix), 0, first=indent + "   fix: ")
        print_wrapped(
            console,
            evidence_line(c, 5 if verbose else 1),
            0,
            first=indent + "   evidence: ",
            style="dim",
        )
    if limit and len(todo) > limit:
        console.print(
            Text(
                f"... and {len(todo) - limit} more root causes (--verbose, or a report: --report md:FILE)",
                style="dim",
            ),
            soft_wrap=True,
        )
    safe_ones = safe_outcomes(causes)
    if safe_ones:
        console.print(
            Text(
                "Loud, the safe outcome: the model reads the error and retries (nothing to fix; "
                "keep validating strictly):",
                style="dim",
            ),
            soft_wrap=True,
        )
    for c in safe_ones:
        print_wrapped(
            console,
            f"{cause_title(c)} ({c.cells} cell(s), in {names(c.clients)})",
            0,
            first="  - ",
            style="dim",
        )
    for c in notes:
        print_wrapped(
            console,
            f"{clean(c.summary)} ({len(c.tools)} tool(s), in {names(c.clients)})",
            0,
            first="note (a stricter schema, not a loss): ",
            style="dim",
        )


__all__ = ["cause_title", "cause_where", "evidence_line", "write_triage"]
