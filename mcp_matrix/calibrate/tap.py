"""The recording tap: sits between a real client and the server and logs every JSON-RPC
message both ways (the handshake, ``tools/list``, ``tools/call`` arguments as they arrive).

Why a tap and not the server's own log: the tap sees exactly the bytes the client sent,
before any SDK on the server side parses or validates them, and it works for any server
(the bundled probe server or the user's own).

- stdio: ``python -m mcp_matrix.calibrate.tap --log FILE -- CMD ARGS...`` is the command the
  client is configured to start; it starts ``CMD`` and copies lines both ways.
- HTTP: ``HttpTap(upstream, log)`` is a proxy on 127.0.0.1 that forwards each request to the
  Streamable HTTP server and streams the answer back (JSON or SSE), logging the messages.

The log is JSON lines: ``{"t": seconds, "dir": "c2s"|"s2c", "message": ...}``, with ``raw``
instead of ``message`` for a line that is not JSON, and ``event`` lines (``start``,
``exit``, ``http``) that say what the tap itself saw. A message holding a number no JSON output
can keep (``NaN``, ``Infinity``, ``1e999``, an integer over the digit bound) is read as the wire
reads it (``mcp_matrix.wire.transport.decode_json``): its text is logged as ``raw`` with
``unkept`` saying why, and passed on unchanged; read as Python's ``json`` reads it, it was written
back as ``NaN``, and the log and the calibration record made from it were invalid JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, TYPE_CHECKING

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.wire.transport import IntegerOverCap, NotJsonNumber, decode_json

if TYPE_CHECKING:
    import httpx

C2S, S2C = "c2s", "s2c"
HOP_HEADERS = {
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "accept-encoding",
}


class TapLog:
    """Append-only JSON-lines log, safe to write from several threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._file = open(self.path, "a", encoding="utf-8")

    def write(self, entry: dict) -> None:
        entry = {"t": round(time.monotonic() - self._start, 4), **entry}
        line = json.dumps(entry, ensure_ascii=False)
        with self._lock:
            if not self._file.closed:
                self._file.write(line + "\n")
                self._file.flush()

    def message(self, direction: str, text: str, **extra: JSON) -> None:
        text = text.strip()
        if not text:
            return
        try:
            self.write({"dir": direction, "message": decode_json(text), **extra})
        except (IntegerOverCap, NotJsonNumber) as exc:
            unkept = exc.at(_WAYS[direction])
            self.write({"dir": direction, "raw": text[:10_000], "unkept": unkept, **extra})
        except ValueError:
            self.write({"dir": direction, "raw": text[:10_000], **extra})

    def close(self) -> None:
        with self._lock:
            self._file.close()


_WAYS = {C2S: "the way to the server", S2C: "the way to the client"}


def read_log(path: str | Path) -> list[dict]:
    """The entries of a tap log; a torn last line (the tap was killed mid-write) is skipped, and
    so is a line holding ``NaN`` or ``Infinity`` (a log written before the tap refused them)."""
    out = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    for line in text.splitlines():
        try:
            out.append(decode_json(line))
        except ValueError:
            continue
    return out


def messages(entries: list[dict]) -> Iterator[tuple[str, dict]]:
    """``(direction, message)`` for every JSON-RPC message (batches opened up)."""
    for e in entries:
        m = e.get("message")
        for one in m if isinstance(m, list) else [m]:
            if isinstance(one, dict) and e.get("dir") in (C2S, S2C):
                yield e["dir"], one


# -- stdio ---------------------------------------------------------------------------------


def _pump(src: IO[bytes], dst: IO[bytes], log: TapLog, direction: str, close_dst: bool) -> None:
    try:
        for line in iter(src.readline, b""):
            log.message(direction, line.decode("utf-8", "replace"))
            try:
                dst.write(line)
                dst.flush()
            except (BrokenPipeError, ValueError, OSError):
                break
    finally:
        if close_dst:
            try:
                dst.close()
            except OSError:
                pass


