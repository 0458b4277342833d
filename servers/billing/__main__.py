"""Command line: ``python -m matrix_servers.billing [options]``.

``--transport stdio`` (default) speaks MCP on stdin/stdout and prints nothing else
there. ``--transport http`` serves Streamable HTTP at ``/mcp`` and prints exactly one
line, ``MCP_MATRIX_LISTENING http://HOST:PORT/mcp``, once connections are accepted.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio

from ..serving import exit_now, serve_http, serve_stdio
from .backend import BillingBackend
from .schemas import VERSIONS
from .server import build_server


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m matrix_servers.billing",
        description=(
            "Reference MCP billing server: the customer_id -> account_id rename of "
            "update_account, in four versions."
        ),
    )
    parser.add_argument(
        "--version",
        choices=VERSIONS,
        default="2",
        help=(
            "1: customer_id only (before the rename); 2: account_id plus the deprecated "
            "alias customer_id (default); 3: account_id only (alias retired); v2tool: "
            "version 1 plus a parallel update_account_v2"
        ),
    )
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    parser.add_argument("--port", type=int, default=0, help="HTTP port; 0 picks a free one")
    parser.add_argument(
        "--db",
        type=Path,
        default=None,
        help="SQLite file (default: a file in a temp dir); seeded with the demo customers",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="matrix-billing-") as tmp:
        backend = BillingBackend(args.db if args.db is not None else Path(tmp) / "billing.db")
        try:
            server = build_server(backend, version=args.version)
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
