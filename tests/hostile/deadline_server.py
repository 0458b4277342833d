"""A hostile MCP server for the deadline and decoding tests (the standard library, and the
faulty server's gzip bomb): each mode is one attack of issue 24 on one phase (a POST, a
notification, a reply, the close, a page, a body).

    python deadline_server.py MODE [ARG ...]

Over HTTP it prints ``MCP_MATRIX_LISTENING <url>`` once listening on 127.0.0.1 (``--sse URL`` for
the ``sse-*`` modes, ``--http URL`` for the ``http-*`` modes). Over stdio,
``stdio-slow-pages PAGES SECONDS`` answers each page after SECONDS and ``stdio-slow-calls
SECONDS`` each ``tools/call``. Everything the attack does not touch is a well-behaved server with one read-only
tool, ``echo``. Handler threads are daemons and every held answer sleeps in small steps, so the
process ends at once when its parent kills it.

Legacy HTTP+SSE (2024-11-05), each aimed at the POST of ``tools/call``:
  sse-post-hang       the POST is never answered (not even a status line)
  sse-status-dribble  the status line ``HTTP/1.1 202 Accepted`` one byte every 2 s
  sse-gzip-bomb       202 with a gzip body of about 1 MB that inflates to 1 GiB
  sse-endless         202 with a chunked body that never ends (64 KiB chunks)
  sse-body-dribble    202 with a 4,000-byte body sent one byte every 2 s
Streamable HTTP:
  http-initialized-hang  the POST of ``notifications/initialized`` is never answered
  http-delete-dribble    the DELETE at close: its status line one byte every 2 s
  http-request-hold      ``tools/call`` is answered with an SSE stream carrying a ``roots/list``
                         request and nothing more; the POST of our reply is never answered
  http-gzip-gzip         ``tools/list`` answered ``Content-Encoding: gzip, gzip``: about 2 KB
                         that inflate to 1 GiB
  http-utf16             ``tools/call`` answered ``application/json; charset=utf-16``
  http-sse-as-json       ``tools/call`` answered with SSE framing labelled ``application/json``
  http-brotli            ``tools/call`` answered ``Content-Encoding: br`` (we never offer it)
  http-reset             ``tools/call``: the connection is reset (RST), no answer
"""

from __future__ import annotations

import gzip
import json
import queue
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from matrix_servers.faulty.http_server import gzip_bomb_body  # 1 MB of gzip, 1 GiB of JSON

TOOL = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "annotations": {"readOnlyHint": True},
}
DRIBBLE_SECONDS = 2.0


def answer(message: dict, page: int = 0, pages: int = 1) -> dict:
    """The well-behaved answer to one request."""
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        result: dict = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "deadline-hostile", "version": "1"},
        }
    elif method == "tools/list":
        tool = dict(TOOL, name="echo" if page == 0 else f"echo_{page}")
        result = {"tools": [tool]}
        if page + 1 < pages:
            result["nextCursor"] = str(page + 1)
    elif method == "tools/call":
        text = json.dumps((params.get("arguments") or {}).get("text"))
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {
            "jsonrpc": "2.0",
            "id": message.get("id"),
            "error": {"code": -32601, "message": str(method)},
        }
    return {"jsonrpc": "2.0", "id": message.get("id"), "result": result}


