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
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from matrix.commands.common import (
    add_profile_options,
    add_target_options,
    profiles_from,
    target_from,
    timeouts_from,
)
from matrix.commands.outputs import open_results
from matrix.commands.signals import interrupted_exit_code
from matrix.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNMEASURABLE, InputError
from matrix.evolution.calls_file import calls_file, check_files
from matrix.evolution.model import POPULATION_LABEL, POPULATIONS
from matrix.evolution.replay import (
    FORMAT,
    MEASURES,
    VERSION,
    VOLATILE_KEYS,
    ReplayConfig,
    ReplayReport,
    replay,
)
from matrix.snapshot import load_snapshot
from matrix.text import markup, terminal_console

DEFAULT_FAIL_ON = "silent,broken,permanent-loss,diverged"

# What each outcome means for whoever sent the call (seed "Renaming a tool parameter").
MEANING = {
    "delivered": "delivered intact",
    "loud": "refused loudly, with an error the caller can read",
    "silent": "reported as a success with data lost or changed: nobody is told",
    "unreachable": "not sent: the client does not show the tool",
    "broken": "got no usable answer (crash, timeout, garbage)",
}
CONSEQUENCE = {
    "live": "a live conversation recovers within a turn or two once it reads the error",
    "retry": "a queued retry has no model to adapt: it fails again until its budget is spent",
    "transcript": "a transcript replay runs on in a different world: a false negative",
}


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
    sink = _EventFile(args.results, target) if args.results else None
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
        doc = report.to_json(fail_on)
        for f in doc["files"]:
            f["calls"] = counts.get(f["file"], 0)
    finally:
        if progress:
            progress.stop()
        if sink:
            sink.finish(doc)
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        write_terminal(doc, terminal_console(soft_wrap=True), examples=not args.quiet)
    if not report.measured:
        return EXIT_UNMEASURABLE
    if report.interrupted:
        return interrupted_exit_code()
    return EXIT_FINDINGS if doc["summary"]["failing"] else EXIT_OK


# -- output ---------------------------------------------------------------------------------


def counted(n: int, of: int, noun: str = "calls") -> str:
    """``20 of 20 calls (100.0%)``: the count, the denominator, then the percentage."""
    pct = f"{100.0 * n / of:.1f}%" if of else "no calls"
    return f"{n} of {of} {noun} ({pct})"


def sentences(result: dict) -> list[str]:
    """Plain words for one (profile, file): what happened to its calls."""
    who, pop, n = result["profile"], result["population"], result["calls"]
    out = []
    outcomes = result["outcomes"]
    parts = [f"{counted(o['count'], n)} {MEANING[c]}" for c, o in outcomes.items() if o["count"]]
    out.append(f"{pop}: in {who}, " + ("; ".join(parts) if parts else "no calls") + ".")
    retry = result.get("retry")
    if retry:
        loss = retry["permanent_loss"]
        lost = "permanent loss" if loss["count"] else "no permanent loss"
        out.append(f"retry: {counted(loss['count'], n)} fail on every attempt in {who}: {lost}.")
        if retry["recovered_on_retry"]["count"]:
            out.append(
                f"retry: {counted(retry['recovered_on_retry']['count'], n)} recovered on a later attempt in {who}."
            )
        if retry["undecided"]["count"]:
            out.append(
                f"retry: {counted(retry['undecided']['count'], n)} failed once and were not sent again "
                "(the tool is not repeat-safe and the failure is not a validation error): undecided."
            )
    div = result.get("divergence")
    if div and div["compared"]:
        d = div["diverged"]
        if pop == "transcript":
            ts = result.get("transcripts") or {}
            firsts = [
                f"{t['transcript']} turn {t['first_diverging'].get('turn')} ({t['first_diverging']['id']})"
                for t in ts.get("each", [])
                if t["first_diverging"]
            ]
            shown = ", ".join(firsts[:8]) + (
                f" and {len(firsts) - 8} more" if len(firsts) > 8 else ""
            )
            tail = f"; first diverging call: {shown}" if firsts else ""
            tcount = ts.get("diverged", {})
            out.append(
                f"transcript: {counted(d['count'], div['compared'])} diverge from the recording in {who}"
                + (
                    f", in {counted(tcount['count'], tcount['of'], 'transcripts')}"
                    if tcount
                    else ""
                )
                + (": a false negative for whoever replays them" if d["count"] else "")
                + tail
                + "."
            )
        elif d["count"]:
            first = div["first"] or {}
            out.append(
                f"{pop}: {counted(d['count'], div['compared'], 'recorded results')} differ on replay in {who} "
                f"(first: {first.get('id')}, line {first.get('line')})."
            )
    for behaviour, r in (result.get("sometimes") or {}).items():
        out.append(
            f"{pop}: {who} sometimes changes {counted(r['count'], n)} (intermittent: {behaviour}); "
            "those variants were not sent, so a write is not made twice."
        )
    alias = result.get("alias")
    if alias:
        out.append(
            f"alias: {alias['uses']} calls use the old name in {who}: {alias['accepted']['text']} accepted, "
            f"{alias['refused_for_the_old_name']['text']} refused because of the old name."
        )
    for tool, values in (result.get("reads") or {}).items():
        numbers = ", ".join(
            f"{k} {v}" for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)
        )
        out.append(f"{pop}: after the replay in {who}, {tool}: {numbers or 'no counters'}.")
    return out


def write_terminal(doc: dict, console: Console, examples: bool = True) -> None:
    if not doc["measured"]:
        err = doc.get("error") or {}
        console.print(
            f"[red]could not measure the target[/]: {markup(str(err.get('message') or err))}"
        )
        return
    mode = (
        "offline, against a snapshot: the server is modelled (it validates against the inputSchema it lists)"
        if doc["offline"]
        else "live"
    )
    console.print(
        f"[bold]mcp-matrix replay[/] ({mode}); {len(doc['profiles'])} client profile(s)"
        + (f"; caching clients hold {markup(doc['baseline'])}" if doc["baseline"] else "")
    )
    by_file: dict[str, list[dict]] = {}
    for r in doc["results"]:
        by_file.setdefault(r["file"], []).append(r)
    for f in doc["files"]:
        pop = f["population"]
        console.print(
            f"\n[bold]{markup(f['file'])}[/] — {POPULATION_LABEL[pop]} ({f.get('calls', 0)} calls; "
            f"population from {f['population_from']}): {CONSEQUENCE[pop]}"
        )
        for r in by_file.get(f["file"], []):
            for line in sentences(r):
                console.print("  " + markup(line))
            if examples:
                for items in r["examples"].values():
                    for item in items[:1]:
                        console.print(
                            f"    [dim]e.g. {markup(str(item['id']))} (line {item['line']}): "
                            f"{markup(str(item.get('reason', ''))[:160])}[/]"
                        )
            for note in r.get("notes", []):
                console.print(f"    [yellow]note[/]: {markup(note)}")
    failing = doc["summary"]["failing"]
    if failing:
        console.print(
            "\n[red]over the threshold[/]: "
            + "; ".join(
                markup(f"{x['measure']} {x['text']} in {x['profile']} ({Path(x['file']).name})")
                for x in failing
            )
        )
    else:
        console.print("\nnothing over the threshold")


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


class _EventFile:
    """``--results``: one JSON line per replayed call, flushed as made; the report last."""

    def __init__(self, path: str, target) -> None:
        self.handle = open_results(path)  # locked; closed in finish()
        self.lock = threading.Lock()
        self.secrets = sorted(
            {s for s in (target.secrets() if target else []) if s}, key=len, reverse=True
        )
        self._write({"event": "replay-started", "format": FORMAT, "version": VERSION})

    def _write(self, event: dict) -> None:
        line = json.dumps(event, ensure_ascii=False, default=str)
        for secret in self.secrets:
            line = line.replace(secret, "***")
        with self.lock:
            if not self.handle.closed:
                self.handle.write(line + "\n")
                self.handle.flush()

    def __call__(self, event: dict) -> None:
        self._write(event)

    def finish(self, report: dict | None) -> None:
        """The report as the last line (none when the replay stopped on an error), then close."""
        if report is not None:
            self._write({"event": "replay-finished", "report": report})
        with self.lock:
            self.handle.close()


__all__ = [
    "ReplayReport",
    "counted",
    "parse_fail_on",
    "register",
    "run",
    "sentences",
    "write_terminal",
]
