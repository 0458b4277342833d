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
from collections.abc import Mapping
from typing import Any

import httpx

from matrix.wire.errors import HttpError, ServerExited
from matrix.wire.limits import MAX_MESSAGE_BYTES, Oversize, capped_body, split_lines, sse_data
from matrix.wire.transport import NOISE_LINE_MAX, Transport

ACCEPT = "application/json, text/event-stream"


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
        h = {"Accept": ACCEPT, "Content-Type": "application/json", **self.headers}
        if self.session_id:
            h["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            h["MCP-Protocol-Version"] = self.protocol_version
        if self.modern and message is not None and message.get("method") != "initialize":
            h.update(routing_headers(message))
        return h

    def send(self, message: dict) -> None:
        if self._closed:
            raise ServerExited("the HTTP session is closed")
        expects_answer = "method" in message and "id" in message
        if expects_answer:
            threading.Thread(
                target=self._post, args=(message,), name="mcp-http", daemon=True
            ).start()
        else:
            self._post(message)

    def _post(self, message: dict) -> None:
        wanted = message.get("id") if "method" in message else None
        try:
            request = self._client.build_request(
                "POST", self.url, json=message, headers=self._headers(message)
            )
            response = self._client.send(request, stream=True)
        except (httpx.HTTPError, httpx.InvalidURL, UnicodeError, ValueError) as exc:
            self._fail_if(wanted, ServerExited(f"HTTP request failed: {type(exc).__name__}: {exc}"))
            return
        with self._lock:
            self._open.add(response)
        try:
            self._read_answer(message, wanted, response)
        except httpx.HTTPError as exc:
            if not self._closed:
                self._fail_if(
                    wanted, HttpError(f"reading the answer failed: {type(exc).__name__}: {exc}")
                )
        except (
            Exception
        ) as exc:  # a stream closed under us by close(); never let a reader thread die loudly
            if not self._closed:
                self._fail_if(
                    wanted, HttpError(f"reading the answer failed: {type(exc).__name__}: {exc}")
                )
        finally:
            with self._lock:
                self._open.discard(response)
            response.close()

    def _read_answer(self, message: dict, wanted: Any, response: httpx.Response) -> None:
        sid = response.headers.get("mcp-session-id")
        if sid and message.get("method") == "initialize":
            self.session_id = sid
        status = response.status_code
        if wanted is None:  # notification or response: 202 Accepted is the norm
            if status >= 400:
                self._record_noise(f"HTTP {status} for {message.get('method', 'a response')}")
            return
        if status == 404 and self.session_id and message.get("method") != "initialize":
            body = self._excerpt(response)
            self._fail(
                HttpError(
                    f"HTTP 404: the session {self.session_id!r} expired or is unknown", detail=body
                )
            )
            return
        if status >= 400:
            body = self._excerpt(response)
            if _answers_json(
                body, wanted
            ):  # a JSON-RPC error sent with a 4xx status (2026-07-28 does)
                self._deliver_text(body, source="the HTTP body")
                return
            self._fail(HttpError(f"HTTP {status} for {message.get('method')}", detail=body))
            return
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype == "text/event-stream":
            # Bounded (docs/security.md): lines and events over the cap are dropped as they stream
            # in, counted after any Content-Encoding is undone (a gzip bomb inflates here).
            for data in sse_data(split_lines(response.iter_bytes(), MAX_MESSAGE_BYTES)):
                if isinstance(data, Oversize):
                    self._deliver_text(data, source="the SSE stream")
                    return
                if not data.strip():
                    continue  # priming events carry an id and no data
                self._deliver_text(data, source="the SSE stream")
                if self._answers(data, wanted):
                    return  # the server should close now; we stop reading either way
            return
        if ctype == "application/json":
            body = capped_body(response.iter_bytes(), MAX_MESSAGE_BYTES)
            if isinstance(body, Oversize):
                self._deliver_text(body, source="the HTTP body (decompressed)")
                return
            self._deliver_text(body.decode("utf-8", errors="replace"), source="the HTTP body")
            return
        self._fail(
            HttpError(
                f"HTTP {status} with content type {ctype or 'none'!r}; "
                "expected application/json or text/event-stream",
                detail=self._excerpt(response),
            )
        )

    @staticmethod
    def _answers(data: str, wanted: Any) -> bool:
        # Cheap pre-check before the session decodes it properly.
        return f'"id":{_json_id(wanted)}' in data.replace(" ", "")

    @staticmethod
    def _excerpt(response: httpx.Response) -> str:
        head = bytearray()
        try:
            for chunk in response.iter_bytes():  # the first bytes only: never the whole body
                head += chunk
                if len(head) >= NOISE_LINE_MAX:
                    break
        except httpx.HTTPError:
            pass
        return bytes(head[:NOISE_LINE_MAX]).decode("utf-8", errors="replace")

    def _fail_if(self, wanted: Any, error: Exception) -> None:
        if wanted is not None:
            self._fail(error)  # type: ignore[arg-type]
        else:
            self._record_noise(str(error))

    def close(self) -> None:
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
            try:
                self._client.request("DELETE", self.url, headers=self._headers(), timeout=2.0)
            except httpx.HTTPError:
                pass
        self._client.close()

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


def _answers_json(body: str, wanted: Any) -> bool:
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


def _json_id(value: Any) -> str:
    import json

    return json.dumps(value)
