"""Command line: ``python -m matrix_servers.strict``: MCP on stdin/stdout, nothing else there."""

from __future__ import annotations

import anyio

from ..serving import serve_stdio
from .server import build_server


def main() -> None:
    try:
        anyio.run(serve_stdio, build_server())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
