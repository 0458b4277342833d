"""``mcp-matrix report``: write a results stream (one or more files) in another format.

``write_report(events, fmt, stream_or_path)`` is the one entry point every writer sits
behind, so ``run`` can write several formats from the same events.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

from rich.console import Console

from matrix.errors import EXIT_OK
from matrix.report.grid import RELEASE_FAILING
from matrix.report.html import write_html
from matrix.report.json_report import write_json
from matrix.report.junit import write_junit
from matrix.report.markdown import write_markdown
from matrix.report.sarif import write_sarif
from matrix.report.terminal import write_terminal
from matrix.results import read_events

Writer = Callable[[list, IO[str], Iterable[str]], None]

WRITERS: dict[str, Writer] = {
    "md": write_markdown,
    "json": write_json,
    "junit": write_junit,
    "sarif": write_sarif,
    "html": write_html,
}
FORMATS = ("terminal", *WRITERS)
# What a written file is conventionally called, for `run --report FMT` without a file name.
SUFFIX = {
    "terminal": ".txt",
    "md": ".md",
    "json": ".json",
    "junit": ".xml",
    "sarif": ".sarif",
    "html": ".html",
}


def write_report(
    events: list[dict],
    fmt: str,
    stream_or_path: IO[str] | str | Path | None = None,
    failing: Iterable[str] = RELEASE_FAILING,
    details: bool = True,
) -> None:
    """Write ``events`` as ``fmt`` (one of FORMATS) to a text stream, a file path, or stdout (None).

    Files are written as UTF-8; a character that cannot be encoded (a lone surrogate from a
    hostile server) is written as a backslash escape rather than failing the report.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    failing = list(failing)
    if stream_or_path is None or isinstance(stream_or_path, (str, Path)):
        path = None if stream_or_path is None else Path(stream_or_path)
        if path is None:
            _write(events, fmt, sys.stdout, failing, details, to_terminal=True)
            return
        with path.open("w", encoding="utf-8", errors="backslashreplace", newline="\n") as handle:
            _write(events, fmt, handle, failing, details, to_terminal=False)
        return
    _write(events, fmt, stream_or_path, failing, details, to_terminal=False)


def _write(
    events: list[dict],
    fmt: str,
    stream: IO[str],
    failing: list[str],
    details: bool,
    to_terminal: bool,
) -> None:
    if fmt == "terminal":
        if to_terminal:
            console = Console(highlight=False, soft_wrap=True)
        else:  # plain text for a file or a captured stream: no colour codes
            console = Console(
                file=stream,
                highlight=False,
                soft_wrap=True,
                no_color=True,
                color_system=None,
                width=120,
                force_terminal=False,
            )
        write_terminal(events, console, details=details)
        return
    WRITERS[fmt](events, stream, failing)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write results (JSON lines from `run --results`) as terminal, md, json, junit, sarif or html",
        description="Read one or more results files (a finished, interrupted or merged run) and write them "
        "in one format: the terminal grid, Markdown, the JSON report (mcp-matrix.report v1), JUnit XML, "
        "SARIF 2.1.0 or a self-contained HTML page. Several files are merged in the order given.",
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
        default=",".join(RELEASE_FAILING),
        metavar="VERDICTS",
        help="verdicts reported as release-failing: JUnit failures, SARIF errors "
        f"(default: {','.join(RELEASE_FAILING)}; 'none' for no verdict)",
    )
    p.add_argument(
        "--quiet", action="store_true", help="terminal: print only the grid, no finding details"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: `run` imports write_report from this module to write --report files.
    from matrix.commands.run import parse_fail_on

    failing = parse_fail_on(args.fail_on)
    events: list[dict] = []
    for path in args.results:
        events.extend(read_events(path))
    if args.output:
        write_report(events, args.format, args.output, failing, details=not args.quiet)
        return EXIT_OK
    if args.format != "terminal" and isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")
    write_report(events, args.format, None, failing, details=not args.quiet)
    return EXIT_OK


__all__ = ["FORMATS", "SUFFIX", "register", "run", "write_report"]
