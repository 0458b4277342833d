"""Command line: ``python -m matrix_servers.strict [--transport stdio|http|sse] [--host H] [--port P]``.

stdio (default) speaks MCP on stdin/stdout and prints nothing else there; http and sse print one
``MCP_MATRIX_LISTENING <url>`` line once connections are accepted (``matrix_servers.serving``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import anyio

from ..serving import exit_now, serve_http, serve_sse, serve_stdio
from .server import build_server


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m matrix_servers.strict",
        description="Reference server that validates every call against its listed inputSchema.",
    )
    p.add_argument("--transport", choices=("stdio", "http", "sse"), default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    p.add_argument("--port", type=int, default=0, help="HTTP port; 0 picks a free one")
    args = p.parse_args(argv)
    server = build_server()
    try:
        if args.transport == "http":
            anyio.run(serve_http, server, args.host, args.port)
        elif args.transport == "sse":
            anyio.run(serve_sse, server, args.host, args.port)
        else:
            anyio.run(serve_stdio, server)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
    exit_now()
