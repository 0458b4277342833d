"""What a session's requests come back with, as values: a response, the handshake's and
``server/discover``'s results, a ``subscriptions/listen`` acknowledgement, a tool list's pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_matrix.wire.errors import RpcError
from mcp_matrix.wire.versions import META_SERVER_INFO


@dataclass(frozen=True)
class Response:
    """The answer to one request: ``result`` or ``error``, and how long it took."""

    result: Any = None
    error: RpcError | None = None
    elapsed: float = 0.0


@dataclass(frozen=True)
class InitializeResult:
    protocol_version: object
    server_info: object
    capabilities: object
    instructions: object
    raw: object
    elapsed: float


@dataclass(frozen=True)
class DiscoverResult:
    """A ``server/discover`` answer (2026-07-28): versions, capabilities, identity, cache hints."""

    supported_versions: tuple[Any, ...]
    capabilities: Any
    server_info: Any
    instructions: Any
    ttl_ms: Any
    cache_scope: Any
    raw: object
    elapsed: float

    @classmethod
    def from_result(cls, result: object, elapsed: float) -> DiscoverResult:
        r = result if isinstance(result, dict) else {}
        versions = r.get("supportedVersions")
        sent = r.get("_meta")
        meta = sent if isinstance(sent, dict) else {}
        return cls(
            supported_versions=tuple(versions) if isinstance(versions, list) else (),
            capabilities=r.get("capabilities"),
            server_info=r.get("serverInfo", meta.get(META_SERVER_INFO)),
            instructions=r.get("instructions"),
            ttl_ms=r.get("ttlMs"),
            cache_scope=r.get("cacheScope"),
            raw=result,
            elapsed=elapsed,
        )


@dataclass(frozen=True)
class Listen:
    """What ``subscriptions/listen`` got: the acknowledged filter, or why not."""

    acknowledged: Any = None  # the ``notifications`` filter the server agreed to honour
    error: RpcError | None = None
    ended: bool = False  # the server answered the listen request (ended the stream) at once


@dataclass(frozen=True)
class Page:
    index: int
    cursor: Any
    next_cursor: Any
    tools: tuple[object, ...]
    elapsed: float
    ttl_ms: Any = None  # 2026-07-28 cache hints, as sent (None when absent)
    cache_scope: Any = None


@dataclass(frozen=True)
class ToolListing:
    """Every page read, and why reading stopped if it stopped early."""

    pages: tuple[Page, ...]
    error: RpcError | None = None
    stopped: str = ""  # "", "page-cap", "repeated-cursor", "malformed"

    @property
    def tools(self) -> list[tuple[int, Any]]:
        return [(p.index, t) for p in self.pages for t in p.tools]
