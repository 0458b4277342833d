"""The run's sessions, shared as ``mcp_matrix.run.sharing`` planned, and what they cost the server.

``SessionPool`` opens one connection per group of profiles the server cannot tell apart; each
profile calls through its ``ProfileConnection`` (its group's session, calls one at a time, and
the group's answer to the same read-only call bytes when calls are shared); ``FreshAnswers``
shares the answers of a session-per-call client on a server whose state starts afresh with
each session; ``Work`` counts the sessions and calls against the least the same calls needed.
"""

from __future__ import annotations

import json
import shlex
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.bounds import CircuitBreaker, Deadline
from mcp_matrix.run.classify import Answer
from mcp_matrix.run.connection import Connection
from mcp_matrix.run.sharing import ServerEras, SharingPlan, wire_identity
from mcp_matrix.targets.kinds import BUNDLED, Target
from mcp_matrix.targets.warm_start import state_per_session
from mcp_matrix.wire.session import Timeouts


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
    starts: str = ""  # a stdio server's: how its processes were started (warm or why cold)

    def text(self) -> str:
        counts = (
            f"server sessions for the calls: {self.sessions} opened (least {self.least_sessions}); "
            f"tools/call: {self.calls} sent (least {self.least_calls})"
        )
        return f"{counts}\nserver processes: {self.starts}" if self.starts else counts


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
