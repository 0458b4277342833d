"""Opening a session the way a client does: which era it tries first and how it falls back.

A 2026-07-28 client may probe ``server/discover`` and fall back to ``initialize`` when the
answer is not positive evidence of a modern server (the spec's stdio backward-compatibility
probe); an older client only sends ``initialize``; a modern-only client only discovers. Some
clients send ``initialize`` even after a successful discover on the same connection
(claude-code#96183), which a modern-only server refuses with -32022.

``start_session`` follows one ``Handshake`` and returns a ``Start``: the era reached and the
negotiated version, or why the session never started, with every step taken (for the
session verdict). A transport failure still raises ``WireError``; a refusal is a value.
https://modelcontextprotocol.io/specification/2026-07-28/server/discover
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_matrix.wire.errors import HttpError, RpcError
from mcp_matrix.wire.session import Session
from mcp_matrix.wire.versions import (
    HANDSHAKE_PROTOCOLS,
    MODERN_PROTOCOLS,
    UNSUPPORTED_PROTOCOL_VERSION,
)

FALLBACKS = ("initialize-only", "discover-then-initialize", "discover-only")


@dataclass(frozen=True)
class Handshake:
    """How one client opens a session (the wire's half of a profile's ``handshake`` section)."""

    fallback: str = "initialize-only"
    modern_versions: tuple[str, ...] = (
        MODERN_PROTOCOLS  # what it puts in _meta, in order of preference
    )
    accepts: tuple[str, ...] = (
        HANDSHAKE_PROTOCOLS  # negotiated handshake versions it continues with
    )
    initialize_after_discover: bool = False  # sends initialize even after a successful discover

    @property
    def discovers(self) -> bool:
        return self.fallback != "initialize-only"

    @property
    def initializes(self) -> bool:
        return self.fallback != "discover-only"


SPEC_CORRECT = Handshake(fallback="discover-then-initialize")  # what mcp-matrix itself does


@dataclass(frozen=True)
class Step:
    method: str
    sent_version: str
    answered: str = ""  # the version the server chose / named, if any
    error: RpcError | None = None
    note: str = ""

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "sent": self.sent_version,
            "answered": self.answered,
            "error": self.error.to_json() if self.error else None,
            "note": self.note,
        }


@dataclass(frozen=True)
class Start:
    era: str  # "modern", "handshake", or "" when the session never started
    version: str = ""
    steps: tuple[Step, ...] = field(default=())
    reason: str = ""  # why it never started

    @property
    def started(self) -> bool:
        return bool(self.era)


def modern_evidence(error: RpcError | None, supported: object) -> bool:
    """-32022 naming only modern versions is the one refusal a dual-era client does not fall back from."""
    return (
        error is not None
        and error.code == UNSUPPORTED_PROTOCOL_VERSION
        and isinstance(supported, list)
        and bool(supported)
        and not any(v in HANDSHAKE_PROTOCOLS for v in supported)
    )


def supported_of(error: RpcError | None) -> object:
    data = error.data if error is not None else None
    return data.get("supported") if isinstance(data, dict) else None


def start_session(session: Session, handshake: Handshake, handshake_version: str) -> Start:
    """Open ``session`` as ``handshake`` says; the session is left in the era reached."""
    steps: list[Step] = []
    if handshake.discovers:
        for version in handshake.modern_versions or MODERN_PROTOCOLS:
            try:
                response = session.discover(version)
            except HttpError as exc:
                # An HTTP-layer refusal (e.g. 400 from a server that wants initialize first) does
                # not indicate a modern server: the versioning page says a dual-era client falls
                # back on any such error (SDKs: rust-sdk#1088, csharp-sdk#1766).
                if not handshake.initializes or not exc.message.startswith("HTTP 4"):
                    raise
                steps.append(Step("server/discover", version, note=f"{exc.message}; fell back"))
                break
            if response.error is not None:
                supported = supported_of(response.error)
                steps.append(Step("server/discover", version, error=response.error))
                mutual = [
                    v
                    for v in handshake.modern_versions
                    if isinstance(supported, list) and v in supported
                ]
                if mutual and mutual[0] != version:
                    continue  # retry once at a version the server names
                if modern_evidence(response.error, supported) or not handshake.initializes:
                    return Start(
                        "", steps=tuple(steps), reason=_discover_refused(response.error, version)
                    )
                break
            found = session.discovered
            versions = found.supported_versions if found else ()
            mutual = [v for v in handshake.modern_versions if v in versions]
            steps.append(Step("server/discover", version, answered=", ".join(map(str, versions))))
            if not mutual:
                if not handshake.initializes:
                    return Start(
                        "",
                        steps=tuple(steps),
                        reason=(
                            f"server/discover named only {list(versions)}; the client speaks {list(handshake.modern_versions)}"
                        ),
                    )
                break  # a discover answer without a modern version is a legacy advertisement: fall back
            session.adopt_modern(mutual[0])
            if not handshake.initialize_after_discover:
                return Start("modern", mutual[0], tuple(steps))
            return _initialize(
                session, handshake, handshake_version, steps, after_discover=mutual[0]
            )
    return _initialize(session, handshake, handshake_version, steps)


def _initialize(
    session: Session,
    handshake: Handshake,
    version: str,
    steps: list[Step],
    after_discover: str = "",
) -> Start:
    session.begin_handshake()
    response = session.request(
        "initialize", _initialize_params(session, version), session.timeouts.initialize
    )
    if response.error is not None:
        steps.append(Step("initialize", version, error=response.error))
        if after_discover:
            reason = (
                f"the client sent initialize ({version}) after a successful server/discover and the server "
                f"refused it: {response.error.code} {response.error.message}"
            )
        else:
            reason = f"initialize ({version}) was refused: {response.error.code} {response.error.message}"
        return Start("", steps=tuple(steps), reason=reason)
    result = response.result if isinstance(response.result, dict) else {}
    negotiated = result.get("protocolVersion")
    steps.append(Step("initialize", version, answered=str(negotiated)))
    if negotiated not in handshake.accepts:
        return Start(
            "",
            steps=tuple(steps),
            reason=(
                f"the client asked for {version}, the server answered {negotiated!r}, and the client accepts only "
                f"{', '.join(handshake.accepts)}"
            ),
        )
    session.adopt_handshake(response, negotiated)
    return Start("handshake", str(negotiated), tuple(steps))


def _initialize_params(session: Session, version: str) -> dict:
    return {
        "protocolVersion": version,
        "capabilities": dict(session.capabilities),
        "clientInfo": dict(session.client_info),
    }


def _discover_refused(error: RpcError, version: str) -> str:
    supported = supported_of(error)
    named = f"; the server supports {supported}" if isinstance(supported, list) else ""
    return f"server/discover ({version}) was refused: {error.code} {error.message}{named}"