def hold() -> None:
    while True:
        time.sleep(0.5)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = mode
        self.streams: dict[str, queue.Queue] = {}
        self.lock = threading.Lock()
        self.count = 0

    def handle_error(self, request, client_address) -> None:  # a client that went away
        pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, format: str, *args) -> None:
        pass

    # -- helpers --------------------------------------------------------------
    def body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")

    def reply(
        self, status: int, body: bytes = b"", ctype: str = "", headers: dict | None = None
    ) -> None:
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def dribble(self, data: bytes) -> None:
        for i in range(len(data)):
            self.wfile.write(data[i : i + 1])
            self.wfile.flush()
            time.sleep(DRIBBLE_SECONDS)

    def reset(self) -> None:
        """Close with RST: SO_LINGER on, zero seconds."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    # -- legacy HTTP+SSE --------------------------------------------------------
    def do_GET(self) -> None:
        with self.server.lock:
            self.server.count += 1
            sid = str(self.server.count)
            stream: queue.Queue = queue.Queue()
            self.server.streams[sid] = stream
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(f"event: endpoint\ndata: /messages?session={sid}\n\n".encode())
        self.wfile.flush()
        while True:
            try:
                message = stream.get(timeout=15)
            except queue.Empty:
                self.wfile.write(b": keep-alive\n\n")
            else:
                self.wfile.write(f"event: message\ndata: {json.dumps(message)}\n\n".encode())
            self.wfile.flush()

    def sse_post(self) -> None:
        sid = self.path.partition("session=")[2]
        message = self.body()
        mode = self.server.mode
        if message.get("method") == "tools/call" and mode != "sse-ok":
            if mode == "sse-post-hang":
                hold()
            if mode == "sse-status-dribble":
                self.dribble(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                return
            if mode == "sse-gzip-bomb":
                self.reply(
                    202,
                    gzip_bomb_body(message.get("id")),
                    "application/json",
                    {"Content-Encoding": "gzip"},
                )
                return
            if mode == "sse-endless":
                self.send_response(202)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b"%x\r\n%s\r\n" % (1 << 16, b"x" * (1 << 16))
                while True:
                    self.wfile.write(chunk)
            if mode == "sse-body-dribble":
                self.send_response(202)
                self.send_header("Content-Length", "4000")
                self.end_headers()
                self.dribble(b"a" * 4000)
                return
        self.reply(202)
        if "method" in message and "id" in message:
            self.server.streams[sid].put(answer(message))

    # -- Streamable HTTP ----------------------------------------------------------
    def do_POST(self) -> None:
        if self.path.startswith("/messages"):
            self.sse_post()
            return
        message = self.body()
        mode, method = self.server.mode, message.get("method")
        if "id" not in message or "method" not in message:  # a notification or our reply
            if mode == "http-initialized-hang" and method == "notifications/initialized":
                hold()
            if mode == "http-request-hold" and "method" not in message:
                hold()
            self.reply(202)
            return
        sid = {"Mcp-Session-Id": "s-1"}
        if method == "tools/list" and mode == "http-gzip-gzip":
            inner = gzip_bomb_body(message.get("id"))
            self.reply(
                200,
                gzip.compress(inner, 9),
                "application/json",
                {**sid, "Content-Encoding": "gzip, gzip"},
            )
            return
        if method == "tools/call":
            if mode == "http-request-hold":
                ask = {"jsonrpc": "2.0", "id": "ask-1", "method": "roots/list"}
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                data = f"event: message\ndata: {json.dumps(ask)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                hold()
            if mode == "http-utf16":
                text = json.dumps(answer(message))
                self.reply(200, text.encode("utf-16"), "application/json; charset=utf-16", sid)
                return
            if mode == "http-sse-as-json":
                data = f"event: message\ndata: {json.dumps(answer(message))}\n\n".encode()
                self.reply(200, data, "application/json", sid)
                return
            if mode == "http-brotli":
                self.reply(
                    200,
                    b"\x8b\x03\x80" + json.dumps(answer(message)).encode() + b"\x03",
                    "application/json",
                    {**sid, "Content-Encoding": "br"},
                )
                return
            if mode == "http-reset":
                self.reset()
                return
        self.reply(200, json.dumps(answer(message)).encode(), "application/json", sid)

    def do_DELETE(self) -> None:
        if self.server.mode == "http-delete-dribble":
            self.dribble(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            return
        self.reply(200)


def stdio_slow(pages: int, seconds: float, slow: str) -> None:
    """Over stdio: ``pages`` pages of tools; each ``slow`` request answered after ``seconds``."""
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        page = 0
        if message["method"] == slow:
            time.sleep(seconds)
        if message["method"] == "tools/list":
            page = int((message.get("params") or {}).get("cursor") or 0)
        print(json.dumps(answer(message, page, pages)), flush=True)


def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio-slow-pages":
        stdio_slow(int(sys.argv[2]), float(sys.argv[3]), "tools/list")
        return
    if mode == "stdio-slow-calls":
        stdio_slow(1, float(sys.argv[2]), "tools/call")
        return
    server = Server(mode)
    path = "/sse" if mode.startswith("sse-") else "/mcp"
    print(f"MCP_MATRIX_LISTENING http://127.0.0.1:{server.server_address[1]}{path}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
