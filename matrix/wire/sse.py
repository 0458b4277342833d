"""The legacy HTTP+SSE transport (protocol 2024-11-05), for servers that never moved on.

The client opens a GET stream on the server's SSE URL; the first event, ``endpoint``, names
the URL to POST every message to; the server's messages (answers included) arrive as
``message`` events on the GET stream, and each POST is only acknowledged (202).
https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse

- ``start`` waits at most ``connect_timeout`` for the ``endpoint`` event.
- The endpoint must be on the SSE URL's origin: a server cannot send our POSTs elsewhere.
- The stream is read on its own thread; the session's timeouts bound every wait and
  ``close`` cancels the stream. A stream that ends fails the pending request.
httpx errors are mapped to ``HttpError`` / ``ServerExited`` here and in ``http.py``, nowhere else.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from matrix.wire.errors import HttpError, ProtocolError, ServerExited, WireTimeout
from matrix.wire.limits import MAX_MESSAGE_BYTES, Oversize, split_lines, sse_events
from matrix.wire.transport import NOISE_LINE_MAX, Transport


class SseTransport(Transport):
    name = "sse"

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 5.0,
        post_timeout: float = 10.0,
    ) -> None:
        super().__init__()
        self.url = url
        self.headers = dict(headers or {})
        self.connect_timeout = connect_timeout
        self.endpoint: str | None = None
        self.protocol_version: str | None = None  # not sent: 2024-11-05 has no such header
        # No read timeout on the stream (a quiet server is not a dead one): the session bounds waits.
        self._client = httpx.Client(
            timeout=httpx.Timeout(post_timeout, connect=connect_timeout, read=None),
            follow_redirects=False,
        )
        self._post_timeout = post_timeout
        self._stream: httpx.Response | None = None
        self._ready = threading.Event()
        self._start_error: Exception | None = None
        self._closed = False

    def start(self) -> None:
        if self._stream is not None or self._ready.is_set():
            return
        threading.Thread(target=self._read_stream, name="mcp-sse", daemon=True).start()
        if not self._ready.wait(self.connect_timeout):
            self.close()
            raise WireTimeout(
                f"the SSE stream sent no endpoint event within {self.connect_timeout:.1f}s"
            )
        if self._start_error is not None:
            error, self._start_error = self._start_error, None
            self.close()
            raise error

    def _read_stream(self) -> None:
        try:
            request = self._client.build_request(
                "GET", self.url, headers={"Accept": "text/event-stream", **self.headers}
            )
            response = self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            self._starting_failed(
                ServerExited(f"GET {self.url} failed: {type(exc).__name__}: {exc}")
            )
            return
        self._stream = response
        try:
            if response.status_code != 200:
                body = next(iter(response.iter_bytes()), b"")[:NOISE_LINE_MAX].decode(
                    "utf-8", errors="replace"
                )
                self._starting_failed(
                    HttpError(f"HTTP {response.status_code} for GET {self.url}", detail=body)
                )
                return
            ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "text/event-stream":
                self._starting_failed(
                    HttpError(
                        f"GET {self.url} answered {ctype or 'no content type'!r}, not text/event-stream "
                        "(not a legacy HTTP+SSE endpoint)"
                    )
                )
                return
            # Bounded like every stream (matrix/wire/limits.py, docs/security.md).
            for name, data in sse_events(split_lines(response.iter_bytes(), MAX_MESSAGE_BYTES)):
                if isinstance(data, Oversize):
                    self._deliver_text(data, source="the SSE stream")
                elif name == "endpoint" and not self._ready.is_set():
                    self._set_endpoint(data.strip())
                elif name in ("message", "") and data.strip():
                    self._deliver_text(data, source="the SSE stream")
        except (
            Exception
        ) as exc:  # the stream closed under us (close()) or broke: never let the thread die loudly
            if not self._closed:
                self._starting_failed(
                    HttpError(f"reading the SSE stream failed: {type(exc).__name__}: {exc}")
                )
                return
        finally:
            response.close()
        if not self._closed:
            self._starting_failed(ServerExited("the server closed the SSE stream"))

    def _set_endpoint(self, data: str) -> None:
        endpoint = urljoin(self.url, data)
        if _origin(endpoint) != _origin(self.url):
            self._start_error = ProtocolError(
                f"the endpoint event names {endpoint!r}, not on {_origin(self.url)}; refusing to post there"
            )
        else:
            self.endpoint = endpoint
        self._ready.set()

    def _starting_failed(self, error: Exception) -> None:
        if not self._ready.is_set():
            self._start_error = error
            self._ready.set()
        else:
            self._fail(error)  # type: ignore[arg-type]

    def send(self, message: dict) -> None:
        if self._closed or self.endpoint is None:
            raise ServerExited("the SSE session is not open")
        expects_answer = "method" in message and "id" in message
        try:
            response = self._client.post(
                self.endpoint,
                json=message,
                headers={"Content-Type": "application/json", **self.headers},
            )
        except httpx.HTTPError as exc:
            raise ServerExited(
                f"POST {self.endpoint} failed: {type(exc).__name__}: {exc}"
            ) from None
        if response.status_code >= 400:
            detail = response.text[:NOISE_LINE_MAX]
            if expects_answer:
                raise HttpError(
                    f"HTTP {response.status_code} for {message.get('method')}", detail=detail
                )
            self._record_noise(
                f"HTTP {response.status_code} for {message.get('method', 'a response')}"
            )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        stream = self._stream
        if stream is not None:
            try:
                stream.close()
            except Exception:  # closing from another thread; nothing more to do
                pass
        self._client.close()

    def describe(self) -> dict[str, Any]:
        return {"transport": "sse", "url": self.url, "headers": sorted(self.headers)}


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc
