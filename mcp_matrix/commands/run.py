"""``mcp-matrix run``: the live matrix (discovery + calls through every profile)."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import textwrap
from contextlib import ExitStack

from mcp_matrix import api
from mcp_matrix.api import bundled_cases
from mcp_matrix.commands.common import (
    add_profile_options,
    add_target_options,
    profiles_from,
    seconds,
    target_from,
    timeouts_from,
)
from mcp_matrix.commands.signals import interrupted_exit_code
from mcp_matrix.core.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNMEASURABLE, InputError
from mcp_matrix.core.events import Cell, RunFinished, Skipped, as_json
from mcp_matrix.core.outfiles import open_results
from mcp_matrix.core.text import markup, terminal_console
from mcp_matrix.core.verdicts import parse_verdicts
from mcp_matrix.gate.policy import check_clients
from mcp_matrix.report.grid import RELEASE_FAILING
from mcp_matrix.report.terminal import write_terminal
from mcp_matrix.report.terminal_text import names
from mcp_matrix.report.writers import FORMATS
from mcp_matrix.run.bounds import DEADLINE_GRACE, Watchdog
from mcp_matrix.run.progress import Progress
from mcp_matrix.run.session_pool import Work
from mcp_matrix.run.sharing import SHARE_MODES

DEFAULT_SERVER = "memory --schema anyof"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run the live matrix: every tool and case through every client profile",
        description="Connect to the target, run discovery and calls through each client profile "
        "(one session per profile, in parallel) and print the tools x clients grid. With no target, "
        f"runs the bundled memory server ({DEFAULT_SERVER!r}) with its bundled cases.",
    )
    add_target_options(p, positional=False)
    add_profile_options(p)
    p.add_argument(
        "--cases",
        metavar="FILE",
        help="cases YAML (default for a bundled server: its bundled cases)",
    )
    p.add_argument(
        "--no-auto-cases",
        action="store_true",
        help="do not derive cases for unlisted read-only tools",
    )
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="also call unlisted tools that may write (not read-only)",
    )
    p.add_argument(
        "--baseline",
        metavar="SNAPSHOT",
        help="the tool list caching clients hold from before a deploy",
    )
    p.add_argument(
        "--jobs", type=int, default=4, metavar="N", help="profiles run in parallel (default 4)"
    )
    p.add_argument(
        "--results",
        metavar="FILE",
        help="write every result to FILE as JSON lines, as it is made (the file is replaced)",
    )
    p.add_argument(
        "--fail-on",
        default=",".join(RELEASE_FAILING),
        metavar="VERDICTS",
        help=f"comma-separated verdicts that make the exit code 1 (default: {','.join(RELEASE_FAILING)}; 'none' never)",
    )
    p.add_argument(
        "--require",
        metavar="CLIENTS",
        default=None,
        help="comma-separated client profiles in which a hidden tool, a dropped server or a broken session makes "
        "the exit code 1 (default: every real client profile of the run, not the probes; 'none' for no client; "
        "with --fail-on none and no --require, nothing fails)",
    )
    p.add_argument(
        "--report",
        action="append",
        default=[],
        metavar="FMT:FILE",
        help="also write a report, e.g. html:matrix.html, md:matrix.md, junit:junit.xml, sarif:x.sarif, json:r.json (repeatable)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the grid, no problems list")
    p.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also print every cell with its reason and evidence",
    )
    p.add_argument(
        "--timeout-run",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="end the whole run by then: calls not made are reported with the reason (exit 3 unless findings)",
    )
    p.add_argument(
        "--no-circuit-breaker",
        action="store_true",
        help="keep calling a tool after one of its calls timed out, and a server that stopped answering",
    )
    p.add_argument(
        "--share",
        choices=SHARE_MODES,
        default="calls",
        help="when every call is read-only: profiles identical on the wire share a session and send a "
        "byte-identical call once, its answer marked in each cell (calls, the default); sessions: "
        "share the session only; none: one session per profile (docs/wire.md)",
    )
    p.set_defaults(handler=run)


def parse_reports(values: list[str]) -> list[tuple[str, str]]:
    out = []
    for value in values:
        fmt, sep, path = value.partition(":")
        if not sep or not path or fmt not in FORMATS:
            raise InputError(
                f"expected FMT:FILE with FMT one of {', '.join(FORMATS)}, got {value!r}",
                where="--report",
            )
        out.append((fmt, path))
    return out


def write_gate(console, lost: list[Cell], over: list[Cell], fail_on: list[str]) -> None:
    """The exit code's reason, in one or two lines."""
    if not lost and not over:
        console.print(
            "release gate: passed (no tool lost in a required client, nothing over --fail-on)",
            style="green",
            soft_wrap=True,
        )
        return
    if lost:
        tools = sorted({e.tool for e in lost})
        clients = sorted({e.profile for e in lost})
        text = (
            f"{len(tools)} tool(s) hidden, dropping the server or breaking the session in "
            f"{len(clients)} required client(s) ({names(clients)}); --require names the clients you need"
        )
        for i, line in enumerate(textwrap.wrap(text, width=120 - 22, break_on_hyphens=False)):
            console.print(
                ("release gate: FAILED: " if i == 0 else " " * 22) + line,
                style="red",
                soft_wrap=True,
                markup=False,
            )
    if over:
        console.print(
            f"release gate: FAILED: {len(over)} cell(s) over --fail-on ({', '.join(fail_on)})",
            style="red",
            soft_wrap=True,
            markup=False,
        )


