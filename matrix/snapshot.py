"""Snapshots: what a client learns on connect, stored as a versioned JSON document.

The document (``format: mcp-matrix.snapshot``, ``version: 1``; see docs/snapshot.md) keeps
every tool exactly as sent with its page index, the negotiated protocol, server info,
capabilities, instructions, notifications, stdout noise, problems and timings. A snapshot
that could not be completed keeps what was gathered and says why in ``error``.
"""

from __future__ import annotations

import datetime as _dt
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from matrix import __version__
from matrix.errors import InputError
from matrix.targets import ServerKey, Target, server_key
from matrix.wire.errors import WireError
from matrix.wire.session import LATEST_PROTOCOL, Session, Timeouts

FORMAT = "mcp-matrix.snapshot"
VERSION = 1
DEFAULT_CLIENT_INFO = {"name": "mcp-matrix", "version": __version__}


@dataclass(frozen=True)
class Snapshot:
    """A loaded snapshot document (read-only view over the JSON)."""

    doc: Mapping[str, Any]
    source: str = ""

    @property
    def tools(self) -> list[tuple[int, Any]]:
        return [(entry["page"], entry["tool"]) for entry in self.doc.get("tools", [])]

    @property
    def server_name(self) -> str:
        return self.server_key.name

    @property
    def server_key(self) -> ServerKey:
        """The server's config key (``--name``, or the slug a user would type; see targets.server_key)."""
        return server_key(self.doc.get("target"), self.doc.get("serverInfo"))

    @property
    def error(self) -> Any:
        return self.doc.get("error")


def take_snapshot(
    target: Target,
    client_info: Mapping[str, Any] | None = None,
    protocol_version: str = LATEST_PROTOCOL,
    capabilities: Mapping[str, Any] | None = None,
    timeouts: Timeouts | None = None,
    page_cap: int = 100,
) -> dict:
    """Connect to ``target`` as a client would and record everything it learns."""
    timeouts = timeouts or Timeouts()
    started = time.monotonic()
    doc: dict[str, Any] = {
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
        "error": None,
    }
    transport = None
    session = None
    try:
        transport = target.transport(connect_timeout=timeouts.initialize)
        transport.start()  # inside the try: the finally below ends the server whatever happens
        session = Session(
            transport, client_info=doc["client"]["clientInfo"], protocol_version=protocol_version,
            capabilities=doc["client"]["capabilities"], timeouts=timeouts,
        )
        init = session.initialize()
        doc.update(
            protocolVersion=init.protocol_version, serverInfo=init.server_info,
            capabilities=init.capabilities, instructions=init.instructions,
        )
        doc["timings"]["initialize_ms"] = ms(init.elapsed)
        listing = session.list_tools(page_cap=page_cap)
        doc["pages"] = [
            {"index": p.index, "cursor": p.cursor, "nextCursor": p.next_cursor, "count": len(p.tools),
             "elapsed_ms": ms(p.elapsed)}
            for p in listing.pages
        ]
        doc["tools"] = [{"page": page, "tool": tool} for page, tool in listing.tools]
        doc["listError"] = listing.error.to_json() if listing.error else None
        doc["listStopped"] = listing.stopped
        doc["timings"]["tools_list_ms"] = ms(sum(p.elapsed for p in listing.pages))
    except WireError as exc:
        doc["error"] = exc.to_json()
    finally:
        if session is not None:
            doc["notifications"] = session.notifications
            doc["serverRequests"] = session.server_requests
            doc["problems"] = session.problems.items
        if transport is not None:
            doc["stdoutNoise"] = [n.to_json() for n in transport.noise]
            doc["stderrTail"] = list(transport.stderr_tail())
            try:
                transport.close()
            except Exception as exc:  # closing must never lose the snapshot
                doc["problems"].append({"kind": "close-failed", "message": str(exc)})
        doc["timings"]["total_ms"] = ms(time.monotonic() - started)
    return doc


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def write_snapshot(doc: Mapping[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def load_snapshot(path: str | Path) -> Snapshot:
    """Read and check a snapshot file; problems are InputErrors naming the file and key."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read snapshot: {exc.strerror}", where=str(p)) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} (column {exc.colno})", where=f"{p}:{exc.lineno}") from None
    except RecursionError:
        raise InputError("JSON nested too deeply to read", where=str(p)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"not an mcp-matrix snapshot: expected \"format\": \"{FORMAT}\"", where=str(p))
    if doc.get("version") != VERSION:
        raise InputError(f"snapshot version {doc.get('version')!r} is not supported; expected {VERSION}", where=str(p))
    tools = doc.get("tools")
    if not isinstance(tools, list):
        raise InputError("key 'tools' must be a list of {page, tool}", where=f"{p}: tools")
    for i, entry in enumerate(tools):
        if not isinstance(entry, dict) or not isinstance(entry.get("page"), int) or "tool" not in entry:
            raise InputError("expected an object with an integer 'page' and a 'tool'", where=f"{p}: tools[{i}]")
    return Snapshot(doc, source=str(p))


def is_snapshot_file(arg: str) -> bool:
    return arg.endswith(".json") and Path(arg).is_file()
