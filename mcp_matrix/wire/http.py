"""Streamable HTTP transport (httpx): POST per message, JSON or SSE answers.

- Every POST carries ``Accept: application/json, text/event-stream`` (servers answer 406
  to less), the user's headers, and after initialize ``Mcp-Session-Id`` and
  ``MCP-Protocol-Version``.
- A request's answer is read on its own thread so an SSE stream that never closes cannot
  hang the caller: the session's ``receive`` timeout bounds the wait, ``close`` cancels it.
- SSE events with empty data (priming events) are skipped; LF and CRLF framing both work.
- ``close`` sends DELETE with the session id (a 405 is fine: the server keeps no session).
- In the stateless era (``modern``, 2026-07-28) every POST also carries ``Mcp-Method`` and, for
  ``tools/call``/``prompts/get``/``resources/read``, ``Mcp-Name``; there is no session id; a 4xx
  whose JSON body answers the request (e.g. HTTP 400 with -32022) is that request's answer.
httpx errors are mapped to ``HttpError`` / ``ServerExited`` here and nowhere else.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator, Mapping

import httpx

from mcp_matrix.wire import waits
from mcp_matrix.wire.errors import ConnectionLost, HttpError, ProtocolError, ServerExited, WireError
from mcp_matrix.wire.limits import (
    ACCEPT_ENCODING,
    MAX_MESSAGE_BYTES,
    Oversize,
    UnsupportedEncoding,
    capped_body,
    decoded,
    split_lines,
    sse_data,
)
from mcp_matrix.wire.transport import NOISE_LINE_MAX, Transport, decode_json

ACCEPT = "application/json, text/event-stream"
# The caller waits at most this long for the status of a POST that needs no answer (a
# notification, our reply to a server's request): a server that holds it holds a thread of
# ours, never the session (issue 24: 68 s past a 30 s deadline).
ACK_WAIT = 5.0
CLOSE_WAIT = 2.0  # the DELETE at close, the same way
READ_TIMEOUT = 30.0  # each read of a POST whose status nobody waits for (a thread's life)
# What is left of an answer once it is read (the end of its SSE stream, a 202's empty body) is
# read too, up to this much, so its connection goes back to the pool: closing a response with
# unread body drops the connection, and each POST opened a new one (311 for 300 calls).
DRAIN_BYTES = 64 * 1024


class HttpTransport(Transport):
    name = "http"

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 5.0,
        read_timeout: float = 60.0,
    ) -> None:
        super().__init__()
        self.url = url
        self.headers = dict(headers or {})
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.modern = False  # 2026-07-28: routing headers on every POST
        self._client = httpx.Client(
            timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
            follow_redirects=False,
        )
        self._open: set[httpx.Response] = set()
        self._lock = threading.Lock()
        self._closed = False

    def start(self) -> None:
        """Nothing to start: the first POST opens the connection."""

    def _headers(self, message: dict | None = None) -> dict[str, str]:
        h = {
            "Accept": ACCEPT,
            "Content-Type": "application/json",
            "Accept-Encoding": ACCEPT_ENCODING,
            **self.headers,
        }
        if self.session_id:
            h["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            h["MCP-Protocol-Version"] = self.protocol_version
        if self.modern and message is not None and message.get("method") != "initialize":
            h.update(routing_headers(message))
        return h

    def send(self, message: dict) -> None:
        """POST on a thread of its own; a request's answer is read there, and a message that
        needs none is waited for at most ``ACK_WAIT`` seconds."""
        if self._closed:
            raise ServerExited("the HTTP session is closed")
        expects_answer = "method" in message and "id" in message
        done = threading.Event()
        threading.Thread(
            target=self._post, args=(message, done), name="mcp-http", daemon=True
        ).start()
        if not expects_answer and not waits.wait(done, ACK_WAIT):
            self._record_noise(
                f"POST {message.get('method', 'a response')}: no status within {ACK_WAIT:g} s "
                "(not waited for longer)"
            )

    def _post(self, message: dict, done: threading.Event) -> None:
        wanted = message.get("id") if "method" in message else None
        try:
            request = self._client.build_request(
                "POST", self.url, json=message, headers=self._headers(message)
            )
            response = self._client.send(request, stream=True)
        except (httpx.HTTPError, httpx.InvalidURL, UnicodeError, ValueError) as exc:
            done.set()
            self._fail_if(wanted, post_failed("HTTP request", exc))
            return
        with self._lock:
            self._open.add(response)
        try:
            if wanted is None:  # notification or response: 202 Accepted is the norm
                done.set()
                if response.status_code >= 400:
                    self._record_noise(
                        f"HTTP {response.status_code} for {message.get('method', 'a response')}"
                    )
                drain(response.iter_raw())
                return
            self._read_answer(message, wanted, response)
        except httpx.HTTPError as exc:
            if not self._closed:
                self._fail_if(wanted, post_failed("reading the answer", exc))
        except (
            Exception
        ) as exc:  # a stream closed under us by close(); never let a reader thread die loudly
            if not self._closed:
                self._fail_if(
                    wanted, HttpError(f"reading the answer failed: {type(exc).__name__}: {exc}")
                )
        finally:
            done.set()
            with self._lock:
                self._open.discard(response)
            response.close()

    def _read_answer(self, message: dict, wanted: object, response: httpx.Response) -> None:
        sid = response.headers.get("mcp-session-id")
        if sid and message.get("method") == "initialize":
            self.session_id = sid
        status = response.status_code
        method = message.get("method")
        if status == 404 and self.session_id and method != "initialize":
            self._fail(
                HttpError(
                    f"HTTP 404: the session {self.session_id!r} expired or is unknown",
                    detail=excerpt(response),
                )
            )
            return
        if status >= 400:
            shown = excerpt(response)
            if _answers_json(shown, wanted):  # a JSON-RPC error sent with a 4xx status (2026-07-28)
                self._deliver_text(shown, source="the HTTP body")
                return
            self._fail(HttpError(f"HTTP {status} for {method}", detail=shown))
            return
        ctype, charset = content_type(response.headers.get("content-type", ""))
        if ctype not in ("text/event-stream", "application/json"):
            self._fail(
                HttpError(
                    f"HTTP {status} with content type {ctype or 'none'!r}; "
                    "expected application/json or text/event-stream",
                    detail=excerpt(response),
                )
            )
            return
        if charset not in ("", "utf-8", "utf8"):
            self._fail(
                ProtocolError(
                    f"HTTP {status} for {method} with content type {ctype}; charset={charset[:40]}: "
                    "MCP over HTTP is UTF-8 JSON (RFC 8259 section 8.1), so a client cannot read it"
                )
            )
            return
        try:
            body = decoded(response.iter_raw(), response.headers.get("content-encoding", ""))
            if ctype == "text/event-stream":
                self._read_events(wanted, body)
                drain(body)  # after the answer was delivered: the caller does not wait on it
            else:
                self._read_json(method, body)
        except UnsupportedEncoding as exc:
            self._fail(HttpError(f"HTTP {status} for {method}: {exc}"))
        except zlib.error as exc:
            self._fail(
                ProtocolError(f"the body of the answer to {method} does not decompress: {exc}")
            )

    def _read_events(self, wanted: object, body: Iterator[bytes]) -> None:
        """The answer's SSE stream: every event delivered, until the one that answers.

        Bounded (docs/security.md): lines and events over the cap are dropped as they stream in,
        counted as they inflate (``decoded``)."""
        for data in sse_data(split_lines(body, MAX_MESSAGE_BYTES)):
            if isinstance(data, Oversize):
                self._deliver_text(data, source="the SSE stream")
                return
            if not data.strip():
                continue  # priming events carry an id and no data
            self._deliver_text(data, source="the SSE stream")
            if _answers(data, wanted):
                return  # the server should close now; we stop reading either way

    def _read_json(self, method: object, body: Iterator[bytes]) -> None:
        """An ``application/json`` answer: one JSON-RPC message (or batch), capped as it
        inflates; a body that is not JSON fails the request at once, saying what it is."""
        text = capped_body(body, MAX_MESSAGE_BYTES)
        if isinstance(text, Oversize):
            self._deliver_text(text, source="the HTTP body (decompressed)")
            return
        try:
            decoded_text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._fail(
                ProtocolError(
                    f"the application/json answer to {method} is not UTF-8 ({exc.reason} at byte "
                    f"{exc.start}); a client cannot read it",
                    detail=text[:NOISE_LINE_MAX].decode("utf-8", errors="replace"),
                )
            )
            return
        stripped = decoded_text.lstrip()
        if not stripped.startswith(("{", "[")):  # broken JSON is ``invalid JSON`` at once, below
            looks_sse = stripped.startswith(("event:", "data:", "id:", ":", "retry:"))
            what = (
                "is server-sent events (event:/data: lines) labelled application/json"
                if looks_sse
                else "is not JSON"
            )
            self._fail(
                ProtocolError(
                    f"the answer to {method} {what}; a client reading the content type it names "
                    "cannot parse it",
                    detail=decoded_text[:NOISE_LINE_MAX],
                )
            )
            return
        self._deliver_text(decoded_text, source="the HTTP body")

    def _fail_if(self, wanted: object, error: WireError) -> None:
        if wanted is not None:
            self._fail(error)
        else:
            self._record_noise(str(error))

    def close(self) -> None:
        """Cancel every answer being read, then DELETE the session, waiting at most
        ``CLOSE_WAIT`` seconds for it (a server that dribbles it holds a thread, not us)."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            open_now = list(self._open)
        for response in open_now:
            try:
                response.close()
            except Exception:  # closing from another thread; nothing more to do
                pass
        if self.session_id:
            deleted = threading.Thread(target=self._delete, name="mcp-http-delete", daemon=True)
            deleted.start()
            deleted.join(CLOSE_WAIT)
        self._client.close()

    def _delete(self) -> None:
        try:
            self._client.request("DELETE", self.url, headers=self._headers(), timeout=CLOSE_WAIT)
        except Exception:  # the session ends either way (a closed client included)
            pass

    def describe(self) -> dict:
        return {"transport": "http", "url": self.url, "headers": sorted(self.headers)}


NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def routing_headers(message: dict) -> dict[str, str]:
    """``Mcp-Method`` and ``Mcp-Name`` mirrored from the body (2026-07-28, Streamable HTTP).
    A name that is not plain ASCII is sent as the spec's base64 form."""
    method = message.get("method")
    if not isinstance(method, str):
        return {}
    out = {"Mcp-Method": method}
    params = message.get("params")
    key = NAME_PARAMS.get(method)
    value = params.get(key) if key and isinstance(params, dict) else None
    if isinstance(value, str):
        out["Mcp-Name"] = value if _header_safe(value) else _b64_header(value)
    return out


def _header_safe(value: str) -> bool:
    return (
        value.isascii()
        and value.isprintable()
        and value == value.strip()
        and not value.startswith("=?base64?")
    )


def _b64_header(value: str) -> str:
    import base64

    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def content_type(header: str) -> tuple[str, str]:
    """The media type and charset (both lower case, "" when absent) of a Content-Type header."""
    media, _, params = header.partition(";")
    charset = ""
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
    return media.strip().lower(), charset


def excerpt(response: httpx.Response) -> str:
    """The first ``NOISE_LINE_MAX`` bytes of a body, decompressed by us (capped: a bomb behind
    an error status inflates no further), never the whole body."""
    head = bytearray()
    try:
        for chunk in decoded(response.iter_raw(), response.headers.get("content-encoding", "")):
            head += chunk
            if len(head) >= NOISE_LINE_MAX:
                break
    except (httpx.HTTPError, UnsupportedEncoding, zlib.error):
        pass
    return bytes(head[:NOISE_LINE_MAX]).decode("utf-8", errors="replace")


