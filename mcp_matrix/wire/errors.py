"""The wire's typed problems.

    WireError                      -- the server gave no answer a client could use
    ├── ServerExited               -- the process ended (or the HTTP connection failed for good)
    │   └── ConnectionLost         -- HTTP: the connection was refused, reset or closed mid-answer
    ├── WireTimeout                -- no answer within the bound
    ├── ProtocolError              -- an answer arrived but is not usable JSON-RPC / MCP
    └── HttpError                  -- Streamable HTTP answered with a status or content type a client rejects

Every WireError carries the server's last stderr lines (stdio) or the HTTP body excerpt, so
a report can say why. A JSON-RPC error *response* is not a WireError: it is a value
(``RpcError``), because a server that answers with an error is working as designed.
httpx, OS and JSON exceptions are mapped to these in one place each: the transports.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class WireError(Exception):
    kind = "wire-error"

    def __init__(
        self, message: str, *, stderr_tail: tuple[str, ...] = (), detail: str = ""
    ) -> None:
        super().__init__(message)
        self.message = message
        self.stderr_tail = tuple(stderr_tail)
        self.detail = detail

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "message": self.message,
            "detail": self.detail,
            "stderr_tail": list(self.stderr_tail),
        }


class ServerExited(WireError):
    kind = "server-exited"


class ConnectionLost(ServerExited):
    """An HTTP connection refused, reset or closed before the answer: no process of ours ended,
    so the advice is HTTP's (the server's logs, a proxy in front of it), not stdio's."""

    kind = "connection-lost"


class WireTimeout(WireError):
    kind = "timeout"


class ProtocolError(WireError):
    kind = "protocol-error"


class HttpError(WireError):
    kind = "http-error"


@dataclass(frozen=True)
class RpcError:
    """A JSON-RPC error response, kept whole: code, message and data."""

    code: int | None
    message: str
    data: object = None

    @classmethod
    def from_message(cls, error: object) -> RpcError:
        if not isinstance(error, dict):
            return cls(None, f"malformed error object: {error!r}"[:500])
        code = error.get("code")
        return cls(
            code if isinstance(code, int) else None,
            str(error.get("message", "")),
            error.get("data"),
        )

    def to_json(self) -> dict:
        return {"code": self.code, "message": self.message, "data": self.data}


@dataclass(frozen=True)
class Noise:
    """A line on stdout that is not JSON-RPC (a server that logs to stdout breaks strict clients)."""

    line: str
    at: float = 0.0

    def to_json(self) -> dict:
        return {"line": self.line, "at": round(self.at, 4)}


@dataclass
class Problems:
    """Protocol oddities seen during a session that did not stop it (kept for the report)."""

    items: list[dict] = field(default_factory=list)

    def add(self, kind: str, message: str, **extra: object) -> None:
        if len(self.items) < 200:
            self.items.append({"kind": kind, "message": message, **extra})