def run(args: argparse.Namespace) -> int:
    fail_on = parse_verdicts(args.fail_on, where="--fail-on")
    reports = parse_reports(args.report)
    if args.jobs < 1:
        raise InputError("expected at least 1", where="--jobs")
    profiles = profiles_from(args)
    require = parse_require(args.require, profiles)  # a typo fails before the run, not after
    target = target_from(args, default_server=DEFAULT_SERVER)
    assert target is not None  # run has no snapshot source: the default server stands in
    err = terminal_console(stderr=True)
    status = err.status("starting the matrix ...") if err.is_terminal else None
    with ExitStack() as stack:
        out = (
            stack.enter_context(open_results(args.results)) if args.results else None
        )  # one run per file, locked; `merge` joins runs
        dog = stack.enter_context(
            Watchdog(args.timeout_run, last_words=lambda: last_words(out, args.timeout_run))
        )
        if status:
            stack.enter_context(status)
        outcome = api.run(
            target,
            profiles=profiles,
            timeouts=timeouts_from(args),
            cases=args.cases,
            baseline=args.baseline,
            allow_writes=args.allow_writes,
            auto_cases=not args.no_auto_cases,
            jobs=args.jobs,
            timeout_run=args.timeout_run,
            circuit_breaker=not args.no_circuit_breaker,
            share=args.share,
            results=out,
            reports=reports,
            fail_on=fail_on,
            on_progress=(lambda p: status.update(markup(progress_line(p), fold=True)))
            if status
            else None,
        )
    console = terminal_console(soft_wrap=True)
    write_terminal(outcome.events, console, details=not args.quiet, verbose=args.verbose)
    if args.verbose:
        write_work(console, outcome.work)
    gate = outcome.gate(fail_on, require)
    if outcome.measured and not outcome.interrupted:
        if gate.passed and outcome.deadline_passed:
            write_deadline_gate(console, outcome.events, args.timeout_run)
        else:
            write_gate(console, list(gate.lost), list(gate.over), fail_on)
    if outcome.interrupted and dog.fired:
        sys.stderr.write(
            f"mcp-matrix: the run was still going {DEADLINE_GRACE:g} s after its deadline "
            f"(--timeout-run {args.timeout_run:g} s): stopped as Ctrl-C stops it; exit 3\n"
        )
        return EXIT_UNMEASURABLE
    if outcome.interrupted:
        return interrupted_exit_code()
    if not outcome.measured:
        return EXIT_UNMEASURABLE
    if outcome.profile_errors:  # cells are missing: never a pass (docs/security.md)
        sys.stderr.write(
            f"mcp-matrix: {len(outcome.profile_errors)} profile(s) could not be measured "
            "(profile-error); exit 3\n"
        )
        return EXIT_UNMEASURABLE
    if not gate.passed:
        return EXIT_FINDINGS
    return EXIT_UNMEASURABLE if outcome.deadline_passed else EXIT_OK


def write_work(console, work: Work | None) -> None:
    """--verbose: what the calls cost the server against the least they could (docs/wire.md)."""
    if work is not None:
        console.print(work.text(), markup=False, highlight=False)


def write_deadline_gate(console, events, timeout_run: float | None) -> None:
    """Nothing failed, but the deadline left calls unmade: not a pass (exit 3), and said so."""
    unmade = sum(1 for e in events if isinstance(e, Skipped) and e.profile is not None)
    console.print(
        f"release gate: NOT PASSED: the run's deadline (--timeout-run {timeout_run or 0:g} s) "
        f"passed first; {unmade} call(s) not made are not measured (exit 3)",
        style="yellow",
        soft_wrap=True,
        markup=False,
    )


def last_words(out, timeout_run: float | None) -> None:
    """The watchdog's last resort (``Watchdog.last_words``): end a results file that has its
    ``run-started`` with a ``run-finished`` saying why, before the process exits."""
    if out is None or not out.tell():
        return
    finished = RunFinished(
        finished_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        measured=False,
        counts={},
        error={
            "kind": "deadline",
            "message": f"the run did not end within {DEADLINE_GRACE:g} s of its deadline "
            f"(--timeout-run {timeout_run or 0:g} s), nor after being stopped; exited",
            "detail": "",
            "stderr_tail": [],
        },
        interrupted=True,
        deadline_passed=True,
    )
    out.write("\n" + json.dumps(as_json(finished)) + "\n")
    out.flush()


def parse_require(value: str | None, profiles: list) -> tuple[str, ...] | None:
    """``--require``: the clients named (checked against the run's profiles), or None for the default."""
    if value is None:
        return None
    if value.strip() == "none":
        return ()
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    check_clients(names, [p.name for p in profiles], where="--require")
    return names


def progress_line(p: Progress) -> str:
    """``12/40 calls, about 8 s left: claude-code memory_reflect::alias-only``."""
    if not p.total:
        return f"{p.label} ..."
    if p.eta is None:
        left = ""
    elif p.eta < 90:
        left = f", about {p.eta:.0f} s left"
    else:
        left = f", about {p.eta / 60:.0f} min left"
    return f"{p.done}/{p.total} calls{left}: {p.label}"


__all__ = ["DEFAULT_SERVER", "bundled_cases", "progress_line", "register", "run"]