def run_stdio(log_path: str, argv: list[str]) -> int:
    """Start ``argv`` and copy newline-delimited messages both ways, logging each."""
    log = TapLog(log_path)
    log.write({"event": "start", "transport": "stdio", "argv": argv})
    try:
        child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as exc:
        log.write({"event": "exit", "error": f"could not start the server: {exc}"})
        log.close()
        sys.stderr.write(f"mcp-matrix tap: could not start {argv[0]!r}: {exc}\n")
        return 127
    up = threading.Thread(
        target=_pump, args=(sys.stdin.buffer, child.stdin, log, C2S, True), daemon=True
    )
    down = threading.Thread(
        target=_pump, args=(child.stdout, sys.stdout.buffer, log, S2C, False), daemon=True
    )
    up.start()
    down.start()
    code = child.wait()
    down.join(timeout=5)
    log.write({"event": "exit", "returncode": code})
    log.close()
    return code


# -- HTTP ----------------------------------------------------------------------------------


class HttpTap:
    """A logging reverse proxy in front of one Streamable HTTP MCP endpoint."""

    def __init__(self, upstream: str, log_path: str | Path) -> None:
        self.upstream = upstream
        self.log = TapLog(log_path)
        self.log.write({"event": "start", "transport": "http", "upstream": upstream})
        import httpx  # here: `profiles` reads calibration records through this package

        self.client = httpx.Client(timeout=httpx.Timeout(60.0, read=None))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _TapHandler)
        self._server.daemon_threads = True
        self._server.tap = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="http-tap", daemon=True
        )

    @property
    def url(self) -> str:
        import httpx

        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an IPv4 TCP server's address
        path = httpx.URL(self.upstream).raw_path.decode() or "/"
        return f"http://{host}:{port}{path}"

    def start(self) -> HttpTap:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.client.close()
        self.log.write({"event": "exit"})
        self.log.close()

    def __enter__(self) -> HttpTap:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class _TapHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    @property
    def tap(self) -> HttpTap:
        return self.server.tap  # type: ignore[attr-defined]

    def do_GET(self) -> None:
        self._forward("GET")

    def do_POST(self) -> None:
        self._forward("POST")

    def do_DELETE(self) -> None:
        self._forward("DELETE")

    def _forward(self, method: str) -> None:
        import httpx

        tap = self.tap
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        tap.log.write({"event": "http", "method": method, "path": self.path})
        if body:
            tap.log.message(C2S, body.decode("utf-8", "replace"))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
        base = httpx.URL(tap.upstream)
        target = base.copy_with(raw_path=self.path.encode())
        try:
            with tap.client.stream(method, target, headers=headers, content=body or None) as resp:
                self._relay(resp)
        except httpx.HTTPError as exc:
            tap.log.write({"event": "http-error", "error": str(exc)})
            try:
                self.send_response(502)
                self.send_header("Content-Length", "0")
                self.end_headers()
            except OSError:
                pass

    def _relay(self, resp: httpx.Response) -> None:
        import httpx

        tap = self.tap
        self.send_response(resp.status_code)
        for k, v in resp.headers.items():
            if k.lower() not in HOP_HEADERS and k.lower() != "content-encoding":
                self.send_header(k, v)
        kind = resp.headers.get("content-type", "")
        if "text/event-stream" in kind:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            buf = ""
            try:
                for chunk in resp.iter_raw():
                    self._chunk(chunk)
                    buf += chunk.decode("utf-8", "replace")
                    while "\n\n" in buf:
                        event, buf = buf.split("\n\n", 1)
                        data = "\n".join(
                            ln[5:].lstrip() for ln in event.splitlines() if ln.startswith("data:")
                        )
                        tap.log.message(S2C, data, status=resp.status_code)
                self._chunk(b"")
            except (OSError, httpx.HTTPError):
                return
        else:
            answer = resp.read()
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            if answer:
                tap.log.message(S2C, answer.decode("utf-8", "replace"), status=resp.status_code)
            try:
                self.wfile.write(answer)
            except OSError:
                pass

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def stdio_command(log_path: str | Path, argv: list[str]) -> list[str]:
    """The argv a client should start to reach ``argv`` through the tap."""
    return [sys.executable, "-m", "mcp_matrix.calibrate.tap", "--log", str(log_path), "--", *argv]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mcp_matrix.calibrate.tap", description=__doc__.splitlines()[0]
    )
    p.add_argument("--log", required=True, help="JSON-lines log to append to")
    p.add_argument(
        "command", nargs=argparse.REMAINDER, help="-- CMD ARGS: the stdio server to start"
    )
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("give the server command after --")
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    return run_stdio(args.log, command)


if __name__ == "__main__":
    sys.exit(main())
