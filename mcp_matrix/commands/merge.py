"""``mcp-matrix merge``: join results from several runs or shards into one results file.

A tox parallel run or a CI matrix sharded by client ends in one report: every event of
every input, in order, each input's ``run-started`` kept. The gate and every writer read all
of them (``mcp_matrix.report.grid.runs``, ``run_profiles``), so a merged file is judged exactly as
the union of its shards, whatever the order of the inputs. Inputs are checked like any
results file first, of any readable version; the output is the current version, each run's
shared entries numbered anew from its run-started line (docs/results.md).
"""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from pathlib import Path

from mcp_matrix.core.errors import InputError
from mcp_matrix.core.events import Event
from mcp_matrix.core.outfiles import open_results
from mcp_matrix.run.results import ResultsWriter, read_typed


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "merge",
        help="join results files from several runs or shards into one",
        description="Concatenate the events of several results files (checked first) into one.",
    )
    p.add_argument(
        "inputs", nargs="+", metavar="RESULTS", help="results files (globs expanded by your shell)"
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    p.set_defaults(handler=run)


def merge(paths: list[str]) -> list[Event]:
    events: list[Event] = []
    for path in paths:
        events.extend(read_typed(path))
    return events


def run(args: argparse.Namespace) -> int:
    if args.output and any(Path(i).resolve() == Path(args.output).resolve() for i in args.inputs):
        raise InputError("the output file is also an input", where=args.output)
    events = merge(args.inputs)  # every input read and checked before the output is opened
    with open_results(args.output, "--output") if args.output else nullcontext(sys.stdout) as out:
        writer = ResultsWriter(out)  # the current version (its run-started lines say so)
        for e in events:  # written as read: a lone surrogate as its escape, as run writes it
            writer(e)
    return 0
