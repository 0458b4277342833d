"""Command line: ``python -m matrix_servers.gateway [options]``.

``--version`` picks the record schemas (2, the default, adds one optional field per
rich write tool). ``--transport stdio`` (default) speaks MCP on stdin/stdout and
prints nothing else there. ``--transport http`` serves Streamable HTTP at ``/mcp``
and prints exactly one line, ``MCP_MATRIX_LISTENING http://HOST:PORT/mcp``, once
connections are accepted.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio

from ..serving import exit_now, serve_http, serve_stdio
from .backend import GatewayBackend
from .gateway import Gateway
from .schemas import LATEST_VERSION, SCHEMA_VERSIONS
from .server import build_server


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m matrix_servers.gateway",
        description=(
            "Reference MCP write gateway: rich write tools and their raw twins "
            "(docs/design.md#a-raw-twin-for-write-tools)."
        ),
    )
    parser.add_argument(
        "--version",
        type=int,
        choices=SCHEMA_VERSIONS,
        default=LATEST_VERSION,
        help=f"record schema version (default {LATEST_VERSION}; 2 adds one field per rich tool)",
    )
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    parser.add_argument("--port", type=int, default=0, help="HTTP port; 0 picks a free one")
    parser.add_argument(
        "--db", type=Path, default=None, help="SQLite file (default: a file in a temp dir)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="matrix-gateway-") as tmp:
        backend = GatewayBackend(args.db if args.db is not None else Path(tmp) / "gateway.db")
        try:
            server = build_server(Gateway(backend, args.version))
            if args.transport == "http":
                anyio.run(serve_http, server, args.host, args.port)
            else:
                anyio.run(serve_stdio, server)
        except KeyboardInterrupt:
            pass
        finally:
            backend.close()


if __name__ == "__main__":
    main()
    exit_now()