def post_failed(what: str, exc: Exception) -> WireError:
    """An httpx failure as ours: a refused, reset or closed connection is ``ConnectionLost``
    with HTTP's advice (it was ``server-exited`` with stdio's), a bad URL or header a plain
    ``HttpError``."""
    name = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, httpx.ConnectError):
        return ConnectionLost(
            f"{what} failed: the connection was refused or could not be made ({name}); "
            "is the server listening at this URL, and reachable from here?"
        )
    if isinstance(exc, (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)):
        return ConnectionLost(
            f"{what} failed: the HTTP connection was reset or closed before the answer ({name}); "
            "check the server's HTTP logs for a crash in the handler, and any proxy, load balancer "
            "or idle-connection limit in front of it"
        )
    if isinstance(exc, httpx.TimeoutException):
        return ConnectionLost(f"{what} failed: no bytes within the read timeout ({name})")
    return HttpError(f"{what} failed: {name}")


def _answers_json(body: str, wanted: object) -> bool:
    import json

    try:
        decoded = json.loads(body)
    except ValueError:
        return False
    return (
        isinstance(decoded, dict)
        and decoded.get("id") == wanted
        and ("error" in decoded or "result" in decoded)
    )


def _answers(data: str, wanted: object) -> bool:
    """Whether an SSE event's data is the response with id ``wanted`` (a JSON number, as the
    session compares ids)."""
    if '"id"' not in data or str(wanted) not in data:
        return False  # cheap: most events are not the answer, and each is decoded once already
    try:
        message = decode_json(data)
    except (ValueError, RecursionError):
        return False
    return (
        isinstance(message, dict)
        and "method" not in message
        and isinstance(message.get("id"), (int, float))
        and not isinstance(message.get("id"), bool)
        and message.get("id") == wanted
    )


def drain(body: Iterator[bytes]) -> None:
    """Read the rest of an answer's body, at most ``DRAIN_BYTES``, and discard it (what came
    after the answer was never read before either): a body read to its end lets httpx reuse the
    connection. A server that keeps the stream open holds this thread until its read timeout or
    the transport's ``close``, never the caller."""
    left = DRAIN_BYTES
    for chunk in body:
        left -= len(chunk)
        if left < 0:
            return
