"""Command line: ``python -m matrix_servers.memory [options]``.

``--transport stdio`` (default) speaks MCP on stdin/stdout and prints nothing else
there. ``--transport http`` serves Streamable HTTP at ``/mcp`` and prints exactly one
line, ``MCP_MATRIX_LISTENING http://HOST:PORT/mcp``, once connections are accepted;
``--transport sse`` serves the legacy HTTP+SSE transport (``.../sse``) the same way.
``--protocol`` picks the eras served: ``both`` (default), ``modern-only`` (2026-07-28,
no ``initialize``) or ``legacy-only`` (the ``initialize`` handshake only).
Without ``--db`` the store is an SQLite database in memory: each process starts empty and leaves
nothing behind, however it ends.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import anyio

from ..serving import exit_now, gate_protocol, serve_http, serve_sse, serve_stdio
from .backend import IN_MEMORY, MemoryBackend
from .options import parse_args
from .server import build_server

__all__ = ["main", "parse_args"]


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    backend = MemoryBackend(args.db if args.db is not None else IN_MEMORY)
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
