"""Command line: python -m matrix_servers.probe --tools FILE.json [--transport stdio|http].

Over HTTP it prints ``MCP_MATRIX_LISTENING <url>`` once it accepts connections.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .protocol import Probe, load_tools


def serve_stdio(probe: Probe) -> int:
    out = sys.stdout.buffer
    for line in iter(sys.stdin.buffer.readline, b""):
        text = line.decode("utf-8", "replace").strip()
        if not text:
            continue
        try:
            message = json.loads(text)
        except ValueError:
            answer = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "Parse error"},
            }
        else:
            answer = probe.handle(message)
        if answer is not None:
            try:
                out.write(json.dumps(answer).encode() + b"\n")
                out.flush()
            except (BrokenPipeError, ValueError):
                return 0
    return 0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", kind: str = "application/json") -> None:
        self.send_response(status)
        if body:
            self.send_header("Content-Type", kind)
        self.send_header("Mcp-Session-Id", "probe-session")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # no server-initiated stream
        self._send(405)

    def do_DELETE(self) -> None:
        self._send(200)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            message = json.loads(raw)
        except ValueError:
            self._send(
                400,
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {"code": -32700, "message": "Parse error"},
                    }
                ).encode(),
            )
            return
        with self.server.lock:  # type: ignore[attr-defined]
            answer = self.server.probe.handle(message)  # type: ignore[attr-defined]
        if answer is None:
            self._send(202)
        else:
            self._send(200, json.dumps(answer).encode())


def serve_http(probe: Probe, host: str, port: int) -> int:
    httpd = ThreadingHTTPServer((host, port), _Handler)
    httpd.daemon_threads = True
    httpd.probe = probe  # type: ignore[attr-defined]
    httpd.lock = threading.Lock()  # type: ignore[attr-defined]
    h, p = httpd.server_address[:2]
    sys.stdout.write(f"MCP_MATRIX_LISTENING http://{h}:{p}/mcp\n")
    sys.stdout.flush()
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m matrix_servers.probe", description=__doc__.splitlines()[0]
    )
    p.add_argument("--tools", required=True, help="JSON file: a list of tools, served as they are")
    p.add_argument(
        "--page-size", type=int, default=0, help="tools per tools/list page (0: one page)"
    )
    p.add_argument("--transport", default="stdio", choices=("stdio", "http"))
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args(argv)
    try:
        probe = Probe(load_tools(args.tools), page_size=args.page_size)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"probe: {exc}\n")
        return 2
    if args.transport == "http":
        return serve_http(probe, args.host, args.port)
    return serve_stdio(probe)


if __name__ == "__main__":
    sys.exit(main())
