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
import shlex
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.core.events import Sharing
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import read_only
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.bounds import CircuitBreaker, Deadline
from mcp_matrix.run.classify import Answer
from mcp_matrix.run.connection import Connection, wire_handshake
from mcp_matrix.targets.kinds import BUNDLED, Target
from mcp_matrix.targets.warm_start import state_per_session
from mcp_matrix.wire.session import LATEST_PROTOCOL, Timeouts

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


def fresh_identities(
    target: Target, profiles: list[Profile], eras: ServerEras | None
) -> FreshAnswers | None:
    """Where each profile's session-per-call calls may share answers: a bundled server over stdio
    whose state lives in its process (``warm_start.state_per_session``), keyed by what each
    profile's session sends before its call (``wire_identity``); None for any other target (a
    server of unknown state: a write must reach it as often as the profiles make it)."""
    if target.kind != "server" or target.server_transport != "stdio":
        return None
    name, *args = shlex.split(target.server)
    if name not in BUNDLED or not state_per_session((*BUNDLED[name], *args)):
        return None
    return FreshAnswers({p.name: _sent_before_call(p, eras) for p in profiles})


def _sent_before_call(profile: Profile, eras: ServerEras | None) -> str:
    """The session's identity and what each request carries besides the call (the client's
    identity in ``_meta`` in the 2026-07-28 era, where ``wire_identity`` leaves it out)."""
    identity = profile.identity
    return json.dumps(
        [wire_identity(profile, eras), identity.client_info, identity.capabilities],
        sort_keys=True,
        default=str,
    )


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


@dataclass(frozen=True)
class Work:
    """What the calls cost the server against the least they could: sessions opened (over stdio,
    server processes started) and tools/call requests sent. The least is one session per group
    of profiles the server cannot tell apart (per profile when a call may write) and per call of
    a client that opens a session per call, and one call per distinct call of such a group (a
    profile's own repeat counts again); a session restarted after a failure counts as made."""

    sessions: int
    calls: int
    least_sessions: int
    least_calls: int

    def text(self) -> str:
        return (
            f"server sessions for the calls: {self.sessions} opened (least {self.least_sessions}); "
            f"tools/call: {self.calls} sent (least {self.least_calls})"
        )


class _Least:
    """The least work, counted as calls are asked for: the n-th ask of the same call bytes in
    one group of profiles the server cannot tell apart needs a call (and, for a session per
    call, a session) only once; a group's kept session is needed once it makes a call."""

    def __init__(self, units: Iterable[tuple[str, ...]]) -> None:
        self.unit = {name: i for i, group in enumerate(units) for name in group}
        self.lock = threading.Lock()
        self.needed: set[tuple] = set()
        self.sessions: set[int] = set()
        self.calls = 0
        self.per_call = 0

    def ask(
        self, profile: str, key: str | None, nth: int, new_session: bool, fresh: bool = False
    ) -> None:
        """``fresh``: ``key`` names the sender's identity too (a session per call on a server
        whose state starts afresh with each session), so it is needed once whoever asks."""
        unit = -1 if fresh else self.unit.get(profile, -1 - len(self.unit))
        with self.lock:
            if key is not None:
                need = (unit, key, nth)
                if need in self.needed:
                    return
                self.needed.add(need)
            self.calls += 1
            if new_session:
                self.per_call += 1
            else:
                self.sessions.add(unit)


class _SharedSession:
    """One group's connection: calls one at a time, answers kept when calls are shared."""

    def __init__(self, conn: Connection, members: int, share_calls: bool) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.members = members
        self.share_calls = share_calls
        self.sent = 0
        # call bytes -> each answer the server gave them, in order, and the profile that asked
        self.answers: dict[str, list[tuple[str, Answer]]] = {}

    def release(self) -> None:
        with self.lock:
            self.members -= 1
            last = self.members <= 0
        if last:
            self.conn.close()


class FreshAnswers:
    """Answers to calls sent on a session of their own (a client that opens a session per call)
    to a server whose state lives and dies with its session (``state_per_session``): such a
    call meets the same fresh server whoever sends it, so the n-th ask of the same identity and
    call bytes needs one call, whatever the tool does (a write ends with its server). Keys
    carry the sender's wire identity, so profiles the server can tell apart never share."""

    def __init__(self, identities: Mapping[str, str]) -> None:
        self.identity = dict(identities)  # profile name -> what its session sends before a call
        self.lock = threading.Lock()
        self.answers: dict[str, list[tuple[str, Answer]]] = {}
        self.sending: dict[str, threading.Lock] = {}  # one send at a time per key
        self.sent = 0

    def key(self, profile: str, call: list[JSON]) -> str | None:
        who = self.identity.get(profile)
        if who is None:
            return None
        return json.dumps([who, *call], ensure_ascii=False, default=str)

    def lock_for(self, key: str) -> threading.Lock:
        with self.lock:
            return self.sending.setdefault(key, threading.Lock())


