"""``mcp-matrix check``: the release checklist over a results file or a fresh run."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from matrix.checklist import evaluate, load_policy, to_markdown
from matrix.commands.common import add_target_options
from matrix.errors import EXIT_FINDINGS, EXIT_OK
from matrix.results import read_events


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="the release checklist: fail CI before a silent break ships",
        description="Apply a release policy to a results file (or to a fresh run of a target) and print "
        "each checklist item as passed or failed with its evidence. Exit 1 when any item fails.",
    )
    p.add_argument("results", nargs="?", metavar="RESULTS", help="a results file from `run --results`")
    add_target_options(p, positional=False)
    p.add_argument("--policy", metavar="FILE", help="policy YAML, or a pyproject.toml with [tool.mcp-matrix]")
    p.add_argument("--client", action="append", default=[], metavar="NAME", help="for a fresh run: only these profiles")
    p.add_argument("--cases", metavar="FILE", help="for a fresh run: cases YAML")
    p.add_argument("--baseline", metavar="SNAPSHOT", help="for a fresh run: the baseline snapshot")
    p.add_argument("--profiles-dir", action="append", default=[], metavar="DIR")
    p.add_argument("-o", "--output", metavar="FILE", help="also write the checklist as Markdown (for a release PR)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    policy_path = args.policy or ("pyproject.toml" if _has_table(Path("pyproject.toml")) else None)
    policy = load_policy(policy_path)
    if args.results:
        events = read_events(args.results)
    else:
        events = fresh_run(args, policy)
    items = evaluate(events, policy)
    console = Console(highlight=False, soft_wrap=True)
    for item in items:
        mark = "[green]passed[/]" if item.passed else "[red]FAILED[/]"
        console.print(f"{mark} {escape(item.name)} [dim]— {escape(item.evidence)}[/]")
    failed = sum(not i.passed for i in items)
    console.print(f"\n{len(items) - failed} passed, {failed} failed")
    if args.output:
        Path(args.output).write_text(to_markdown(items, policy), encoding="utf-8")
    return EXIT_FINDINGS if failed else EXIT_OK


def fresh_run(args: argparse.Namespace, policy) -> list[dict]:
    """Run the matrix now (as `run` would) and return its events."""
    from matrix.cases import load_cases
    from matrix.commands.common import target_from, timeouts_from
    from matrix.commands.run import DEFAULT_SERVER, bundled_cases
    from matrix.profiles.loader import load_profiles, select_profiles
    from matrix.results import ResultsWriter
    from matrix.run import RunConfig, run_matrix
    from matrix.snapshot import load_snapshot

    profiles = [p for p in select_profiles(load_profiles(extra_dirs=args.profiles_dir), args.client) if not p.abstract]
    target = target_from(args, default_server=DEFAULT_SERVER)
    cases_path = Path(args.cases) if args.cases else (bundled_cases(target.server) if target.kind == "server" else None)
    baseline = args.baseline or policy.extra.get("baseline")
    writer = ResultsWriter(None, secrets=target.secrets())
    run_matrix(RunConfig(target=target, profiles=profiles, cases=load_cases(cases_path) if cases_path else [],
                         baseline=load_snapshot(baseline) if baseline else None, timeouts=timeouts_from(args)), writer)
    return writer.events


def _has_table(p: Path) -> bool:
    try:
        return p.is_file() and "[tool.mcp-matrix]" in p.read_text(encoding="utf-8")
    except OSError:
        return False
