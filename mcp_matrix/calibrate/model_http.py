"""The fake model's HTTP side: one request read (its key checked, its body capped), recorded
with its credentials masked, and answered in its API's wire format (``model_answers``).

A request without the run's key is answered 401 before its body is read and kept apart
(``ModelEndpoint.refuse``); a compressed body is capped while it is decompressed
(``gunzip_capped``, ``MAX_BODY``), not only on the wire.
"""

from __future__ import annotations

import json
import uuid
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

from mcp_matrix.calibrate.model_answers import ANSWERS
from mcp_matrix.calibrate.model_requests import ModelTool, api_of
from mcp_matrix.calibrate.provider_limits import refusal
from mcp_matrix.core.jsontypes import JSON

SECRET_HEADERS = (
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "cookie",
    "proxy-authorization",
)
MAX_BODY = 64 * 1024 * 1024


@dataclass
class RecordedRequest:
    """One request a client sent its model."""

    method: str
    path: str
    api: str
    stream: bool
    headers: dict[str, str]
    body: JSON
    answer: str = ""  # "tool-calls" | "text" | "listing" | "provider-refused"
    calls: list[dict] = field(default_factory=list)
    refusal: dict | None = None  # the provider limit the request broke (provider_limits on)

    def to_json(self) -> dict:
        out = {
            "method": self.method,
            "path": self.path,
            "api": self.api,
            "stream": self.stream,
            "headers": self.headers,
            "body": self.body,
            "answer": self.answer,
            "calls": self.calls,
        }
        if self.refusal is not None:
            out["refusal"] = self.refusal
        return out


