"""Command line: python -m matrix_servers.faulty --mode MODE [--transport stdio|http] ...

A deliberately misbehaving MCP server, one fault per mode, so the matrix can
prove it reports bad servers instead of crashing or hanging.
"""

from __future__ import annotations

import argparse
import sys

from .protocol import HTTP_ONLY_MODES, MODES, Connection


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m matrix_servers.faulty",
        description="MCP server that breaks one thing on purpose (see --mode).",
    )
    p.add_argument("--mode", default="ok", choices=MODES, help="the fault to inject")
    p.add_argument("--transport", default="stdio", choices=("stdio", "http"))
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="HTTP port; 0 picks a free one")
    p.add_argument("--record", metavar="FILE", help="append one JSON line per tools/call")
    p.add_argument(
        "--ref",
        action="append",
        default=[],
        metavar="URI",
        help="for --mode external-ref: one tool per URI whose schemas $ref it",
    )
    p.add_argument("--delay", type=float, default=2.0, help="seconds, for --mode slow")
    p.add_argument(
        "--http-body",
        default="sse",
        choices=("sse", "json"),
        help="HTTP answer format when the client accepts both (default sse)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.mode in HTTP_ONLY_MODES and args.transport != "http":
        build_parser().error(f"--mode {args.mode} needs --transport http")
    if args.transport == "http":
        from .http_server import serve_http

        return serve_http(
            args.host,
            args.port,
            args.mode,
            args.delay,
            args.record,
            args.http_body,
            tuple(args.ref),
        )
    from .stdio import serve_stdio

    return serve_stdio(
        Connection(mode=args.mode, delay=args.delay, record=args.record, refs=tuple(args.ref))
    )


if __name__ == "__main__":
    sys.exit(main())
