"""``mcp-matrix check``: the release checklist over a results file or a fresh run."""

from __future__ import annotations

import argparse
import datetime as _dt
from pathlib import Path

from matrix.checklist import (
    AliasRule,
    Item,
    Policy,
    check_policy_clients,
    evaluate,
    evolution_items,
    load_policy,
    policy_path,
    to_markdown,
)
from matrix.commands.common import (
    add_profile_options,
    add_target_options,
    profiles_from,
    target_from,
    timeouts_from,
)
from matrix.commands.run import DEFAULT_SERVER
from matrix.errors import EXIT_FINDINGS, EXIT_OK, InputError
from matrix.results import read_events
from matrix.text import markup, terminal_console


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
    known = []
    if policy.required_clients:
        from matrix.profiles.loader import load_profiles

        known = list(load_profiles(extra_dirs=getattr(args, "profiles_dir", None) or []))
    if args.results:
        events = read_events(args.results)
        target = target_from(args, default_server=None)
        known += [str(e.get("profile")) for e in events if e.get("event") in ("discovery", "call")]
        check_policy_clients(policy, known)
    else:
        check_policy_clients(policy, known)  # a typo fails before the run, not after it
        events = fresh_run(args, policy)
        target = target_from(args, default_server=DEFAULT_SERVER)
    items = evaluate(events, policy)
    if any(policy.extra.get(k) for k in ("baseline", "aliases")):
        items += evolution(args, policy, events, target, now)
    console = terminal_console(soft_wrap=True)
    for item in items:
        mark = "[green]passed[/]" if item.passed else "[red]FAILED[/]"
        console.print(f"{mark} {markup(item.name)} [dim]— {markup(item.evidence)}[/]")
    failed = sum(not i.passed for i in items)
    console.print(f"\n{len(items) - failed} passed, {failed} failed")
    if args.output:
        Path(args.output).write_text(to_markdown(items, policy), encoding="utf-8")
    return EXIT_FINDINGS if failed else EXIT_OK


def fresh_run(args: argparse.Namespace, policy) -> list[dict]:
    """Run the matrix now (through ``matrix.api``, as any caller would) and return its events."""
    from matrix import api

    profiles = profiles_from(args)
    baseline = args.baseline or (
        policy_path(policy, policy.extra["baseline"]) if policy.extra.get("baseline") else None
    )
    outcome = api.run(
        target_from(args, default_server=DEFAULT_SERVER),
        profiles=profiles,
        timeouts=timeouts_from(args),
        cases=args.cases,
        baseline=baseline,
    )
    return outcome.to_json()


def parse_now(value: str | None) -> _dt.datetime:
    """``--now``: an ISO 8601 date or date and time (UTC unless it says otherwise); default the current time."""
    from matrix.evolution.calls_file import parse_timestamp

    if value is None:
        return _dt.datetime.now(_dt.timezone.utc)
    moment = parse_timestamp(value)
    if moment is None:
        raise InputError(
            f"expected an ISO 8601 date such as 2026-11-04 or 2026-11-04T09:00Z, got {value!r}",
            where="--now",
        )
    return moment


def evolution(
    args: argparse.Namespace, policy: Policy, events: list[dict], target, now: _dt.datetime
) -> list[Item]:
    """The evolution items: the baseline compared with the new snapshot, alias replays against the target."""
    from matrix.profiles.loader import load_profiles, select_profiles
    from matrix.snapshot import Snapshot, load_snapshot, take_snapshot

    doc = next(
        (
            e["snapshot"]
            for e in events
            if e.get("event") == "snapshot" and isinstance(e.get("snapshot"), dict)
        ),
        None,
    )
    new = Snapshot(doc, source="the results' snapshot") if doc else None
    if new is None and target is not None:
        new = Snapshot(take_snapshot(target, timeouts=timeouts_from(args)), source="live")
    if new is not None and new.error:
        new = None
    baseline_file = args.baseline or (
        policy_path(policy, policy.extra["baseline"]) if policy.extra.get("baseline") else None
    )
    baseline = load_snapshot(baseline_file) if baseline_file else None
    loaded = load_profiles(extra_dirs=args.profiles_dir)
    profiles = [
        p
        for p in select_profiles(loaded, list(policy.required_clients or ()) or args.client)
        if not p.abstract
    ]

    def alias_replay(rule: AliasRule) -> dict:
        from matrix.evolution.calls_file import calls_file, check_files, population_from_name
        from matrix.evolution.replay import Alias, ReplayConfig, replay

        files = [
            calls_file(p, population_from_name(p) or "live", given_by=f"{policy.source}: aliases")
            for p in rule.calls
        ]
        check_files(files)
        alias = Alias(rule.tool, rule.old, rule.new)
        report = replay(
            ReplayConfig(
                files=files,
                profiles=profiles,
                target=target,
                retries=0,
                timeouts=timeouts_from(args),
                only=alias.used_by,
                alias=alias,
            )
        )
        return report.to_json()

    return evolution_items(
        policy,
        new=new,
        baseline=baseline,
        profiles=profiles,
        now=now,
        alias_replay=alias_replay if target is not None else None,
    )


def _has_table(p: Path) -> bool:
    try:
        return p.is_file() and "[tool.mcp-matrix]" in p.read_text(encoding="utf-8")
    except OSError:
        return False
