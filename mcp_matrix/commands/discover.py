"""``mcp-matrix discover``: which tools each client shows, and what its model sees."""

from __future__ import annotations

import argparse
import gc
import sys

from mcp_matrix.commands.common import (
    add_profile_options,
    add_target_options,
    profiles_from,
    snapshot_from,
)
from mcp_matrix.core.errors import EXIT_UNMEASURABLE
from mcp_matrix.core.text import terminal_console
from mcp_matrix.report.discovery_doc import write_discovery
from mcp_matrix.report.terminal import write_terminal
from mcp_matrix.run.discovery import discover_all, discovery_run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "discover",
        help="which tools each client can see (offline on a snapshot, or live)",
        description="Run every client profile's discovery rules over a snapshot (or a live target) and "
        "print a tools x clients grid, with the reason for every cell that is not visible.",
    )
    add_target_options(p)
    add_profile_options(p)
    p.add_argument("--json", action="store_true", help="machine output on stdout, nothing else")
    p.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also print every cell that is not visible, with its reason",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    profiles = profiles_from(args)
    snap = snapshot_from(args, default_server=None)
    views = discover_all(snap, profiles, server=args.name or None)
    # What is built here lives to the end of the command: the collector need not walk it again
    # at every collection the writers' allocations start (15% of the CPU at 5,000 tools). What
    # the writers build (the document's tables, the triage's causes) lives to their end too and
    # makes no cycles: the collector is paused while they write (0.5-0.8 s of each at 5,000 x 52).
    gc.freeze()
    enabled = gc.isenabled()
    gc.disable()
    try:
        if args.json:
            names = _tool_names(views)
            write_discovery(sys.stdout, views, names, snap.doc.get("serverInfo"), snap.error)
        else:  # the cells are read from the views: typed one by one only if all are printed
            started, finished = discovery_run(snap, profiles, args.name)
            console = terminal_console(soft_wrap=True)
            write_terminal([started, finished], console, verbose=args.verbose, views=views)
    finally:
        gc.unfreeze()  # a caller in the same process (a test) collects as before
        if enabled:
            gc.enable()
    # a target that could not be reached or listed is not "every profile ok, 0 tools"
    return EXIT_UNMEASURABLE if snap.error else 0


def _tool_names(views) -> list[str]:
    """The snapshot's tool names by index (every view lists every tool)."""
    names: dict[int, str] = {t.index: t.tool for t in views[0].tools} if views else {}
    return [names.get(i, f"#{i}") for i in range(max(names, default=-1) + 1)]
