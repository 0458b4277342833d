"""``mcp-matrix replay CALLS.jsonl ...``: recorded calls through every client profile, per population.

Each file is a population of frozen callers (its name says which: ``live``, ``retry``,
``transcript``, or ``--population``). Output: plain sentences on the terminal, or ``--json``
(``format: mcp-matrix.replay``, ``version: 1``, docs/evolution.md); ``--results FILE`` also
writes one JSON line per replayed call. Progress goes to stderr, only when it is a terminal.

Exit codes: 0 nothing over ``--fail-on``; 1 a rate over it; 2 an input error (a bad line of a
calls file names FILE:LINE and the key); 3 the target could not be measured; 130 interrupted.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from mcp_matrix.commands.common import (
    add_profile_options,
    add_target_options,
    profiles_from,
    target_from,
    timeouts_from,
)
from mcp_matrix.commands.signals import interrupted_exit_code
from mcp_matrix.core.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNMEASURABLE, InputError
from mcp_matrix.core.text import terminal_console
from mcp_matrix.evolution.calls_file import calls_file, check_files
from mcp_matrix.evolution.model import POPULATIONS
from mcp_matrix.evolution.replay import (
    FORMAT,
    MEASURES,
    VOLATILE_KEYS,
    ReplayConfig,
    ReplayReport,
    replay,
)
from mcp_matrix.evolution.replay_file import ReplayResultsFile
from mcp_matrix.report.replay_text import write_terminal
from mcp_matrix.targets.snapshot import load_snapshot

DEFAULT_FAIL_ON = "silent,broken,permanent-loss,diverged"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="replay recorded calls (live, retry queue, transcripts) through every client profile",
        description="Send recorded calls through each client profile to the live server and report, per "
        "population of frozen callers, how many are delivered, refused loudly, lost silently, unreachable "
        "or broken; for a retry queue how many fail on every attempt (permanent loss); for transcripts, "
        "which replays diverge from the recording and where.",
        epilog="Examples:\n"
        '  mcp-matrix replay retry.jsonl --server "billing --version 3" --client claude-code\n'
        '  mcp-matrix replay live.jsonl transcript.jsonl --stdio "node build/server.js" --baseline v1.json --json\n'
        "  mcp-matrix replay calls.jsonl --population retry --snapshot v3.json   # offline: a modelled server\n"
        "Exit codes: 0 nothing over --fail-on, 1 a rate over it, 2 input error, 3 target not measurable.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "calls", nargs="+", metavar="CALLS.jsonl", help="recorded calls, one JSON object a line"
    )
    p.add_argument(
        "--population",
        choices=POPULATIONS,
        help="the population of every file (default: from each file name: live, retry or transcript)",
    )
    add_target_options(p, positional=False)
    p.add_argument(
        "--snapshot",
        metavar="FILE",
        help="offline: replay against this snapshot, through a modelled server that validates "
        "against the inputSchema it lists and reads only the properties it lists (as diff does)",
    )
    add_profile_options(p)
    p.add_argument(
        "--baseline",
        metavar="SNAPSHOT",
        help="the tool list caching clients hold from before the deploy (they build calls from it)",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=3,
        metavar="N",
        help="retry files: times a failed call is sent again, when that is safe (default 3)",
    )
    p.add_argument(
        "--read-after",
        action="append",
        default=[],
        metavar="TOOL",
        help="a read-only tool called with no arguments at the end of each session; its numbers are "
        "reported, summed over sessions (e.g. billing_metrics) (repeatable)",
    )
    p.add_argument(
        "--ignore-key",
        action="append",
        default=[],
        metavar="KEY",
        help="a result key whose value may differ from the recording (added to: "
        + ", ".join(sorted(VOLATILE_KEYS)[:6])
        + ", ...) (repeatable)",
    )
    p.add_argument(
        "--examples",
        type=int,
        default=3,
        metavar="N",
        help="example calls kept per outcome (default 3)",
    )
    p.add_argument(
        "--jobs", type=int, default=4, metavar="N", help="sessions in parallel (default 4)"
    )
    p.add_argument(
        "--json", action="store_true", help=f"print the report as JSON (format {FORMAT})"
    )
    p.add_argument(
        "--results", metavar="FILE", help="also write every replayed call as a JSON line to FILE"
    )
    p.add_argument(
        "--fail-on",
        default=DEFAULT_FAIL_ON,
        metavar="MEASURES",
        help="comma-separated measures, each optionally MEASURE:PERCENT (exit 1 when a profile's rate is "
        f"above PERCENT, default 0): {', '.join(MEASURES)}; 'none' never (default: {DEFAULT_FAIL_ON})",
    )
    p.add_argument("--quiet", action="store_true", help="no example calls in the terminal report")
    p.set_defaults(handler=run)


def parse_fail_on(value: str) -> list[tuple[str, float]]:
    if value.strip() == "none":
        return []
    out = []
    for part in (x.strip() for x in value.split(",")):
        if not part:
            continue
        name, _, above = part.partition(":")
        if name not in MEASURES:
            raise InputError(
                f"unknown measure {name!r}; expected some of: {', '.join(MEASURES)}",
                where="--fail-on",
            )
        try:
            threshold = float(above.rstrip("%")) if above else 0.0
        except ValueError:
            raise InputError(
                f"expected MEASURE:PERCENT such as diverged:5, got {part!r}", where="--fail-on"
            ) from None
        out.append((name, threshold))
    return out


def run(args: argparse.Namespace) -> int:
    fail_on = parse_fail_on(args.fail_on)
    for flag, value, least in (
        ("--retries", args.retries, 0),
        ("--jobs", args.jobs, 1),
        ("--examples", args.examples, 0),
    ):
        if value < least:
            raise InputError(f"expected at least {least}", where=flag)
    files = [calls_file(f, args.population) for f in args.calls]
    counts = check_files(files)  # every bad line reported before any server is contacted
    target = target_from(args, default_server=None)
    snapshot = None
    if args.snapshot:
        if target is not None:
            raise InputError(
                "give a live target or --snapshot (offline), not both", where="--snapshot"
            )
        snapshot = load_snapshot(args.snapshot)
    elif target is None:
        raise InputError(
            "no target: give --server NAME, --stdio CMD, --http URL, or --snapshot FILE (offline)",
            where="target",
        )
    profiles = profiles_from(args)
    baseline = load_snapshot(args.baseline) if args.baseline else None
    sink = ReplayResultsFile(args.results, target) if args.results else None
    err = terminal_console(stderr=True)
    progress, advance = _progress(
        err, sum(Path(f.path).stat().st_size for f in files) * len(profiles)
    )
    config = ReplayConfig(
        files=files,
        profiles=profiles,
        target=target,
        snapshot=snapshot,
        baseline=baseline,
        retries=args.retries,
        jobs=args.jobs,
        timeouts=timeouts_from(args),
        examples=args.examples,
        ignore_keys=VOLATILE_KEYS | frozenset(args.ignore_key),
        read_after=tuple(dict.fromkeys(args.read_after)),
        on_progress=advance,
        emit=sink,
    )
    doc: dict | None = None
    try:
        if progress:
            progress.start()
        report = replay(config)
        # What the replay built lives to the end of the command: set apart from the collector
        # while the report is built and written (as discover does), and given back after.
        gc.freeze()
        doc = report.to_json(fail_on)
        for f in doc["files"]:
            f["calls"] = counts.get(f["file"], 0)
    finally:
        if progress:
            progress.stop()
        if sink:
            sink.finish(doc)
    try:
        if args.json:
            sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        else:
            write_terminal(doc, terminal_console(soft_wrap=True), examples=not args.quiet)
    finally:
        gc.unfreeze()  # a caller in the same process (a test) collects as before
    if not report.measured:
        return EXIT_UNMEASURABLE
    if report.interrupted:
        return interrupted_exit_code()
    return EXIT_FINDINGS if doc["summary"]["failing"] else EXIT_OK


# -- progress and events ----------------------------------------------------------------------


def _progress(err: Console, total: int) -> tuple[Any, Callable[[int], None] | None]:
    if not err.is_terminal or total <= 0:
        return None, None
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    progress = Progress(
        TextColumn("replaying"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    )
    task = progress.add_task("replay", total=total)
    return progress, lambda n: progress.update(task, advance=n)


__all__ = ["DEFAULT_FAIL_ON", "ReplayReport", "parse_fail_on", "register", "run"]
