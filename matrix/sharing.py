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
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from matrix.classify import Answer
from matrix.connection import Connection, wire_handshake
from matrix.events import Sharing
from matrix.profiles.model import Profile
from matrix.run_bounds import CircuitBreaker, Deadline
from matrix.targets import Target
from matrix.wire.session import Timeouts

SHARE_MODES = ("none", "sessions", "calls")


def wire_identity(profile: Profile) -> str:
    """Everything a profile's session sends or decides on before its first call, as one string:
    equal strings open byte-identical sessions (the handshake versions it accepts included,
    since a version one accepts and the other refuses ends one session and not the other)."""
    identity = profile.identity
    return json.dumps(
        {
            "clientInfo": identity.client_info,
            "protocolVersion": identity.protocol_version,
            "capabilities": identity.capabilities,
            "handshake": repr(wire_handshake(profile)),
        },
        sort_keys=True,
        default=str,
    )


def read_only(tool: Any) -> bool:
    """The tool says it changes nothing: ``readOnlyHint: true`` and not destructive."""
    ann = tool.get("annotations") if isinstance(tool, dict) else None
    ann = ann if isinstance(ann, dict) else {}
    return ann.get("readOnlyHint") is True and ann.get("destructiveHint") is not True


@dataclass(frozen=True)
class SharingPlan:
    """Which profiles share a session, whether calls are shared, and why (for the results)."""

    mode: str
    groups: tuple[tuple[str, ...], ...]  # profiles that share one session, each group in run order
    calls: bool
    reason: str

    def to_event(self) -> Sharing:
        return Sharing(
            mode=self.mode,
            sessions=tuple(g for g in self.groups if len(g) > 1),
            calls=self.calls,
            reason=self.reason,
        )


def plan_sharing(mode: str, profiles: list[Profile], called_tools: Iterable[Any]) -> SharingPlan:
    """Group ``profiles`` by wire identity when ``mode`` allows it and every called tool is read-only."""
    alone = tuple((p.name,) for p in profiles)
    if mode == "none":
        return SharingPlan(mode, alone, False, "--share none: one session per profile")
    writers = sorted(
        {
            str(t.get("name")) if isinstance(t, dict) else "?"
            for t in called_tools
            if not read_only(t)
        }
    )
    if writers:
        return SharingPlan(
            mode,
            alone,
            False,
            f"nothing shared: {', '.join(writers[:5])}"
            f"{' ...' if len(writers) > 5 else ''} may write, so the server's state can change",
        )
    groups: dict[str, list[str]] = {}
    for p in profiles:
        groups.setdefault(wire_identity(p), []).append(p.name)
    shared = tuple(tuple(g) for g in groups.values())
    calls = mode == "calls"
    return SharingPlan(
        mode,
        shared,
        calls,
        "every call is read-only; profiles identical on the wire share a session"
        + (" and byte-identical calls" if calls else ""),
    )


class _SharedSession:
    """One group's connection: calls one at a time, answers kept when calls are shared."""

    def __init__(self, conn: Connection, members: int, share_calls: bool) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.members = members
        self.share_calls = share_calls
        self.answers: dict[
            str, tuple[str, Answer]
        ] = {}  # call bytes -> (profile that made it, answer)

    def release(self) -> None:
        with self.lock:
            self.members -= 1
            last = self.members <= 0
        if last:
            self.conn.close()


class ProfileConnection:
    """A profile's way to the server, with ``Connection``'s interface: its own session, or its
    group's (calls serialised), and another profile's answer to a byte-identical read-only call
    when calls are shared. A call the profile makes again is sent again: a repeat asks the
    server whether its answer changed (``matrix.deliver.compare``), which a kept answer cannot
    tell."""

    def __init__(
        self, shared: _SharedSession, profile: str, read_only_tools: frozenset[str]
    ) -> None:
        self._shared = shared
        self.profile = profile
        self._read_only = read_only_tools
        self._answer_from: list[str] = []
        self._asked: set[str] = set()  # the calls this profile has had an answer to
        self._released = False

    @property
    def timeouts(self) -> Timeouts:
        return self._shared.conn.timeouts

    def call(self, tool: str, arguments: Any, meta: Any, omit: bool, new_session: bool) -> Answer:
        shared = self._shared
        key = (
            json.dumps([tool, arguments, meta, omit, new_session], ensure_ascii=False, default=str)
            if shared.share_calls and tool in self._read_only
            else None
        )
        with shared.lock:
            if key is not None and key in shared.answers and key not in self._asked:
                source, answer = shared.answers[key]
                self._answer_from.append(source)
                self._asked.add(key)
                return answer
            answer = shared.conn.call(tool, arguments, meta, omit, new_session)
            if key is not None:
                self._asked.add(key)
                if answer.wire_error is None:  # a failure is never handed on: the next one tries
                    shared.answers[key] = (self.profile, answer)
        return answer

    def take_answer_from(self) -> list[str]:
        """The profiles whose answers this one got since the last ask (empty: all its own)."""
        out, self._answer_from = self._answer_from, []
        return out

    def abort(self) -> None:
        self._shared.conn.abort()

    def close(self) -> None:
        if not self._released:
            self._released = True
            self._shared.release()


class SessionPool:
    """The run's connections, one per group of ``plan``; ``close`` ends them all."""

    def __init__(
        self,
        plan: SharingPlan,
        profiles: list[Profile],
        target: Target,
        timeouts: Timeouts,
        deadline: Deadline,
        breaker: CircuitBreaker,
        read_only_tools: Iterable[str],
    ) -> None:
        by_name = {p.name: p for p in profiles}
        self._read_only = frozenset(read_only_tools)
        self._groups: dict[str, _SharedSession] = {}
        for group in plan.groups:
            conn = Connection(target, timeouts, by_name[group[0]], deadline, breaker)
            session = _SharedSession(conn, len(group), plan.calls and len(group) > 1)
            for name in group:
                self._groups[name] = session

    def connection(self, profile: Profile) -> ProfileConnection:
        return ProfileConnection(self._groups[profile.name], profile.name, self._read_only)

    def close(self) -> None:
        """End every session (the ones whose profiles never ran included); closing twice is harmless."""
        for session in {id(s): s for s in self._groups.values()}.values():
            session.conn.close()
