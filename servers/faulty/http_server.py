"""Streamable HTTP transport: POST/DELETE /mcp, sessions, JSON or SSE answers.

Built on http.server so the HTTP layer itself can misbehave (wrong status,
wrong content type, streams that never end, sessions that vanish).  Handler
threads are daemons: a stream that never closes must not block shutdown.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .protocol import (
    KEEPALIVE_SECONDS,
    AskClient,
    Connection,
    Crash,
    Hang,
    Noise,
    Send,
    Sleep,
    encode,
    error,
    log,
)
from .stdio import crash

MCP_PATH = "/mcp"


@dataclass
class Session:
    id: str
    conn: Connection
    outbox: list[str] = field(default_factory=list)  # notifications for the next SSE answer
    asks: dict[str, threading.Event] = field(default_factory=dict)
    expired: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


class FaultyHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, mode: str, delay: float, record: str | None, body: str):
        super().__init__(address, Handler)
        self.mode = mode
        self.delay = delay
        self.record = record
        self.body = body  # "sse" or "json": how requests are answered when both are accepted
        self.sessions: dict[str, Session] = {}
        self.lock = threading.Lock()
        self.hung = False

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (BrokenPipeError, ConnectionResetError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def _hang() -> None:
    threading.Event().wait()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FaultyHTTPServer
    server_version = "faulty/0.1"

    def log_message(self, format: str, *args) -> None:
        """Quiet: a parent that never reads stderr must not make us block on a full pipe."""

    # -- plain answers ------------------------------------------------------------

    def plain(
        self,
        status: int,
        body: bytes = b"",
        ctype: str = "text/plain",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        if body:
            self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)
        self.wfile.flush()

    def gzip_bomb(self, msg_id: object, session_id: str) -> None:
        """A small gzip body that inflates to GZIP_BOMB_BYTES of JSON (the tools/list answer)."""
        body = gzip_bomb_body(msg_id)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Mcp-Session-Id", session_id)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def json_error(self, status: int, code: int, message: str) -> None:
        body = encode(error(None, code, message)).encode()
        self.plain(status, body, "application/json")

    # -- methods ------------------------------------------------------------------

    def do_GET(self) -> None:
        if self.path.split("?")[0] != MCP_PATH:
            self.plain(404, b"Not Found\n")
            return
        # No standalone server-to-client stream; allowed by the spec.
        self.plain(405, b"Method Not Allowed\n", headers={"Allow": "POST, DELETE"})

    def do_DELETE(self) -> None:
        if self.path.split("?")[0] != MCP_PATH:
            self.plain(404, b"Not Found\n")
            return
        sid = self.headers.get("Mcp-Session-Id")
        with self.server.lock:
            session = self.server.sessions.get(sid or "")
            if session is None or session.expired:
                session = None
            else:
                del self.server.sessions[session.id]
        if sid is None:
            self.json_error(400, -32600, "Bad Request: Mcp-Session-Id header is required")
        elif session is None:
            self.json_error(404, -32001, "Session not found")
        else:
            self.plain(200)

    def do_POST(self) -> None:
        try:
            self._post()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _post(self) -> None:
        srv = self.server
        if self.path.split("?")[0] != MCP_PATH:
            self.plain(404, b"Not Found\n")
            return
        if srv.hung:
            _hang()
        mode = srv.mode
        if mode == "http-500":
            self.plain(500, b"Internal Server Error: boom\n")
            return
        if mode == "http-404":
            self.plain(404, b"Not Found\n")
            return
        if mode == "http-405":
            self.plain(405, b"Method Not Allowed\n", headers={"Allow": "GET"})
            return

        length = self.headers.get("Content-Length")
        if length is None:
            self.plain(411, b"Length Required\n")
            return
        raw = self.rfile.read(int(length))

        if mode == "wrong-content-type":
            page = b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>\n"
            self.plain(200, page, "text/html; charset=utf-8")
            return

        accept = self.headers.get("Accept", "*/*").lower()
        any_type = "*/*" in accept
        wants_sse = any_type or "text/event-stream" in accept
        wants_json = any_type or "application/json" in accept
        if not (wants_sse or wants_json):
            self.json_error(406, -32600, "Not Acceptable: accept application/json or SSE")
            return

        try:
            message = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            self.json_error(400, -32700, f"Parse error: {exc}")
            return
        if isinstance(message, list):
            self.json_error(400, -32600, "Batches are not supported")
            return
        if not isinstance(message, dict):
            self.json_error(400, -32600, "Invalid Request")
            return

        method = message.get("method")
        if method == "initialize":
            conn = Connection(
                mode=mode, delay=srv.delay, record=srv.record, refs=getattr(srv, "refs", ())
            )
            session = Session(id=uuid.uuid4().hex, conn=conn)
            with srv.lock:
                srv.sessions[session.id] = session
        else:
            sid = self.headers.get("Mcp-Session-Id")
            if sid is None:
                self.json_error(400, -32600, "Bad Request: Mcp-Session-Id header is required")
                return
            with srv.lock:
                found = srv.sessions.get(sid)
            if found is None or found.expired:
                self.json_error(404, -32001, "Session not found")
                return
            session = found

        if not isinstance(method, str):  # a client's response to our request
            event = session.asks.pop(message.get("id"), None) if "id" in message else None
            if event is not None:
                session.conn.client_answered(message)
                event.set()
            else:
                session.conn.handle(message)
            self.plain(202)
            return
        if "id" not in message:  # a notification: 202, anything to push waits in the outbox
            for action in session.conn.handle(message):
                if isinstance(action, Send):
                    with session.lock:
                        session.outbox.append(action.text)
                elif isinstance(action, Noise):
                    _noise(action.text)
            self.plain(202)
            return

        actions = session.conn.handle(message)
        streaming = any(
            isinstance(a, AskClient) or (isinstance(a, Hang) and a.keepalive) for a in actions
        )
        use_sse = wants_sse and (srv.body == "sse" or not wants_json or streaming)
        if mode == "gzip-bomb" and method == "tools/list":
            self.gzip_bomb(message.get("id"), session.id)
            return
        if mode == "session-expires" and method == "tools/list":
            session.expired = True  # before answering: a quick next request must already see it
        answer = _Answer(self, session, use_sse)
        answer.run(actions)


GZIP_BOMB_BYTES = 1024 * 1024 * 1024


def gzip_bomb_body(msg_id: object) -> bytes:
    """``{"jsonrpc":"2.0","id":ID,"result":{"tools":[],"pad":"000..."}}`` gzipped (about 1 MB).

    One MiB of zeros is compressed once after a full flush (which resets the compressor, so
    every such block is the same bytes) and repeated; the gzip header and trailer (CRC-32 and
    length of the whole text) are written by hand. Built in about a second, not thirty."""
    import struct
    import zlib

    zeros = b"0" * (1024 * 1024)
    blocks = GZIP_BOMB_BYTES // len(zeros)
    head = (
        '{"jsonrpc":"2.0","id":' + json.dumps(msg_id) + ',"result":{"tools":[],"pad":"'
    ).encode()
    tail = b'"}}'
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = packer.compress(head) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    again = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    assert block == again
    last = packer.compress(tail) + packer.flush(zlib.Z_FINISH)
    crc = zlib.crc32(head)
    for _ in range(blocks):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(tail, crc)
    size = (len(head) + blocks * len(zeros) + len(tail)) & 0xFFFFFFFF
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    return header + first + block * blocks + last + struct.pack("<II", crc, size)


def _noise(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


class _Answer:
    """Carries out a request's actions as one HTTP answer (SSE stream or JSON body)."""

    def __init__(self, handler: Handler, session: Session, sse: bool) -> None:
        self.h = handler
        self.session = session
        self.sse = sse
        self.started = False
        self.json_body: str | None = None

    def _start_stream(self) -> None:
        if self.started:
            return
        self.started = True
        h = self.h
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Mcp-Session-Id", self.session.id)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        with self.session.lock:
            pending, self.session.outbox = self.session.outbox, []
        for text in pending:
            self._event(text)

    def _chunk(self, data: bytes) -> None:
        self.h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.h.wfile.flush()

    def _event(self, text: str) -> None:
        self._chunk(b"event: message\r\ndata: " + text.encode("utf-8") + b"\r\n\r\n")

    def send(self, action: Send) -> None:
        if self.sse:
            self._start_stream()
            self._event(action.text)
        elif action.is_response:
            self.json_body = action.text

    def run(self, actions: list) -> None:
        for action in actions:
            if isinstance(action, Send):
                self.send(action)
            elif isinstance(action, Noise):
                _noise(action.text)
            elif isinstance(action, Sleep):
                time.sleep(action.seconds)
            elif isinstance(action, Crash):
                crash(action)
            elif isinstance(action, Hang):
                if action.everything:
                    self.h.server.hung = True
                if action.keepalive and self.sse:
                    self._start_stream()
                    while True:  # ends only when the client goes away (write fails)
                        self._chunk(b": keepalive\r\n\r\n")
                        time.sleep(KEEPALIVE_SECONDS)
                _hang()
            elif isinstance(action, AskClient):
                if not self.sse:
                    log("server-request: client takes no SSE, cannot ask it anything")
                    continue
                event = threading.Event()
                self.session.asks[action.request_id] = event
                self._start_stream()
                self._event(action.text)
                event.wait()
        self.finish()

    def finish(self) -> None:
        if self.sse:
            if self.started:
                self._chunk(b"")  # the last chunk: end of the stream
            else:
                self.h.plain(202, headers={"Mcp-Session-Id": self.session.id})
        elif self.json_body is not None:
            self.h.plain(
                200,
                self.json_body.encode("utf-8"),
                "application/json",
                {"Mcp-Session-Id": self.session.id},
            )
        else:
            self.h.plain(202, headers={"Mcp-Session-Id": self.session.id})


def serve_http(
    host: str,
    port: int,
    mode: str,
    delay: float,
    record: str | None,
    body: str = "sse",
    refs: tuple[str, ...] = (),
) -> int:
    server = FaultyHTTPServer((host, port), mode, delay, record, body)
    server.refs = refs
    bound_port = server.server_address[1]
    sys.stdout.write(f"MCP_MATRIX_LISTENING http://{host}:{bound_port}{MCP_PATH}\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