def mask_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers with every credential replaced by ``***`` (any key is accepted, none is kept)."""
    out = {}
    for key, value in headers:
        low = key.lower()
        secret = low in SECRET_HEADERS or "key" in low or "token" in low or "secret" in low
        out[low] = "***" if secret else value
    return out


class PlannedCall(Protocol):
    """A call the endpoint plans (``fake_model.ScriptedCall``)."""

    @property
    def tool(self) -> str: ...

    @property
    def arguments(self) -> object: ...


class ModelEndpoint(Protocol):
    """What the handler asks of the endpoint it serves (``fake_model.FakeModel``)."""

    model: str
    final_text: str
    provider_limits: bool

    def authorised(self, headers: Any, path: str) -> bool: ...

    def record(self, req: RecordedRequest) -> None: ...

    def refuse(self, req: RecordedRequest) -> None: ...

    def plan(self, api: str, body: JSON) -> Sequence[tuple[PlannedCall, ModelTool]]: ...


def _call_id(i: int) -> str:
    return f"call_{i}_{uuid.uuid4().hex[:12]}"


class ModelHandler(BaseHTTPRequestHandler):
    """One request to the fake model: the key checked, the body read (capped), recorded, answered."""

    protocol_version = "HTTP/1.1"
    server_version = "mcp-matrix-fake-model"

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    @property
    def fake(self) -> ModelEndpoint:
        return self.server.fake  # type: ignore[attr-defined]

    def _json(self, status: int, doc: object) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _refused(self, body_bytes: int = 0) -> bool:
        """Answer 401 and keep the request aside when it lacks the run's key."""
        if self.fake.authorised(self.headers, self.path):
            return False
        self.fake.refuse(
            RecordedRequest(
                self.command,
                self.path,
                "refused",
                False,
                mask_headers(self.headers.items()),
                {"bytes": body_bytes},
                "refused",
            )
        )
        self._json(401, {"error": {"message": "wrong or missing API key", "type": "auth"}})
        return True

    def do_GET(self) -> None:
        if self._refused():
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        self.fake.record(
            RecordedRequest(
                "GET",
                self.path,
                "listing",
                False,
                mask_headers(self.headers.items()),
                None,
                "listing",
            )
        )
        model = self.fake.model
        if path.endswith("/models"):
            self._json(
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": model,
                            "object": "model",
                            "created": 0,
                            "owned_by": "mcp-matrix",
                            "type": "model",
                            "display_name": model,
                        }
                    ],
                    "models": [
                        {
                            "name": f"models/{model}",
                            "displayName": model,
                            "supportedGenerationMethods": [
                                "generateContent",
                                "streamGenerateContent",
                            ],
                        }
                    ],
                    "has_more": False,
                    "first_id": model,
                    "last_id": model,
                },
            )
        elif "/models/" in path:
            self._json(
                200, {"id": model, "object": "model", "name": f"models/{model}", "type": "model"}
            )
        else:
            self._json(
                404, {"error": {"message": f"no such endpoint: GET {path}", "type": "not_found"}}
            )

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if self._refused(length):  # before reading: a forged body is never held
            self.close_connection = True
            return
        if length > MAX_BODY:
            self._json(413, {"error": {"message": "request too large"}})
            return
        raw = self.rfile.read(length) if length else self._read_chunked()
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            try:
                decoded = gunzip_capped(raw, MAX_BODY)
            except (zlib.error, EOFError):
                self._json(400, {"error": {"message": "not a valid gzip body"}})
                return
            if decoded is None:
                self._json(413, {"error": {"message": "request too large once decompressed"}})
                return
            raw = decoded
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        api = api_of(self.path)
        stream = _wants_stream(api, self.path, body)
        rec = RecordedRequest(
            "POST", self.path, api or "unknown", stream, mask_headers(self.headers.items()), body
        )
        self.fake.record(rec)
        refused = refusal(api, body) if api and self.fake.provider_limits else None
        if refused is not None:
            rec.answer, rec.refusal = "provider-refused", refused.to_json()
            self._json(refused.status, refused.body)
            return
        if api is None:
            if self.path.split("?", 1)[0].rstrip("/").endswith("count_tokens"):
                self._json(200, {"input_tokens": 10})
                return
            self._json(
                404,
                {"error": {"message": f"no such endpoint: POST {self.path}", "type": "not_found"}},
            )
            return
        planned = self.fake.plan(api, body)
        rec.answer = "tool-calls" if planned else "text"
        calls = [(c, t, _call_id(i)) for i, (c, t) in enumerate(planned)]
        rec.calls = [
            {"tool": c.tool, "model_name": t.name, "id": cid, "arguments": c.arguments}
            for c, t, cid in calls
        ]
        model = self.fake.model
        if isinstance(body, dict) and isinstance(body.get("model"), str):
            model = body["model"]
        if api == "gemini":
            model = self.path.split("/models/", 1)[-1].split(":", 1)[0] or model
        writer = ANSWERS[api]
        writer(self, stream, model, calls, self.fake.final_text)

    def _read_chunked(self) -> bytes:
        if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
            return b""
        out = b""
        while True:
            size = int(self.rfile.readline().strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return out
            out += self.rfile.read(size)
            self.rfile.readline()
            if len(out) > MAX_BODY:
                return out

    # SSE helpers
    def start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def event(self, data: object, name: str | None = None) -> None:
        text = (
            f"event: {name}\n" if name else ""
        ) + f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
        self.wfile.write(text.encode())
        self.wfile.flush()


def gunzip_capped(raw: bytes, cap: int) -> bytes | None:
    """A gzip body (one member or several) decompressed, or None past ``cap`` bytes: decoded in
    steps of at most what is left of the cap, so a 1 MB body that inflates to 1 GiB never
    does. zstd and br bodies stay undecoded (not in the standard library)."""
    out = bytearray()
    data = raw
    while data:
        member = zlib.decompressobj(wbits=31)
        while True:
            chunk = member.decompress(data, cap + 1 - len(out))
            out += chunk
            if len(out) > cap:
                return None
            data = member.unconsumed_tail
            if member.eof or not (chunk or data):
                break
        if not member.eof:
            raise EOFError("the gzip body ended early")
        data = member.unused_data.lstrip(b"\0")  # members may be padded with zeros
    return bytes(out)


def _wants_stream(api: str | None, path: str, body: JSON) -> bool:
    if api == "gemini":
        return ":streamGenerateContent" in path
    return bool(isinstance(body, dict) and body.get("stream"))
