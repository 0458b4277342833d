"""``mcp-matrix snapshot``: record what a client learns on connect, or summarise a snapshot file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from mcp_matrix.commands.common import add_target_options, snapshot_from, target_from
from mcp_matrix.commands.signals import interrupted_exit_code
from mcp_matrix.core.errors import EXIT_UNMEASURABLE
from mcp_matrix.core.text import markup, redact_value, terminal_console
from mcp_matrix.targets.features import annotations_label, tool_features
from mcp_matrix.targets.snapshot import Snapshot, SnapshotInterrupted, write_snapshot

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "snapshot",
        help="take a snapshot of a live server, or summarise a snapshot file",
        description="Connect as a client would (initialize + every page of tools/list) and write the "
        "snapshot JSON (to -o FILE, or stdout). Given a snapshot file, print a readable summary.",
    )
    add_target_options(p)
    p.add_argument(
        "-o", "--output", metavar="FILE", help="write the snapshot JSON here (default: stdout)"
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="with -o, also print the table of every tool (page, annotations, notable schema "
        "features) to stderr; by default one line says what was written",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    interrupted = False
    try:
        snap = snapshot_from(args, default_server=None)
    except (
        SnapshotInterrupted
    ) as exc:  # Ctrl-C while closing: the finished snapshot is still written
        target = target_from(args)  # a server may echo its env or args back (stderr, descriptions)
        secrets = target.secrets() if target is not None else ()
        snap, interrupted = Snapshot(redact_value(exc.doc, secrets), source="live"), True
    if snap.source != "live":
        print_summary(snap, terminal_console())
        return 0
    # a live snapshot_from masked them already (a second pass was 0.09 s at 5,000 tools)
    if args.output:  # the file is the point: one line on stderr, the table only when asked
        write_snapshot(snap.doc, args.output)
        print_summary(
            snap, terminal_console(stderr=True), brief=not args.verbose, written=args.output
        )
    else:
        sys.stdout.write(json.dumps(snap.doc, indent=2, ensure_ascii=False) + "\n")
        print_summary(snap, terminal_console(stderr=True), brief=True)
    if interrupted:
        return interrupted_exit_code()
    return EXIT_UNMEASURABLE if snap.error else 0


def print_summary(
    snap: Snapshot, console: Console, brief: bool = False, written: str | None = None
) -> None:
    """The server, its protocol, tools and pages on one line (and where the file was
    ``written``), then anything that went wrong; unless ``brief``, a row per tool."""
    doc = snap.doc
    info = given if isinstance(given := doc.get("serverInfo"), dict) else {}
    console.print(
        f"[bold]{markup(str(info.get('name', '?')))}[/] {markup(str(info.get('version', '')))}  "
        f"protocol {markup(str(doc.get('protocolVersion')))}  "
        f"{len(doc.get('tools', []))} tools on {len(doc.get('pages', []))} page(s)"
        + (f"  written to {markup(written)}" if written else "")
    )
    if doc.get("error"):
        err = doc["error"]
        console.print(
            f"[red]could not complete:[/] {markup(err.get('kind', ''))}: {markup(err.get('message', ''))}"
        )
        for line in err.get("stderr_tail", [])[-5:]:
            console.print(f"  [dim]stderr:[/] {markup(line)}")
    if doc.get("listError"):
        e = doc["listError"]
        console.print(f"[red]tools/list error[/] {e.get('code')}: {markup(str(e.get('message')))}")
    for noise in doc.get("stdoutNoise", [])[:5]:
        console.print(f"[yellow]stdout noise:[/] {markup(noise.get('line', ''))}")
    for problem in doc.get("problems", [])[:5]:
        console.print(
            f"[yellow]problem:[/] {markup(problem.get('kind', ''))}: {markup(problem.get('message', ''))}"
        )
    for note in doc.get("notifications", [])[:5]:
        console.print(f"[dim]notification:[/] {markup(str(note.get('method')))}")
    if brief:
        return
    from rich.table import Table  # only for the table: 5,000 rows took most of a snapshot's CPU

    table = Table(title=None, show_lines=False)
    for col in ("page", "tool", "annotations", "notable schema features"):
        table.add_column(col)
    for page, tool in snap.tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        table.add_row(
            str(page),
            markup(repr(name) if not isinstance(name, str) or not name.isprintable() else name),
            annotations_label(tool),
            markup(", ".join(tool_features(tool)) or "-"),
        )
    console.print(table)
