"""``mcp-matrix diff OLD NEW``: what a release changes for every client and every frozen caller.

Each side is a snapshot file, or a live target written as its kind's side syntax
(``mcp_matrix.targets.kinds.KINDS``): ``stdio:CMD``, an ``http://`` / ``https://`` URL (Streamable
HTTP), ``sse:URL`` (legacy HTTP+SSE) or ``server:NAME ARGS`` (a bundled reference server). Output: the terminal
(default), ``--format md`` or ``--format json`` (``format: mcp-matrix.diff``, docs/evolution.md).

Exit codes: 0 nothing at or above ``--fail-on``; 1 changes at or above it; 2 an input error
(a missing file, not a snapshot, a bad target); 3 a live side could not be measured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mcp_matrix.commands.common import (
    add_profile_options,
    profiles_from,
    seconds,
    target_options,
)
from mcp_matrix.commands.outputs import protect
from mcp_matrix.core.errors import EXIT_FINDINGS, EXIT_OK, InputError, MeasureError
from mcp_matrix.core.text import redact_value
from mcp_matrix.evolution import FAIL_ON, diff_snapshots
from mcp_matrix.report.diff_text import FORMATS, write
from mcp_matrix.targets.kinds import BUNDLED_TRANSPORTS, KINDS, Target
from mcp_matrix.targets.snapshot import Snapshot, load_snapshot, take_snapshot
from mcp_matrix.wire.session import Timeouts

SIDE_HELP = "a snapshot .json file, " + ", ".join(k.side_help for k in KINDS.values())


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "diff",
        help="what changes between two versions of a server, per client and per frozen caller",
        description="Compare two snapshots (or live servers) and classify every change as breaking, risky\n"
        "or safe, with its effect in each client profile and on each population of frozen callers\n"
        "(live conversations, queued retries, transcript replays), and what to do instead.",
        epilog="OLD and NEW are each " + SIDE_HELP + ". Examples:\n"
        "  mcp-matrix diff v1.json v2.json\n"
        '  mcp-matrix diff baseline.json "stdio:node build/server.js" --fail-on risky\n'
        '  mcp-matrix diff "server:billing --version 1" "server:billing --version 3" --format md\n'
        "Exit codes: 0 nothing at or above --fail-on, 1 changes at or above it, 2 input error, "
        "3 a live side could not be measured.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("old", metavar="OLD", help="the released version: " + SIDE_HELP)
    p.add_argument("new", metavar="NEW", help="the version about to be released: " + SIDE_HELP)
    add_profile_options(p)
    p.add_argument(
        "--format",
        "-f",
        choices=FORMATS,
        default="terminal",
        help="terminal (default), md (Markdown) or json (format mcp-matrix.diff)",
    )
    p.add_argument(
        "-o", "--output", metavar="FILE", help="write the report here (UTF-8) instead of stdout"
    )
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="breaking",
        help="exit 1 when a change is at least this severe: breaking (default), risky, any, none",
    )
    p.add_argument(
        "--name",
        default="",
        help="the server's name in the client config (prefixes mcp__NAME__tool); "
        "default: the new side's",
    )
    o = p.add_argument_group("live sides")
    o.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="K:V",
        help="HTTP header for URL sides (repeatable)",
    )
    o.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="K=V",
        help="environment for stdio sides (repeatable)",
    )
    o.add_argument("--cwd", help="working directory for stdio sides")
    o.add_argument(
        "--inherit-env", action="store_true", help="pass this whole environment to stdio sides"
    )
    o.add_argument(
        "--server-transport",
        choices=BUNDLED_TRANSPORTS,
        default="stdio",
        help="how to run bundled server: sides (default stdio; sse: legacy HTTP+SSE)",
    )
    d = Timeouts()
    o.add_argument(
        "--timeout-initialize",
        type=seconds,
        default=d.initialize,
        metavar="S",
        help=f"seconds, default {d.initialize}",
    )
    o.add_argument(
        "--timeout-list",
        type=seconds,
        default=d.list,
        metavar="S",
        help=f"seconds, default {d.list}",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    profiles = profiles_from(args)
    old = side(args.old, "OLD", args)
    new = side(args.new, "NEW", args)
    result = diff_snapshots(old, new, profiles, server=args.name or None)
    write(result, args.format, args.fail_on, args.output)
    return EXIT_FINDINGS if result.failing(args.fail_on) else EXIT_OK


# -- the two sides --------------------------------------------------------------------------------


def target_of(arg: str, args: argparse.Namespace) -> Target | None:
    """The live target a side names (its secrets masked in every output from now on), or None
    for a snapshot file."""
    target = _target_of(arg, args)
    if target is not None:
        protect(target.secrets(), json_stdout=args.format == "json" and not args.output)
    return target


def _target_of(arg: str, args: argparse.Namespace) -> Target | None:
    options = target_options(args)
    for kind in KINDS.values():
        value = kind.side_value(arg)
        if value is not None:
            return kind.build(value, options)
    return None


def side(arg: str, which: str, args: argparse.Namespace) -> Snapshot:
    """Read or take one side; an input problem names the side (OLD or NEW)."""
    try:
        target = target_of(arg, args)
    except InputError as exc:
        raise InputError(exc.message, where=f"{which} {arg!r}") from None
    if target is None:
        if not Path(arg).is_file():
            raise InputError(
                f"no such snapshot file; {which} must be {SIDE_HELP}", where=f"{which} {arg}"
            )
        try:
            snap = load_snapshot(arg)
        except InputError as exc:
            raise InputError(exc.message, where=f"{which} {exc.where}") from None
        if snap.error:
            message = (
                snap.error.get("message", "") if isinstance(snap.error, dict) else str(snap.error)
            )
            raise InputError(
                f"this snapshot records a failed measurement ({message}); take it again",
                where=f"{which} {arg}",
            )
        return snap
    sys.stderr.write(f"mcp-matrix: taking the {which} snapshot: {arg}\n")
    timeouts = Timeouts(initialize=args.timeout_initialize, list=args.timeout_list)
    doc = take_snapshot(target, timeouts=timeouts)
    if doc.get("error"):
        err = doc["error"]
        raise MeasureError(
            f"the {which} side could not be measured ({arg}): {err.get('kind', 'error')}: "
            f"{err.get('message', '')}"
        )
    return Snapshot(redact_value(doc, target.secrets()), source="live")  # what a server echoed
