"""Terminal writer (rich): the grid with a symbol and colour per cell, the legend, then the findings."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from matrix.advice import advice_for
from matrix.report.grid import build_grid
from matrix.text import markup, safe
from matrix.verdicts import COLOUR, MEANING, SEVERITY, SYMBOL, rank


def printable(text: str) -> str:
    return safe(text)


def clean(text: str) -> str:
    """Untrusted prose for a terminal: line breaks folded, control characters shown as escapes."""
    return safe(text, fold=True)


def write_terminal(events: list[dict], console: Console, details: bool = True) -> None:
    grid = build_grid(events)
    start = next((e for e in events if e.get("event") == "run-started"), {})
    finish = next((e for e in events if e.get("event") == "run-finished"), None)
    server = start.get("server") or {}
    console.print(
        f"[bold]{markup(str(server.get('name', '?')))}[/] {markup(str(server.get('version', '')))} "
        f"· {len(grid.tools)} tools · {len(grid.profiles)} clients"
        + (" · [yellow]interrupted[/]" if finish and finish.get("interrupted") else "")
        + ("" if finish else " · [yellow]unfinished run[/]")
    )
    table = Table(show_lines=False, pad_edge=False)
    table.add_column("tool", no_wrap=True)
    needed = max((len(printable(t)) for t in grid.tools), default=4) + sum(len(p) + 3 for p in grid.profiles) + 4
    if not console.is_terminal and console.width < needed:
        console.width = needed  # a file or a pipe: no reason to squeeze
    numbered = needed > console.width  # too narrow for names: number the columns and print a key
    if numbered:
        table.padding = (0, 0)
    for i, p in enumerate(grid.profiles, 1):
        table.add_column(str(i) if numbered else markup(p), justify="center", no_wrap=True)
    # Text, not markup, per row and per finding: parsing markup made a 10,000-tool run's
    # terminal report take half a minute.
    for tool in grid.tools:
        row = []
        for p in grid.profiles:
            v = grid.worst(tool, p)
            row.append(Text(SYMBOL.get(v, "?"), style=COLOUR.get(v, "white")) if v else "")
        table.add_row(Text(printable(tool)), *row)
    console.print(table)
    if numbered:
        console.print("  ".join(f"{i}={markup(p)}" for i, p in enumerate(grid.profiles, 1)))
    used = {e["verdict"] for es in grid.cells.values() for e in es}
    console.print("  ".join(f"[{COLOUR[v]}]{SYMBOL[v]}[/] {v}" for v in SEVERITY if v in used))
    if not details:
        return
    snapshot = next((e.get("snapshot") for e in events if e.get("event") == "snapshot"), None) or {}
    tools: dict[str, dict] = {}
    for t in snapshot.get("tools") or []:  # the first tool of a name; a name that is no string names nothing
        tool = t.get("tool") if isinstance(t, dict) else None
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            tools.setdefault(tool["name"], tool)
    for e in sorted(grid.not_fine(), key=lambda e: (rank(e["verdict"]), e["profile"], e["tool"])):
        label = printable(str(e["tool"])) + (f"::{printable(str(e['case']))}" if e.get("case") else "")
        reason = e.get("reason") or "; ".join(f.get("message", "") for f in e.get("findings", [])[-2:])
        ev = e.get("weakest_evidence")
        line = Text.assemble(
            (f"{e['verdict']:>17}", COLOUR.get(e["verdict"], "white")), " ", (str(e["profile"]), "bold"),
            f" {label}: {clean(reason)}",
        )
        if ev:
            line.append(f" (evidence: {ev})", "dim")
        console.print(line)
        fix = advice_for(e, tools.get(e.get("tool")))
        if fix:
            console.print(Text.assemble(f"{'':>17} ", ("fix:", "dim"), f" {fix}"))
    skipped = [e for e in events if e.get("event") == "skipped"]
    for e in skipped:
        console.print(Text(f"{'skipped':>17} {printable(str(e['tool']))}: {clean(str(e['reason']))}", style="dim"))
    if finish and not finish.get("measured", True):
        err = finish.get("error") or {}
        console.print(f"[red]could not measure:[/] {markup(clean(str(err.get('message', ''))))}")


__all__ = ["MEANING", "write_terminal"]
