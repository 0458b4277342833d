"""``mcp-matrix report``: write a results stream (one or more files) in another format.

The writers sit behind ``mcp_matrix.report.writers.write_report``, so ``run`` can write several
formats from the same events.
"""

from __future__ import annotations

import argparse
import io
import sys

from mcp_matrix.core.errors import EXIT_OK
from mcp_matrix.core.events import Event
from mcp_matrix.core.verdicts import parse_verdicts
from mcp_matrix.report.grid import RELEASE_FAILING
from mcp_matrix.report.writers import FORMATS, SUFFIX, write_report
from mcp_matrix.run.results import read_typed


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write results (JSON lines from `run --results`) as terminal, md, json, junit, sarif, "
        "html, a CI job summary or GitHub annotations",
        description="Read one or more results files (a finished, interrupted or merged run) and write them "
        "in one format: the terminal grid, Markdown, the JSON report (mcp-matrix.report v1), JUnit XML, "
        "SARIF 2.1.0, a self-contained HTML page, a job summary that fits a CI page (summary) or GitHub "
        "Actions annotations (github). Several files are merged in the order given.",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results files (JSON lines)")
    p.add_argument(
        "--format",
        "-f",
        choices=FORMATS,
        default="terminal",
        help="output format (default terminal)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument(
        "--fail-on",
        default=None,
        metavar="VERDICTS",
        help="verdicts reported as release-failing: JUnit failures, SARIF errors "
        f"(default: {','.join(RELEASE_FAILING)}; 'none' for no verdict)",
    )
    p.add_argument(
        "--policy",
        metavar="FILE",
        help="the release policy (YAML, or a pyproject.toml with [tool.mcp-matrix]): its fail_on "
        "replaces --fail-on's default, and summary and github state its gate, as `check` does",
    )
    p.add_argument(
        "--sarif-source",
        metavar="FILE",
        help="sarif, github: the file in your repository that defines the tools; results and "
        "annotations point at each tool's line in it (default: a logical location, which GitHub "
        "code scanning rejects)",
    )
    p.add_argument(
        "--quiet", action="store_true", help="terminal: print only the grid, no problems list"
    )
    p.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="terminal: also every cell with its reason (a file always has them)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    policy = None
    if args.policy:
        from mcp_matrix.gate.policy import load_policy

        policy = load_policy(args.policy)
    failing = None if args.fail_on is None else parse_verdicts(args.fail_on, where="--fail-on")
    events: list[Event] = []
    for path in args.results:
        events.extend(read_typed(path))
    options = {"policy": policy, "sarif_source": args.sarif_source}
    if args.output:
        write_report(events, args.format, args.output, failing, details=not args.quiet, **options)
        return EXIT_OK
    if args.format != "terminal" and isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")
    write_report(
        events,
        args.format,
        None,
        failing,
        details=not args.quiet,
        verbose=args.verbose,
        **options,
    )
    return EXIT_OK


__all__ = ["FORMATS", "SUFFIX", "register", "run", "write_report"]
