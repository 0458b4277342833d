"""How long a stale tool list can live in a client, under the server's ``ttlMs`` and list-change
subscriptions (2026-07-28, https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching).

A client whose ``cache`` behaviours keep the list it read first (``cache-tools``) keeps it:

- not at all when it honours ``ttlMs`` (profile ``handshake.honours_ttl``) and the old list said
  ``ttlMs: 0`` (stale at once: it refetches every time);
- for at most ``ttlMs`` after each fetch when it honours a positive ``ttlMs``;
- not past a change when it ``listens`` and the server acknowledged ``toolsListChanged`` on
  ``subscriptions/listen``;
- otherwise for the whole session (and across sessions, for clients that keep their cache).

Pure: it reads the profile and the two snapshots' ``eras`` (a version 1 snapshot has none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_matrix.profiles.model import Profile
from mcp_matrix.targets.snapshot import Snapshot


@dataclass(frozen=True)
class StaleWindow:
    """Whether the client can hold the old list at all, and for how long, in words."""

    stale: bool
    text: str
    ttl_ms: int | None = None

    def to_json(self) -> dict:
        return {"stale": self.stale, "text": self.text, "ttl_ms": self.ttl_ms}


def tools_ttl(snapshot: Snapshot | None) -> int | None:
    """The ``ttlMs`` the server sent with ``tools/list`` in the 2026-07-28 era (None: not sent)."""
    modern = (snapshot.eras or {}).get("modern") if snapshot is not None and snapshot.eras else None
    ttl = modern.get("toolsTtlMs") if isinstance(modern, dict) else None
    return ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0 else None


def listens_for_changes(snapshot: Snapshot | None) -> bool:
    modern = (snapshot.eras or {}).get("modern") if snapshot is not None and snapshot.eras else None
    listen = modern.get("listen") if isinstance(modern, dict) else None
    acknowledged = listen.get("acknowledged") if isinstance(listen, dict) else None
    return isinstance(acknowledged, dict) and acknowledged.get("toolsListChanged") is True


def stale_window(profile: Profile, old: Snapshot | None, new: Snapshot | None) -> StaleWindow:
    """How long ``profile`` can call with the list of ``old`` after the server became ``new``."""
    h = profile.handshake
    ttl = tools_ttl(old)
    if h is not None and h.listens and listens_for_changes(new):
        return StaleWindow(
            False,
            "not past the change: the client listens for tools list_changed "
            "(subscriptions/listen) and refetches",
            ttl,
        )
    if h is not None and h.honours_ttl and ttl is not None:
        if ttl == 0:
            return StaleWindow(
                False, "not at all: the old list said ttlMs 0 and the client honours it", 0
            )
        return StaleWindow(
            True,
            f"up to {_seconds(ttl)} after each fetch (the old list's ttlMs, which the client "
            "honours)",
            ttl,
        )
    if h is None or h.fallback == "initialize-only":
        why = "it speaks the handshake era, whose lists carry no ttlMs"
    elif ttl is None:
        why = "the server sent no ttlMs"
    else:
        why = f"it ignores the server's ttlMs ({_seconds(ttl)})"
    return StaleWindow(
        True,
        f"for the whole session: the client keeps the list it read at session start ({why})",
        ttl,
    )


def _seconds(ms: Any) -> str:
    seconds = ms / 1000
    return f"{seconds:g} s" if seconds < 120 else f"{seconds / 60:g} min"
