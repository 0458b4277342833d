"""``mcp-matrix discover``: which tools each client shows, and what its model sees."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.table import Table

from matrix.commands.common import add_target_options, snapshot_from
from matrix.discovery import discover_all
from matrix.profiles.loader import load_profiles, select_profiles
from matrix.report.discovery_doc import write_discovery
from matrix.text import markup, terminal_console
from matrix.verdicts import COLOUR, MEANING, SYMBOL


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "discover",
        help="which tools each client can see (offline on a snapshot, or live)",
        description="Run every client profile's discovery rules over a snapshot (or a live target) and "
        "print a tools x clients grid, with the reason for every cell that is not visible.",
    )
    add_target_options(p)
    p.add_argument("--client", action="append", default=[], metavar="NAME", help="only these profiles (repeatable)")
    p.add_argument("--profiles-dir", action="append", default=[], metavar="DIR", help="extra profile YAML dirs")
    p.add_argument("--json", action="store_true", help="machine output on stdout, nothing else")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    profiles = select_profiles(load_profiles(extra_dirs=args.profiles_dir), args.client)
    snap = snapshot_from(args, default_server=None)
    views = discover_all(snap, profiles, server=args.name or None)
    if args.json:
        names = _tool_names(views)
        write_discovery(sys.stdout, views, names, snap.doc.get("serverInfo"), snap.error)
        return 0
    console = terminal_console()
    if snap.error:
        console.print(f"[red]snapshot incomplete:[/] {markup(snap.error.get('message', ''))}")
    print_grid(console, snap, views)
    return 0


def _tool_names(views) -> list[str]:
    """The snapshot's tool names by index (every view lists every tool)."""
    names: dict[int, str] = {t.index: t.tool for t in views[0].tools} if views else {}
    return [names.get(i, f"#{i}") for i in range(max(names, default=-1) + 1)]


def print_grid(console: Console, snap, views) -> None:
    table = Table(show_lines=False)
    table.add_column("tool")
    for v in views:
        table.add_column(markup(v.profile), justify="center")
    names = [t.tool for t in views[0].tools] if views else []
    for i, name in enumerate(names):
        cells = []
        for v in views:
            verdict = v.tools[i].verdict
            cells.append(f"[{COLOUR[verdict]}]{SYMBOL[verdict]}[/]")
        table.add_row(markup(name), *cells)
    console.print(table)
    used = sorted({t.verdict for v in views for t in v.tools}, key=list(MEANING).index)
    console.print("  ".join(f"[{COLOUR[x]}]{SYMBOL[x]}[/] {x}: {MEANING[x]}" for x in used))
    for v in views:
        bad = [t for t in v.tools if t.verdict != "visible"]
        if not bad:
            continue
        console.print(f"\n[bold]{markup(v.profile)}[/]")
        for t in bad:
            console.print(f"  [{COLOUR[t.verdict]}]{t.verdict}[/] {markup(t.tool)}")
            for f in t.findings[:8]:
                ev = ", ".join(f"{e.level}: {e.source}" for e in f.evidence[:2])
                console.print(f"    - {markup(f.message)} [dim]({markup(f.behaviour)}; {markup(ev)})[/]")

