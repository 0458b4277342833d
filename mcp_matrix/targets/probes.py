"""Which protocol eras a server answers: the ``eras`` section of a snapshot.

Each probe is its own connection (over stdio an SDK server locks a connection to the era of
its first request), run side by side with the main one:

- ``modern``: ``server/discover`` at 2026-07-28; if the server names a modern version, the
  ``tools/list`` cache hints (``ttlMs``, ``cacheScope``), a ``subscriptions/listen`` for tool
  list changes when it offers them, and then ``initialize`` on the same connection, which
  clients that fall back after a successful discover send (claude-code#96183);
- ``handshake``: ``initialize`` at each requested version: what the server answers to a
  version (echo, another one, or a refusal).

A probe that fails on the wire records the failure; it never fails the snapshot.
https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from mcp_matrix.core.jsontypes import JSON, JSONObject
from mcp_matrix.targets.kinds import Target
from mcp_matrix.wire.answers import Response
from mcp_matrix.wire.eras import Handshake, start_session
from mcp_matrix.wire.errors import WireError
from mcp_matrix.wire.session import MODERN_PROTOCOL, Session, Timeouts
from mcp_matrix.wire.transport import Transport

HANDSHAKE_PROBES = ("2025-11-25", "2025-06-18")  # the versions the bundled profiles request
LIST_TOOLS_CHANGED = {"toolsListChanged": True}


def error_json(response: Response) -> dict | None:
    return response.error.to_json() if response.error else None


def answer_json(requested: str, response: Response | None, wire: WireError | None = None) -> dict:
    """One ``initialize`` probe: the version asked for and what came back."""
    entry: dict[str, JSON] = {
        "requested": requested,
        "protocolVersion": None,
        "error": None,
        "wireError": None,
    }
    if wire is not None:
        entry["wireError"] = wire.to_json()
    elif response is not None and response.error is not None:
        entry["error"] = response.error.to_json()
    elif response is not None:
        result = response.result if isinstance(response.result, dict) else {}
        entry["protocolVersion"] = result.get("protocolVersion")
    return entry


class Prober:
    """Runs probe connections on threads; ``close_all`` ends them (Ctrl-C, or the main thread done)."""

    CLOSE_WAIT = (
        15.0  # seconds close_all waits for the probe threads (each close takes about 4 s at most)
    )

    def __init__(
        self, target: Target, client: Mapping[str, JSONObject], timeouts: Timeouts
    ) -> None:
        self.target = target
        self.client = client
        self.timeouts = timeouts
        self.transports: list[Transport] = []
        self.threads: list[threading.Thread] = []
        self.started: set[str] = set()  # the keys of the probes started
        self.results: dict[str, JSON] = {}
        self._lock = threading.Lock()
        self._closing = False

    def start(self, key: str, probe: Callable[[Session], JSON]) -> None:
        self.started.add(key)
        thread = threading.Thread(
            target=self._run, args=(key, probe), name=f"probe-{key}", daemon=True
        )
        self.threads.append(thread)
        thread.start()

    def _run(self, key: str, probe: Callable[[Session], JSON]) -> None:
        transport = self.target.transport(connect_timeout=self.timeouts.initialize)
        with self._lock:
            if self._closing:  # Ctrl-C came before this probe started: start no server
                return
            self.transports.append(transport)
        session = Session(
            transport,
            client_info=dict(self.client["clientInfo"]),
            capabilities=dict(self.client["capabilities"]),
            timeouts=self.timeouts,
        )
        try:
            transport.start()
            self.results[key] = probe(session)
        except WireError as exc:
            self.results[key] = {"wireError": exc.to_json()}
        except Exception as exc:  # a probe must never fail the snapshot
            self.results[key] = {
                "wireError": {"kind": "probe-failed", "message": f"{type(exc).__name__}: {exc}"}
            }
        finally:
            try:
                transport.close()
            except Exception:
                pass

    def join(self) -> None:
        for thread in self.threads:
            while thread.is_alive():  # short joins: Ctrl-C reaches the main thread between them
                thread.join(0.2)

    def close_all(self) -> None:
        """End every probe and its server, and wait for the probe threads (bounded).

        The threads close their own servers side by side once interrupted; waiting for them is
        what makes sure no server outlives us (a thread may be starting its server right now,
        and a daemon thread is cut off when the process exits). Whatever a thread did not close
        in time is closed here."""
        with self._lock:
            self._closing = True
            transports = list(self.transports)
        for t in transports:
            t.interrupt("the snapshot was interrupted")
        deadline = time.monotonic() + self.CLOSE_WAIT
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            transports = list(self.transports)
        for t in transports:
            try:
                t.close()  # idempotent: at once for a server its thread already ended
            except Exception:
                pass


def probe_modern(session: Session, page_cap: int = 100) -> dict:
    """``server/discover``, then the modern tools/list, listen and a late ``initialize``."""
    out: dict[str, JSON] = {
        "requested": MODERN_PROTOCOL,
        "answered": False,
        "supportedVersions": None,
        "error": None,
        "serverInfo": None,
        "capabilities": None,
        "instructions": None,
        "ttlMs": None,
        "cacheScope": None,
        "tools": None,
        "toolsTtlMs": None,
        "toolsCacheScope": None,
        "listen": None,
        "initializeAfterDiscover": None,
    }
    start = start_session(session, Handshake(fallback="discover-only"), "")
    found = session.discovered
    if found is None:
        first = start.steps[0] if start.steps else None
        out["error"] = first.error.to_json() if first and first.error else None
        return out
    out.update(
        answered=True,
        supportedVersions=list(found.supported_versions),
        serverInfo=found.server_info,
        capabilities=found.capabilities,
        instructions=found.instructions,
        ttlMs=found.ttl_ms,
        cacheScope=found.cache_scope,
    )
    if not start.started:
        return out
    listing = session.list_tools(page_cap=page_cap)
    out["tools"] = [{"page": page, "tool": tool} for page, tool in listing.tools]
    out["pages"] = [
        {
            "index": p.index,
            "cursor": p.cursor,
            "nextCursor": p.next_cursor,
            "count": len(p.tools),
            "elapsed_ms": round(p.elapsed * 1000, 1),
        }
        for p in listing.pages
    ]
    out["listError"] = listing.error.to_json() if listing.error else None
    if listing.pages:
        out["toolsTtlMs"], out["toolsCacheScope"] = (
            listing.pages[0].ttl_ms,
            listing.pages[0].cache_scope,
        )
    tools_cap = found.capabilities.get("tools") if isinstance(found.capabilities, dict) else None
    if isinstance(tools_cap, dict) and tools_cap.get("listChanged"):
        heard = session.listen(LIST_TOOLS_CHANGED)
        out["listen"] = {
            "acknowledged": heard.acknowledged,
            "error": heard.error.to_json() if heard.error else None,
        }
    session.begin_handshake()
    late = session.request(
        "initialize",
        {
            "protocolVersion": HANDSHAKE_PROBES[0],
            "capabilities": dict(session.capabilities),
            "clientInfo": dict(session.client_info),
        },
        session.timeouts.initialize,
    )
    out["initializeAfterDiscover"] = {"accepted": late.error is None, "error": error_json(late)}
    return out


def probe_handshake(version: str) -> Callable[[Session], dict]:
    def probe(session: Session) -> dict:
        response = session.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": dict(session.capabilities),
                "clientInfo": dict(session.client_info),
            },
            session.timeouts.initialize,
        )
        if response.error is None:
            session.notify("notifications/initialized")
        return answer_json(version, response)

    return probe
