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
from urllib.parse import urljoin, urlsplit

import httpx

from mcp_matrix.wire import waits
from mcp_matrix.wire.errors import HttpError, ProtocolError, ServerExited, WireError, WireTimeout
from mcp_matrix.wire.http import ACK_WAIT, READ_TIMEOUT, excerpt, post_failed
from mcp_matrix.wire.limits import (
    ACCEPT_ENCODING,
    MAX_MESSAGE_BYTES,
    Oversize,
    decoded,
    split_lines,
    sse_events,
)
from mcp_matrix.wire.transport import Transport


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
        # No read timeout on the GET stream (a quiet server is not a dead one: the session bounds
        # waits); every POST has one per read (``READ_TIMEOUT``), and the caller never waits on it.
        self._client = httpx.Client(
            timeout=httpx.Timeout(post_timeout, connect=connect_timeout, read=None),
            follow_redirects=False,
        )
        self._post_timeouts = httpx.Timeout(
            post_timeout, connect=connect_timeout, read=READ_TIMEOUT
        )
        self._stream: httpx.Response | None = None
        self._ready = threading.Event()
        self._start_error: Exception | None = None
        self._closed = False

    def start(self) -> None:
        if self._stream is not None or self._ready.is_set():
            return
        threading.Thread(target=self._read_stream, name="mcp-sse", daemon=True).start()
        if not waits.wait(self._ready, self.connect_timeout):
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
                "GET",
                self.url,
                headers={
                    "Accept": "text/event-stream",
                    "Accept-Encoding": ACCEPT_ENCODING,
                    **self.headers,
                },
            )
            response = self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            self._starting_failed(post_failed(f"GET {self.url}", exc))
            return
        self._stream = response
        try:
            if response.status_code != 200:
                self._starting_failed(
                    HttpError(
                        f"HTTP {response.status_code} for GET {self.url}", detail=excerpt(response)
                    )
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
            # Bounded like every stream (mcp_matrix/wire/limits.py, docs/security.md).
            body = decoded(response.iter_raw(), response.headers.get("content-encoding", ""))
            for name, data in sse_events(split_lines(body, MAX_MESSAGE_BYTES)):
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
        """POST one message; never blocks past ``ACK_WAIT`` (a request's POST not at all).

        The POST runs on a thread of its own: a server that never answers it, dribbles its status
        line or sends an endless body holds that thread, not the session (issue 24: a held POST
        kept ``run`` past its deadline). Only the status and, for an error, the first bytes of the
        body (decompressed by us, capped) are read; a 2xx body is never read. A request's answer
        comes on the stream, so its POST is not waited for: a failure fails the request."""
        if self._closed or self.endpoint is None:
            raise ServerExited("the SSE session is not open")
        expects_answer = "method" in message and "id" in message
        done = threading.Event()
        threading.Thread(
            target=self._post,
            args=(message, expects_answer, done),
            name="mcp-sse-post",
            daemon=True,
        ).start()
        if not expects_answer and not done.wait(ACK_WAIT):
            self._record_noise(
                f"POST {message.get('method', 'a response')}: no status within {ACK_WAIT:g} s "
                "(not waited for longer)"
            )

    def _post(self, message: dict, expects_answer: bool, done: threading.Event) -> None:
        what = str(message.get("method", "a response"))
        try:
            error = self._post_status(message, what)
        except Exception as exc:  # a thread of ours never dies loudly (close() under it included)
            error = HttpError(f"POST {what} failed: {type(exc).__name__}: {exc}")
        finally:
            done.set()
        if error is None or self._closed:
            return
        if expects_answer:
            self._fail(error)
        else:
            self._record_noise(f"{error.message} {error.detail}".strip())

    def _post_status(self, message: dict, what: str) -> WireError | None:
        """POST ``message``: None when accepted, else why not. Only the status is read, and for
        an error the first bytes of the body (decompressed by us, capped)."""
        try:
            request = self._client.build_request(
                "POST",
                self.endpoint or "",
                json=message,
                headers={
                    "Content-Type": "application/json",
                    "Accept-Encoding": ACCEPT_ENCODING,
                    **self.headers,
                },
                timeout=self._post_timeouts,
            )
            response = self._client.send(request, stream=True)
        except (httpx.HTTPError, httpx.InvalidURL, UnicodeError, ValueError) as exc:
            return post_failed(f"POST {self.endpoint}", exc)
        try:
            if response.status_code < 400:
                return None  # 202 Accepted; its body (if any) is never read
            return HttpError(f"HTTP {response.status_code} for {what}", detail=excerpt(response))
        finally:
            response.close()

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

    def describe(self) -> dict[str, object]:
        return {"transport": "sse", "url": self.url, "headers": sorted(self.headers)}


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc
