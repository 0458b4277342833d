"""``mcp-matrix discover``: which tools each client shows, and what its model sees."""

from __future__ import annotations

import argparse
import sys

from matrix.commands.common import (
    add_profile_options,
    add_target_options,
    profiles_from,
    snapshot_from,
)
from matrix.discovery import discover_all
from matrix.errors import EXIT_UNMEASURABLE
from matrix.events import DiscoveryCell, Event, RunFinished, RunStarted
from matrix.report.discovery_doc import write_discovery
from matrix.report.terminal import write_terminal
from matrix.targets import server_key
from matrix.text import terminal_console


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
    if args.json:
        names = _tool_names(views)
        write_discovery(sys.stdout, views, names, snap.doc.get("serverInfo"), snap.error)
        return EXIT_UNMEASURABLE if snap.error else 0
    console = terminal_console(soft_wrap=True)
    write_terminal(
        discovery_events(snap, views, profiles, args.name), console, verbose=args.verbose
    )
    if (
        snap.error
    ):  # a target that could not be reached or listed is not "every profile ok, 0 tools"
        return EXIT_UNMEASURABLE
    return 0


def discovery_events(snap, views, profiles, name: str = "") -> list[dict]:
    """The views as the result events every writer reads (no calls: discovery only)."""
    key = server_key(
        {**(snap.doc.get("target") or {}), **({"name": name} if name else {})},
        snap.doc.get("serverInfo"),
    )
    events: list[Event] = [
        RunStarted(
            server=snap.doc.get("serverInfo"),
            server_key=key.to_json(),
            profiles=tuple(
                {
                    "name": p.name,
                    "client": p.client,
                    "versions": p.versions,
                    "required_by_default": p.required_by_default,
                }
                for p in profiles
                if not p.abstract
            ),
        )
    ]
    events += [DiscoveryCell.of(v.profile, t) for v in views for t in v.tools]
    error = None
    if snap.error:
        error = {
            **snap.error,
            "message": snap.error.get("message", ""),
            "stderr_tail": list(snap.error.get("stderr_tail") or []),
        }
    events.append(RunFinished(measured=not snap.error, error=error))
    return [e.to_json() for e in events]


def _tool_names(views) -> list[str]:
    """The snapshot's tool names by index (every view lists every tool)."""
    names: dict[int, str] = {t.index: t.tool for t in views[0].tools} if views else {}
    return [names.get(i, f"#{i}") for i in range(max(names, default=-1) + 1)]
