"""The memory server's command line, its parser built once per interpreter: imported by a warm
template, so each server forked from it parses with the template's parser instead of building
one (a parser and its seven arguments were about a millisecond of each session's CPU)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ..serving import PROTOCOLS
from .schemas import SCHEMA_VARIANTS


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m matrix_servers.memory",
        description="Reference MCP memory server (seven tools; docs/design.md#flatten-the-root).",
    )
    parser.add_argument(
        "--schema",
        choices=SCHEMA_VARIANTS,
        default="flat",
        help="memory_reflect input schema: flat (amended decision, default) or anyof (original)",
    )
    parser.add_argument(
        "--transport",
        choices=("stdio", "http", "sse"),
        default="stdio",
        help="sse: the legacy HTTP+SSE transport of protocol 2024-11-05",
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="both",
        help="eras served: both (default), modern-only (2026-07-28), legacy-only (initialize)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    parser.add_argument("--port", type=int, default=0, help="HTTP port; 0 picks a free one")
    parser.add_argument(
        "--db", type=Path, default=None, help="SQLite file (default: kept in memory)"
    )
    parser.add_argument(
        "--call-log",
        default=None,
        metavar="FILE",
        help="append one JSON line per tools/call received (tool, arguments, client, pid)",
    )
    parser.add_argument(
        "--page-size",
        type=_positive,
        default=None,
        help="tools per tools/list page (default: all in one page)",
    )
    return parser


PARSER = _parser()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return PARSER.parse_args(argv)