class ProfileConnection:
    """A profile's way to the server, with ``Connection``'s interface: its own session, or its
    group's (calls serialised), and, when calls are shared, the answer the group's server gave
    to the same read-only call bytes asked for the same time: a profile's first ask gets the
    first answer, its repeat (``mcp_matrix.run.deliver.compare`` asks whether the server's answer
    changed) the answer to the group's second ask, sent if no profile asked twice yet."""

    def __init__(
        self,
        shared: _SharedSession,
        profile: Profile,
        read_only_tools: frozenset[str],
        least: _Least,
        fresh: FreshAnswers | None = None,
    ) -> None:
        self._shared = shared
        self._fresh = fresh
        self._profile = profile
        self.profile = profile.name
        # what every request of this profile carries beside the call (its identity in _meta in
        # the 2026-07-28 era; the same for every profile of a handshake session)
        self._sends = json.dumps(
            [profile.identity.client_info, profile.identity.capabilities],
            sort_keys=True,
            default=str,
        )
        self._read_only = read_only_tools
        self._least = least
        self._answer_from: list[str] = []
        self._asked: dict[str, int] = {}  # call bytes -> how many times this profile asked
        self._released = False

    @property
    def timeouts(self) -> Timeouts:
        return self._shared.conn.timeouts

    def call(self, tool: str, arguments: JSON, meta: JSON, omit: bool, new_session: bool) -> Answer:
        if new_session and self._fresh is not None:
            fresh = self._fresh.key(self.profile, [tool, arguments, meta, omit])
            if fresh is not None:
                return self._call_fresh(fresh, tool, arguments, meta, omit)
        shared = self._shared
        key = (
            json.dumps(
                [self._sends, tool, arguments, meta, omit, new_session],
                ensure_ascii=False,
                default=str,
            )
            if tool in self._read_only
            else None
        )
        nth = self._asked.get(key, 0) if key is not None else 0
        if key is not None:
            self._asked[key] = nth + 1
        self._least.ask(self.profile, key, nth, new_session)
        kept = key if shared.share_calls else None  # the key its answers are shared under
        with shared.lock:
            given = shared.answers.get(kept, []) if kept is not None else []
            if nth < len(given):
                source, answer = given[nth]
                self._answer_from.append(source)
                return answer
            answer = shared.conn.call(tool, arguments, meta, omit, new_session, self._profile)
            shared.sent += 1
            # a failure is never handed on: the next profile tries; a later ask stays unsent
            # only while every earlier one was answered
            if kept is not None and answer.wire_error is None and nth == len(given):
                shared.answers.setdefault(kept, []).append((self.profile, answer))
        return answer

    def _call_fresh(self, key: str, tool: str, arguments: JSON, meta: JSON, omit: bool) -> Answer:
        """A call on a session of its own to a server whose state starts afresh: the answer
        to the same identity and call bytes asked the same time, sent if none was yet."""
        fresh = self._fresh
        assert fresh is not None
        nth = self._asked.get(key, 0)
        self._asked[key] = nth + 1
        self._least.ask(self.profile, key, nth, True, fresh=True)
        with fresh.lock_for(key):
            given = fresh.answers.get(key, [])
            if nth < len(given):
                source, answer = given[nth]
                self._answer_from.append(source)
                return answer
            answer = self._shared.conn.call(tool, arguments, meta, omit, True, self._profile)
            with fresh.lock:
                fresh.sent += 1
            if answer.wire_error is None and nth == len(given):  # a failure is never handed on
                fresh.answers.setdefault(key, []).append((self.profile, answer))
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
    """The run's connections, one per group of ``plan``; ``close`` ends them all; ``work`` says
    what they cost the server against the least they could."""

    def __init__(
        self,
        plan: SharingPlan,
        profiles: list[Profile],
        target: Target,
        timeouts: Timeouts,
        deadline: Deadline,
        breaker: CircuitBreaker,
        read_only_tools: Iterable[str],
        fresh: FreshAnswers | None = None,
    ) -> None:
        by_name = {p.name: p for p in profiles}
        self._read_only = frozenset(read_only_tools)
        self._fresh = fresh
        self._least = _Least(plan.units or tuple((p.name,) for p in profiles))
        self._groups: dict[str, _SharedSession] = {}
        for group in plan.groups:
            conn = Connection(target, timeouts, by_name[group[0]], deadline, breaker)
            session = _SharedSession(conn, len(group), plan.calls and len(group) > 1)
            for name in group:
                self._groups[name] = session

    def connection(self, profile: Profile) -> ProfileConnection:
        return ProfileConnection(
            self._groups[profile.name], profile, self._read_only, self._least, self._fresh
        )

    def _sessions(self) -> list[_SharedSession]:
        return list({id(s): s for s in self._groups.values()}.values())

    def work(self) -> Work:
        """Sessions opened and calls sent so far, and the least the same calls needed."""
        least = self._least
        with least.lock:
            least_sessions, least_calls = len(least.sessions) + least.per_call, least.calls
        sessions = self._sessions()
        fresh = self._fresh.sent if self._fresh is not None else 0
        return Work(
            sum(s.conn.opened for s in sessions),
            sum(s.sent for s in sessions) + fresh,
            least_sessions,
            least_calls,
        )

    def close(self) -> None:
        """End every session (the ones whose profiles never ran included); closing twice is harmless."""
        for session in self._sessions():
            session.conn.close()
