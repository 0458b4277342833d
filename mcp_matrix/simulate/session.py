"""Can this client start a session with this server at all? The session verdict, offline.

A profile's ``handshake`` (which eras it tries, in what order, what it accepts) meets the
snapshot's ``eras`` (what the server answered to ``server/discover`` and to ``initialize``
at each version). When the session could never start, the finding names the versions on
both sides and the fix; every tool of the server is then ``session-broken`` for that client.
Unknown is not a finding: a version 1 snapshot, an unprobed version, or a probe that failed
on the wire says nothing (no false alarm).

Follows the spec's negotiation: a client falls back to ``initialize`` on any discover error
except -32022 naming only modern versions, and on a discover answer that names no version it
speaks (https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning; the
Python SDK's ``mcp/client/_probe.py``@2.3.0 does the same).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mcp_matrix.core.evidence import weakest
from mcp_matrix.core.model import ClientView, Finding
from mcp_matrix.profiles.model import Profile
from mcp_matrix.targets.snapshot import Snapshot

HANDSHAKE_ERA = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

FIX_BOTH_ERAS = (
    "support both eras: keep answering initialize (2025-11-25 and older) beside 2026-07-28"
)
FIX_ECHO = "echo a supported requested version: answer initialize with the version the client asked for when you support it"
FIX_LATE_INITIALIZE = (
    "accept initialize after server/discover on the same connection (or, on stdio, do not lock "
    "the connection to 2026-07-28 on discover)"
)


def session_finding(profile: Profile, snapshot: Snapshot) -> Finding | None:
    """Why ``profile`` never gets a session with the server ``snapshot`` recorded, or None."""
    h = profile.handshake
    eras = snapshot.eras
    if h is None or eras is None:
        return None
    probed = eras.get("modern")
    modern: Mapping[str, Any] = probed if isinstance(probed, dict) else {}
    version = profile.identity.protocol_version
    client = f"{profile.client} ({profile.name})"
    if h.fallback != "initialize-only":
        if modern.get("wireError"):
            return None  # the probe itself failed: unknown
        if modern.get("answered"):
            listed = modern.get("supportedVersions")  # a damaged file's number: none listed
            offered = [str(v) for v in listed] if isinstance(listed, list) else []
            mutual = [v for v in h.modern_versions if v in offered]
            if mutual:
                if not h.initialize_after_discover:
                    return None
                late = modern.get("initializeAfterDiscover")
                if not isinstance(late, dict) or late.get("accepted"):
                    return None
                return _finding(
                    h,
                    "initialize-after-discover",
                    (
                        f"{client} sends initialize ({version}) after a successful server/discover "
                        f"({mutual[0]}), and the server refuses it ({_error(late.get('error'))}): the session never "
                        f"starts. Fix: {FIX_LATE_INITIALIZE}."
                    ),
                )
            if h.fallback == "discover-only":
                return _finding(
                    h,
                    "no-common-version",
                    (
                        f"{client} speaks only {', '.join(h.modern_versions)}; server/discover names {offered}: "
                        f"the session never starts. Fix: {FIX_BOTH_ERAS}."
                    ),
                )
        else:
            error = modern.get("error") if isinstance(modern.get("error"), dict) else None
            supported = _supported(error)
            if _modern_only(error, supported):
                return _finding(
                    h,
                    "no-common-version",
                    (
                        f"{client} offers {', '.join(h.modern_versions)}; the server refuses it and supports "
                        f"only {supported}: the session never starts. Fix: serve {', '.join(h.modern_versions)} "
                        f"too, or {FIX_BOTH_ERAS}."
                    ),
                )
            if h.fallback == "discover-only":
                return _finding(
                    h,
                    "modern-refused",
                    (
                        f"{client} speaks only the 2026-07-28 era (server/discover, {', '.join(h.modern_versions)}); "
                        f"the server answers server/discover with {_error(error)} and speaks only the initialize "
                        f"handshake: the session never starts. Fix: {FIX_BOTH_ERAS}."
                    ),
                )
    return _initialize_finding(profile, snapshot, modern, client)


def _initialize_finding(
    profile: Profile, snapshot: Snapshot, modern: Mapping[str, Any], client: str
) -> Finding | None:
    h = profile.handshake
    assert h is not None
    version = profile.identity.protocol_version
    answers = (snapshot.eras or {}).get("handshake", {}).get("answers") or []
    answer = next(
        (a for a in answers if isinstance(a, dict) and a.get("requested") == version), None
    )
    if answer is None or answer.get("wireError"):
        return None  # not probed, or the probe failed on the wire: unknown
    error = answer.get("error")
    if error:
        supported = _supported(error) or modern.get("supportedVersions")
        named = f" and supports only {supported}" if supported else ""
        tried = (
            "falls back to initialize"
            if h.fallback == "discover-then-initialize"
            else "sends initialize"
        )
        return _finding(
            h,
            "handshake-refused",
            (
                f"{client} {tried} ({version}); the server refuses it ({_error(error)}){named}: the session never "
                f"starts. Fix: {FIX_BOTH_ERAS}."
            ),
        )
    negotiated = answer.get("protocolVersion")
    if negotiated not in h.accepts:
        return _finding(
            h,
            "version-rejected",
            (
                f"{client} asks for {version}; the server answers {negotiated!r}, and the client goes on only with "
                f"{', '.join(h.accepts)}: it disconnects. Fix: {FIX_ECHO}."
            ),
        )
    return None


def _finding(h: Any, code: str, message: str) -> Finding:
    return Finding(
        code=code,
        message=message,
        lost=True,
        blast_radius="session",
        behaviour="handshake",
        evidence=h.evidence,
    )


def _supported(error: Any) -> list | None:
    data = error.get("data") if isinstance(error, dict) else None
    supported = data.get("supported") if isinstance(data, dict) else None
    return supported if isinstance(supported, list) else None


def _modern_only(error: Any, supported: list | None) -> bool:
    return (
        isinstance(error, dict)
        and error.get("code") == -32022
        and bool(supported)
        and not any(v in HANDSHAKE_ERA for v in supported or ())
    )


def _error(error: Any) -> str:
    if not isinstance(error, dict):
        return "an error"
    return f"{error.get('code')} {str(error.get('message') or '')[:160]}".strip()


def session_views(
    views: list[ClientView], profiles: list[Profile], snapshot: Snapshot
) -> list[ClientView]:
    """``views`` with every tool ``session-broken`` for each client that never gets a session."""
    out = []
    for view, profile in zip(views, profiles):
        finding = session_finding(profile, snapshot)
        if finding is None:
            out.append(view)
            continue
        tools = tuple(
            replace(
                t,
                verdict="session-broken",
                model_name=None,
                model_schema=None,
                findings=(finding,),
                weakest_evidence=weakest(finding.evidence),
            )
            for t in view.tools
        )
        out.append(
            replace(  # the client never lists the tools: no tool has a prediction of its own
                view,
                outcome="session-broken",
                tools=tools,
                findings=view.findings + (finding,),
                culprits=(),
            )
        )
    return out
