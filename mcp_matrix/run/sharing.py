"""Sessions and answers shared between profiles whose sessions are identical on the wire.

Most of a live run's cost is the server's, not ours: every stdio session is a fresh server
process, and a client that opens a session per call starts one per call. Several profiles
open byte-identical sessions (the same clientInfo, protocol version, capabilities and
handshake: library clients built on the official Python SDK all send ``mcp 0.1.0``), so
the server cannot tell them apart. Two things can then be shared:

- ``sessions``: one session (one server process over stdio) for every profile of such a group,
  its calls sent one at a time;
- ``calls`` (opt-in): a byte-identical call of the same group is sent once and its answer
  given to each profile that makes it; the cell says whose answer it got (``answer_from``).
  A profile that makes the same call twice (to see whether the server answers it alike) has
  its second one sent.

Both are sound only while the server's state cannot change, so they are used only in a run
whose every call goes to a read-only tool (``readOnlyHint: true``, not destructive). One call
that may write turns sharing off for the whole run: a shared session would show one profile's
writes to another, and a write is never sent fewer times than the profiles make it. Profiles
that differ in anything they send keep sessions of their own.

This module plans it (who the server can tell apart: ``wire_identity``; ``plan_sharing``); the
sessions themselves are ``mcp_matrix.run.session_pool``'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.core.events import Sharing
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import read_only
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.connection import wire_handshake
from mcp_matrix.wire.session import LATEST_PROTOCOL

SHARE_MODES = ("none", "sessions", "calls")


@dataclass(frozen=True)
class ServerEras:
    """What the snapshot's probes saw the server answer (``eras`` of the snapshot): the version
    ``initialize`` negotiated for each version asked for, and the versions a ``server/discover``
    at ``modern_asked`` named (empty: not answered). With them, a client's own decisions (which
    answered version it accepts) are known before its session opens."""

    negotiated: Mapping[str, str] = field(default_factory=dict)
    modern_asked: str = ""
    modern: tuple[str, ...] = ()

    @classmethod
    def of(cls, eras: Any) -> ServerEras:
        """From a snapshot's ``eras`` (None or malformed: nothing known)."""
        eras = eras if isinstance(eras, dict) else {}
        handshake = eras.get("handshake") if isinstance(eras.get("handshake"), dict) else {}
        negotiated = {
            a["requested"]: a["protocolVersion"]
            for a in handshake.get("answers") or []
            if isinstance(a, dict)
            and isinstance(a.get("requested"), str)
            and isinstance(a.get("protocolVersion"), str)
            and not a.get("error")
            and not a.get("wireError")
        }
        modern = eras.get("modern") if isinstance(eras.get("modern"), dict) else {}
        supported = modern.get("supportedVersions")
        answered = modern.get("answered") is True and not modern.get("error")
        return cls(
            negotiated,
            str(modern.get("requested") or ""),
            tuple(v for v in supported if isinstance(v, str))
            if answered and isinstance(supported, list)
            else (),
        )


def wire_identity(profile: Profile, eras: ServerEras | None = None) -> str:
    """Everything a profile's session sends or decides on before its first call, as one string:
    equal strings open byte-identical sessions on this server. Without ``eras`` the handshake
    versions it accepts count as they are (a version one accepts and the other refuses ends one
    session and not the other); with them, only whether it accepts what the server answers.
    A session the server takes into the 2026-07-28 era at once has no handshake: every request
    carries its client's identity in ``_meta``, so such profiles share a connection whatever
    their identity, each request sent as its client sends it (``stateless``)."""
    identity, h = profile.identity, wire_handshake(profile)
    if eras is not None and stateless(profile, eras):
        return json.dumps({"era": "modern", "version": eras.modern_asked})
    sent: dict[str, JSON] = {
        "clientInfo": identity.client_info,
        "capabilities": identity.capabilities,
    }
    if eras is None:
        sent.update(protocolVersion=identity.protocol_version, handshake=repr(h))
    else:
        asked = identity.protocol_version or LATEST_PROTOCOL
        answer = eras.negotiated.get(asked)
        sent.update(
            protocolVersion=identity.protocol_version,
            fallback=h.fallback,
            modern_versions=h.modern_versions if h.discovers else (),
            initialize_after_discover=h.initialize_after_discover,
            accepts=True if answer in h.accepts else h.accepts,  # refused: the reason names them
        )
    return json.dumps(sent, sort_keys=True, default=str)


def stateless(profile: Profile, eras: ServerEras) -> bool:
    """The profile's session reaches the 2026-07-28 era at once on this server: it discovers
    first, at the version the server's ``server/discover`` was answered at, and sends no
    ``initialize`` after it (claude-code#96183 does: its connection holds handshake state)."""
    h = wire_handshake(profile)
    return (
        h.discovers
        and not h.initialize_after_discover
        and h.modern_versions[:1] == (eras.modern_asked,)
        and eras.modern_asked in eras.modern
    )


@dataclass(frozen=True)
class SharingPlan:
    """Which profiles share a session, whether calls are shared, and why (for the results)."""

    mode: str
    groups: tuple[tuple[str, ...], ...]  # profiles that share one session, each group in run order
    calls: bool
    reason: str
    # the groups the server cannot tell apart, whatever the mode: the least work is counted per
    # group (every profile alone when a call may write)
    units: tuple[tuple[str, ...], ...] = ()

    def to_event(self) -> Sharing:
        return Sharing(
            mode=self.mode,
            sessions=tuple(g for g in self.groups if len(g) > 1),
            calls=self.calls,
            reason=self.reason,
        )


def plan_sharing(
    mode: str,
    profiles: list[Profile],
    called_tools: Iterable[JSON],
    eras: ServerEras | None = None,
) -> SharingPlan:
    """Group ``profiles`` by wire identity (on the server whose ``eras`` are given) when ``mode``
    allows it and every called tool is read-only."""
    alone = tuple((p.name,) for p in profiles)
    writers = sorted(
        {
            str(t.get("name")) if isinstance(t, dict) else "?"
            for t in called_tools
            if not read_only(t)
        }
    )
    if writers:
        reason = (
            f"nothing shared: {', '.join(writers[:5])}"
            f"{' ...' if len(writers) > 5 else ''} may write, so the server's state can change"
        )
        if mode == "none":
            reason = "--share none: one session per profile"
        return SharingPlan(mode, alone, False, reason, alone)
    same: dict[str, list[str]] = {}
    for p in profiles:
        same.setdefault(wire_identity(p, eras), []).append(p.name)
    units = tuple(tuple(g) for g in same.values())
    if mode == "none":
        return SharingPlan(mode, alone, False, "--share none: one session per profile", units)
    calls = mode == "calls"
    return SharingPlan(
        mode,
        units,
        calls,
        "every call is read-only; profiles identical on the wire share a session"
        + (" and byte-identical calls" if calls else ""),
        units,
    )
