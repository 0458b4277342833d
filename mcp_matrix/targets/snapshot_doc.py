"""The snapshot document as one connection fills it: every key before the server is asked
anything, then the tool list, what the session and the transport heard, and the eras the probes
found (a server that refused the handshake but answers 2026-07-28 is listed modern)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

from mcp_matrix import __version__
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.snapshot_file import FORMAT, VERSION
from mcp_matrix.wire.answers import ToolListing
from mcp_matrix.wire.echo import bounded
from mcp_matrix.wire.session import Session
from mcp_matrix.wire.transport import Transport

DEFAULT_CLIENT_INFO = {"name": "mcp-matrix", "version": __version__}
NOT_PROBED = {
    "kind": "not-probed",
    "message": "not probed: no selected profile tries the 2026-07-28 era and no initialize was refused",
}


def new_doc(
    target: Target,
    client_info: Mapping[str, JSON] | None,
    protocol_version: str,
    capabilities: Mapping[str, JSON] | None,
) -> dict[str, Any]:
    """A snapshot document before the server is asked anything: every key, nothing learnt."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "mcp_matrix": __version__,
        "taken_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "target": target.describe(),
        "client": {
            "clientInfo": dict(client_info or DEFAULT_CLIENT_INFO),
            "protocolVersion": protocol_version,
            "capabilities": dict(capabilities or {}),
        },
        "era": "handshake",
        "protocolVersion": None,
        "serverInfo": None,
        "capabilities": None,
        "instructions": None,
        "pages": [],
        "tools": [],
        "listError": None,
        "listStopped": "",
        "notifications": [],
        "serverRequests": [],
        "stdoutNoise": [],
        "problems": [],
        "stderrTail": [],
        "timings": {},
        "eras": None,
        "error": None,
    }


def record_listing(doc: dict[str, Any], listing: ToolListing) -> None:
    """Write a ``tools/list`` walk (its pages, tools, error and time) into the document."""
    doc["pages"] = [
        {
            "index": p.index,
            "cursor": bounded(p.cursor),
            "nextCursor": bounded(p.next_cursor),
            "count": len(p.tools),
            "elapsed_ms": ms(p.elapsed),
        }
        for p in listing.pages
    ]
    doc["tools"] = [{"page": page, "tool": tool} for page, tool in listing.tools]
    doc["listError"] = listing.error.to_json() if listing.error else None
    doc["listStopped"] = listing.stopped
    doc["timings"]["tools_list_ms"] = ms(sum(p.elapsed for p in listing.pages))


def record_traces(
    doc: dict[str, JSON], session: Session | None, transport: Transport | None
) -> None:
    """Copy what the session and the transport heard into the document (copies: a session kept
    open by ``open_snapshot`` goes on hearing, after the snapshot)."""
    if session is not None:
        doc["notifications"] = list(session.notifications)
        doc["serverRequests"] = list(session.server_requests)
        doc["problems"] = list(session.problems.items)
    if transport is not None:
        doc["stdoutNoise"] = [n.to_json() for n in transport.noise]
        doc["stderrTail"] = list(transport.stderr_tail())


def any_refused(main: dict | None, results: Mapping[str, JSON]) -> bool:
    """Was an ``initialize`` answered with a JSON-RPC error (the main one or a version probe)?"""
    answers = [main or {}, *(r for k, r in results.items() if k != "modern")]
    return any(isinstance(a, dict) and a.get("error") for a in answers)


def record_eras(
    doc: dict,
    main: dict | None,
    results: Mapping[str, Any],
    versions: tuple[str, ...],
    requested: str,
) -> None:
    """Fill ``eras``; a server that refused the handshake but answers 2026-07-28 is listed modern."""
    answers = [main] if main else []
    # a probe that failed on the wire comes back as {"wireError": ...}: give it the answer's shape
    blank = {"protocolVersion": None, "error": None, "wireError": None}
    answers += [
        {"requested": v, **blank, **results[v]}
        for v in dict.fromkeys(versions)
        if v != requested and v in results
    ]
    modern = results.get("modern") or {}
    doc["eras"] = {"handshake": {"answers": answers}, "modern": modern}
    if (
        doc["error"] is None
        or not isinstance(modern.get("tools"), list)
        or (main or {}).get("wireError")
    ):
        return
    # The handshake was refused (a JSON-RPC error): the tools are what a modern client lists.
    doc["eras"]["handshake"]["refusal"] = doc["error"]
    doc.update(
        era="modern",
        error=None,
        protocolVersion=modern.get("requested"),
        serverInfo=modern.get("serverInfo"),
        capabilities=modern.get("capabilities"),
        instructions=modern.get("instructions"),
        tools=modern["tools"],
        pages=modern.get("pages", []),
        listError=modern.get("listError"),
    )


def ms(seconds: float) -> float:
    """Seconds as the document's milliseconds (one decimal)."""
    return round(seconds * 1000, 1)
