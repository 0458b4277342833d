"""The terminal form of a large server: counts per client instead of a tools x clients grid.

A 5,000-tool server through 20 clients made a 5,000-row grid (18 MB, over a minute to print)
that nobody reads. Above ``GRID_LIMIT`` tools the terminal shows, per client, how many cells
have each verdict, and the triage list above it shows the first ``TRIAGE_LIMIT`` root causes;
``--verbose``, the HTML or the Markdown report have every cell.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcp_matrix.core.text import safe
from mcp_matrix.core.verdicts import COLOUR, SEVERITY
from mcp_matrix.report.grid import ASSUMED_KEY, ASSUMED_MARK

GRID_LIMIT = 200  # tools; a grid up to this many rows is still worth scrolling
TRIAGE_LIMIT = 25  # root causes shown for a large server (the rest: --verbose or a report)


def is_large(tool_count: int) -> bool:
    return tool_count > GRID_LIMIT


def write_counts(
    cells: Iterable[tuple[str, str]],
    console: Console,
    tool_count: int,
    assumed: Iterable[tuple[str, str]] = (),
) -> None:
    """``cells``: (client, verdict) of every cell; one row per client, one column per verdict
    seen. A count with a cell in ``assumed`` ((client, verdict) pairs resting on assumed
    evidence) carries the grid's ``ASSUMED_MARK``."""
    marked = set(assumed)
    per: dict[str, Counter] = {}
    for (client, verdict), n in Counter(cells).items():  # counted in C: 260,000 cells
        per.setdefault(client, Counter())[verdict] = n
    used = [v for v in SEVERITY if any(c[v] for c in per.values())]
    table = Table(
        title=f"{tool_count} tools: cells per client and verdict (the grid is in --report html:FILE)",
        title_justify="left",
    )
    table.add_column("client")
    for v in used:
        table.add_column(Text(v, style=COLOUR.get(v, "white")), justify="right")
    for client, counts in per.items():
        table.add_row(
            safe(client),
            *[
                f"{counts[v]}{ASSUMED_MARK if (client, v) in marked else ''}" if counts[v] else ""
                for v in used
            ],
        )
    console.print(table)
    if marked & {(c, v) for c, counts in per.items() for v in counts}:
        console.print(ASSUMED_KEY, style="dim", markup=False)


__all__ = ["GRID_LIMIT", "TRIAGE_LIMIT", "is_large", "write_counts"]
