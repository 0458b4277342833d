"""``mcp-matrix check``: the release checklist over a results file or a fresh run."""

from __future__ import annotations

import argparse
import datetime as _dt
from collections.abc import Sequence
from pathlib import Path

from mcp_matrix import api
from mcp_matrix.commands.common import (
    add_profile_options,
    add_target_options,
    profiles_from,
    target_from,
    timeouts_from,
)
from mcp_matrix.commands.run import DEFAULT_SERVER
from mcp_matrix.core.errors import EXIT_UNMEASURABLE, InputError
from mcp_matrix.core.events import Event
from mcp_matrix.core.text import markup, terminal_console
from mcp_matrix.evolution.calls_file import parse_timestamp
from mcp_matrix.gate.checklist import exit_code, to_markdown
from mcp_matrix.gate.policy import check_policy_clients, load_policy
from mcp_matrix.gate.release import policy_baseline, release_items
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.run.results import cells, read_typed


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="the release checklist: fail CI before a silent break ships",
        description="Apply a release policy to a results file (or to a fresh run of a target) and print "
        "each checklist item as passed or failed with its evidence. Exit 1 when any item fails.",
    )
    p.add_argument(
        "results", nargs="?", metavar="RESULTS", help="a results file from `run --results`"
    )
    add_target_options(p, positional=False)
    p.add_argument(
        "--policy", metavar="FILE", help="policy YAML, or a pyproject.toml with [tool.mcp-matrix]"
    )
    add_profile_options(
        p,
        client_help="only these profiles (repeatable): for a fresh run, and for the evolution items "
        "when the policy requires no client",
    )
    p.add_argument("--cases", metavar="FILE", help="for a fresh run: cases YAML")
    p.add_argument(
        "--baseline",
        metavar="SNAPSHOT",
        help="the baseline snapshot: what a fresh run's caching clients "
        "hold, and what the evolution items compare with (default: the policy's baseline)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="also write the checklist as Markdown (for a release PR)",
    )
    p.add_argument(
        "--now",
        metavar="DATE",
        help="the date alias retirement is judged at (ISO 8601, e.g. 2026-11-04; "
        "default: now, UTC)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    policy_file = args.policy or ("pyproject.toml" if _has_table(Path("pyproject.toml")) else None)
    policy = load_policy(policy_file)
    now = parse_now(args.now)
    known = list(load_profiles(extra_dirs=args.profiles_dir)) if policy.required_clients else []
    if args.results:
        events: Sequence[Event] = read_typed(args.results)
        target = target_from(args, default_server=None)
        known += [c.profile for c in cells(events)]
        check_policy_clients(policy, known)
    else:
        check_policy_clients(policy, known)  # a typo fails before the run, not after it
        target = target_from(args, default_server=DEFAULT_SERVER)
        assert target is not None  # no results file: the default server stands in
        events = api.run(
            target,
            profiles=profiles_from(args),
            timeouts=timeouts_from(args),
            cases=args.cases,
            baseline=policy_baseline(policy, args.baseline),
        ).events
    items = release_items(
        events,
        policy,
        target=target,
        timeouts=timeouts_from(args),
        now=now,
        baseline=args.baseline,
        clients=args.client,
        extra_dirs=args.profiles_dir,
    )
    console = terminal_console(soft_wrap=True)
    for item in items:
        mark = (
            "[green]passed[/]"
            if item.passed
            else "[yellow]NOT MEASURED[/]"
            if item.unmeasured
            else "[red]FAILED[/]"
        )
        console.print(f"{mark} {markup(item.name)} [dim]— {markup(item.evidence)}[/]")
    failed = sum(not i.passed and not i.unmeasured for i in items)
    unmeasured = [i for i in items if not i.passed and i.unmeasured]
    console.print(
        f"\n{len(items) - failed - len(unmeasured)} passed, {failed} failed"
        + (f", {len(unmeasured)} not measured" if unmeasured else "")
    )
    if args.output:
        Path(args.output).write_text(to_markdown(items, policy), encoding="utf-8")
    code = exit_code(items)
    if unmeasured:  # never a pass: what was not measured, on stderr with the exit code
        err = terminal_console(stderr=True, soft_wrap=True)
        for item in unmeasured:
            err.print(
                f"mcp-matrix: could not measure: {markup(item.name)}: {markup(item.evidence)}",
                style="yellow",
            )
        if code == EXIT_UNMEASURABLE:
            err.print(
                "mcp-matrix: the release gate cannot pass what it could not measure; exit 3",
                style="yellow",
            )
    return code


def parse_now(value: str | None) -> _dt.datetime:
    """``--now``: an ISO 8601 date or date and time (UTC unless it says otherwise); default the current time."""
    if value is None:
        return _dt.datetime.now(_dt.timezone.utc)
    moment = parse_timestamp(value)
    if moment is None:
        raise InputError(
            f"expected an ISO 8601 date such as 2026-11-04 or 2026-11-04T09:00Z, got {value!r}",
            where="--now",
        )
    return moment


def _has_table(p: Path) -> bool:
    try:
        return p.is_file() and "[tool.mcp-matrix]" in p.read_text(encoding="utf-8")
    except OSError:
        return False
