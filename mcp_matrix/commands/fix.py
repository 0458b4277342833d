"""``mcp-matrix fix``: the corrected tool list, a JSON Patch per tool, and the re-run that proves it.

Offline on a snapshot, or live on a target (its snapshot is taken, then everything runs
offline: the corrected list is not deployed, so its calls go to a ``SchemaServer`` that also
runs the server-side checklist's checks). Exit codes as ``check``: 0 no required client loses a
tool after the fix, 1 some still do (each explained), 2 input error, 3 the target could not be
measured."""

from __future__ import annotations

import argparse
import json
import sys

from mcp_matrix.commands.common import (
    add_profile_options,
    add_target_options,
    profiles_from,
    snapshot_from,
)
from mcp_matrix.core.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNMEASURABLE, InputError
from mcp_matrix.core.text import markup, terminal_console

FORMATS = ("terminal", "md", "json")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fix",
        help="write the corrected tool list and prove it in every client profile",
        description="For each root cause of the triage, find the smallest schema change that removes "
        "the loss in every required client without a loss elsewhere, write the corrected list "
        "(a snapshot file) and a JSON Patch per tool, re-run every profile on it and print "
        "before/after per client, the server-side checklist and what no schema change fixes.",
    )
    add_target_options(p)
    add_profile_options(p)
    p.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="NAME",
        help="a client that must see every tool intact (repeatable; default: every client "
        "profile required by default)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the corrected tool list here (a snapshot file)",
    )
    p.add_argument(
        "--patch", metavar="FILE", help="write the JSON Patch of each tool here (RFC 6902, by tool)"
    )
    p.add_argument(
        "--format", "-f", choices=FORMATS, default="terminal", help="terminal (default), md or json"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from mcp_matrix.core.outfiles import check_writable
    from mcp_matrix.fix.render import document, lines, still_lost
    from mcp_matrix.fix.search import fix

    if args.patch:
        check_writable(args.patch, "--patch")
    profiles = profiles_from(args)
    known = {p.name for p in profiles}
    for name in args.require:
        if name not in known:
            raise InputError(
                f"unknown client {name!r}; expected one of the selected profiles", where="--require"
            )
    snap = snapshot_from(args, default_server=None)
    if snap.error:
        err = terminal_console(stderr=True, soft_wrap=True)
        err.print(f"mcp-matrix: could not measure: {markup(snap.error.get('message', ''))}")
        return EXIT_UNMEASURABLE
    outcome = fix(snap, profiles, args.require or None, server=args.name or None)
    if args.output:
        _write(args.output, outcome.document)
    if args.patch:
        _write(args.patch, outcome.patches())
    if args.format == "json":
        json.dump(document(outcome), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    elif args.format == "md":
        sys.stdout.write("\n".join(lines(outcome, _md, md=True)) + "\n")
    else:
        console = terminal_console(soft_wrap=True)
        for line in lines(outcome, str):
            console.print(markup(line), highlight=False)
    return EXIT_FINDINGS if still_lost(outcome) else EXIT_OK


def _md(text: object) -> str:
    from mcp_matrix.core.text import safe

    return safe(text).replace("|", "\\|").replace("<", "&lt;")


def _write(path: str, value: object) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(value, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
