"""Command line: ``python -m matrix_servers.memory [options]``.

``--transport stdio`` (default) speaks MCP on stdin/stdout and prints nothing else
there. ``--transport http`` serves Streamable HTTP at ``/mcp`` and prints exactly one
line, ``MCP_MATRIX_LISTENING http://HOST:PORT/mcp``, once connections are accepted;
``--transport sse`` serves the legacy HTTP+SSE transport (``.../sse``) the same way.
``--protocol`` picks the eras served: ``both`` (default), ``modern-only`` (2026-07-28,
no ``initialize``) or ``legacy-only`` (the ``initialize`` handshake only).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio

from ..serving import PROTOCOLS, exit_now, gate_protocol, serve_http, serve_sse, serve_stdio
from .backend import MemoryBackend
from .schemas import SCHEMA_VARIANTS
from .server import build_server


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
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
        "--db", type=Path, default=None, help="SQLite file (default: a file in a temp dir)"
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
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="matrix-memory-") as tmp:
        backend = MemoryBackend(args.db if args.db is not None else Path(tmp) / "memory.db")
        try:
            server = gate_protocol(
                build_server(
                    backend, schema=args.schema, page_size=args.page_size, call_log=args.call_log
                ),
                args.protocol,
            )
            if args.transport == "http":
                anyio.run(serve_http, server, args.host, args.port)
            elif args.transport == "sse":
                anyio.run(serve_sse, server, args.host, args.port, sys.stdout, args.protocol)
            else:
                anyio.run(serve_stdio, server, args.protocol)
        except KeyboardInterrupt:
            pass
        finally:
            backend.close()


if __name__ == "__main__":
    main()
    exit_now()
