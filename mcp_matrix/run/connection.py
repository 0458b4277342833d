"""Sessions to the target under test: opening one as a profile's client does, reopening after a failure.

A ``Connection`` starts the server (a stdio process, or a connection to a URL) when its first
call needs it, opens the session with the profile's identity and handshake
(``mcp_matrix.wire.eras``), lists tools before the first call as every client does, and starts
afresh after a wire failure (a crashed server is restarted). ``abort`` ends the call in flight
from another thread (Ctrl-C, the run's deadline).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.bounds import CircuitBreaker, Deadline, timeout_note
from mcp_matrix.run.classify import Answer
from mcp_matrix.targets.kinds import Target
from mcp_matrix.wire.eras import Handshake, start_session
from mcp_matrix.wire.errors import ProtocolError, ServerExited, WireError, WireTimeout
from mcp_matrix.wire.session import LATEST_PROTOCOL, Session, Timeouts
from mcp_matrix.wire.versions import HANDSHAKE_PROTOCOLS


class Interrupted(Exception):
    """A call cut short by the run (the user interrupted it, or its deadline passed while the
    call waited): its cell is not a verdict."""


def wire_handshake(profile: Profile) -> Handshake:
    """How a session for ``profile`` opens: its declared handshake; ``initialize`` accepting any
    answer for a profile that declares none."""
    h = profile.handshake
    if h is None:
        return Handshake(fallback="initialize-only", accepts=(*HANDSHAKE_PROTOCOLS, "2024-10-07"))
    return Handshake(
        fallback=h.fallback,
        modern_versions=h.modern_versions,
        accepts=h.accepts or HANDSHAKE_PROTOCOLS,
        initialize_after_discover=h.initialize_after_discover,
    )


def breaker_saw(breaker: CircuitBreaker, tool: str, who: str, answer: Answer, bound: float) -> None:
    """Tell the circuit breaker how a call went."""
    if answer.wire_error is not None and answer.wire_error.get("kind") == "timeout":
        breaker.call_timed_out(tool, who, bound)
    elif answer.wire_error is None:
        breaker.answered()


def _speak_as(session: Session, who: Profile) -> None:
    """The identity the next requests carry (the 2026-07-28 era's per-request ``_meta``)."""
    session.client_info = dict(who.identity.client_info)
    session.capabilities = dict(who.identity.capabilities)


class Connection:
    """A session to the target that reopens after a failure (a crashed server is restarted)."""

    def __init__(
        self,
        target: Target,
        timeouts: Timeouts,
        profile: Profile,
        deadline: Deadline | None = None,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self.target = target
        self._timeouts = timeouts
        self.deadline = deadline or Deadline(None)
        self.breaker = breaker or CircuitBreaker(enabled=False)
        self.profile = profile
        self.session: Session | None = None
        self._transport: Any = None  # the one in use, so abort() can reach it from another thread
        self._aborted = False
        self.opened = 0  # sessions started (over stdio, server processes), restarts included
        self._joined: set[str] = set()  # the profiles whose requests the open session carries

    @property
    def timeouts(self) -> Timeouts:
        """The bounds, each capped by the time the run has left."""
        return self.deadline.cap(self._timeouts)

    def _open(self, list_first: bool = True, who: Profile | None = None) -> Session:
        """Connect as the client does (its handshake, mcp_matrix.wire.eras), then list tools (the first page) before any call.

        A handshake that times out is tried once more with twice the bound (a loaded machine,
        not the server, may be slow); if that times out too, the circuit breaker hears of it.
        ``list_first=False`` for a session opened per call: such clients (langchain-mcp-adapters)
        list tools once, elsewhere, and go straight to the call."""
        who = who or self.profile
        try:
            return self._open_once(list_first, self.timeouts, who)
        except WireTimeout:
            if self._aborted or self.deadline.passed():
                raise
            longer = self.deadline.cap(
                replace(self._timeouts, initialize=2 * self._timeouts.initialize)
            )
            try:
                return self._open_once(list_first, longer, who)
            except WireTimeout as exc:
                self.breaker.handshake_timed_out(who.name, longer.initialize)
                exc.message += (
                    f" (the second try; the first waited {self._timeouts.initialize:g} s)"
                )
                raise

    def _open_once(self, list_first: bool, timeouts: Timeouts, who: Profile) -> Session:
        identity = who.identity
        transport = self.target.transport(connect_timeout=timeouts.initialize)
        self._transport = (
            transport  # held before its server starts: close() ends it whatever happens
        )
        session = Session(
            transport,
            timeouts=timeouts,
            client_info=dict(identity.client_info),
            protocol_version=identity.protocol_version,
            capabilities=dict(identity.capabilities),
        )
        try:
            if self._aborted:
                raise ServerExited("the run was interrupted")
            self.opened += 1
            transport.start()
            version = identity.protocol_version or LATEST_PROTOCOL
            started = start_session(session, wire_handshake(who), version)
            if not started.started:
                raise ProtocolError(
                    f"the session never started: {started.reason}",
                    stderr_tail=transport.stderr_tail(),
                )
            if list_first:
                session.list_tools(
                    first_page_only=True
                )  # an error answer is the server's; the call decides
        except BaseException:  # a failure or Ctrl-C: never leave a server running
            session.close()
            raise
        return session

    def abort(self) -> None:
        """From another thread: end the call in flight now and make no more (the user interrupted)."""
        self._aborted = True
        transport = self._transport
        if transport is not None:
            transport.interrupt("the run was interrupted")

    def call(
        self,
        tool: str,
        arguments: JSON,
        meta: Any,
        omit: bool,
        new_session: bool,
        who: Profile | None = None,
    ) -> Answer:
        """One tools/call as ``who`` (default: the connection's profile) makes it; a failure of
        the wire is the answer (``broken``), an abort raises ``Interrupted``. Another profile
        than the connection's goes on its session only in the 2026-07-28 era, where every
        request carries its client's identity (``mcp_matrix.run.sharing``): it first sends its own
        ``server/discover`` and lists tools on it, as it would on a session of its own."""
        if self._aborted:
            raise Interrupted()
        who = who or self.profile
        started = time.monotonic()
        try:
            if new_session:
                session = self._open(list_first=False, who=who)
                try:
                    r = session.call_tool(tool, arguments, meta=meta, omit_arguments=omit)
                finally:
                    session.close()
            else:
                if self.session is None:
                    self.session = self._open(who=who)
                    self._joined = {who.name}
                elif who.name not in self._joined and self.session.era == "modern":
                    self._join(self.session, who)
                _speak_as(self.session, who)
                r = self.session.call_tool(tool, arguments, meta=meta, omit_arguments=omit)
        except WireError as exc:
            self.close()  # the next call starts afresh
            if self._aborted or (isinstance(exc, WireTimeout) and self.deadline.passed()):
                # A wait capped by the run's deadline ran out with it: the run cut the call
                # short; the server is not shown to be slow (its own bound had time left).
                raise Interrupted() from None
            error = exc.to_json()
            if isinstance(exc, WireTimeout):
                error["message"] = f"{error['message']} ({timeout_note()})"
            return Answer(wire_error=error, elapsed=time.monotonic() - started)
        return Answer(
            result=r.result, error=r.error.to_json() if r.error else None, elapsed=r.elapsed
        )

    def _join(self, session: Session, who: Profile) -> None:
        """``who`` opens its stateless session on the open connection: its own discover, then
        the first page of tools/list, each with its identity in ``_meta``."""
        _speak_as(session, who)
        version = who.identity.protocol_version or LATEST_PROTOCOL
        started = start_session(session, wire_handshake(who), version)
        if started.era != "modern":
            raise ProtocolError(f"the session never started: {started.reason or started.era}")
        self._joined.add(who.name)
        session.list_tools(first_page_only=True)

    def close(self) -> None:
        """End the session and the server last started (closing twice is harmless)."""
        session, transport = self.session, self._transport
        self.session = self._transport = None
        try:
            if session is not None:
                session.close()
        finally:
            if transport is not None:
                transport.close()
