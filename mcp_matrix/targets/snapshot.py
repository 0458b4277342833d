"""Snapshots: what a client learns on connect, stored as a versioned JSON document.

The document (``format: mcp-matrix.snapshot``, ``version: 2``; see docs/snapshot.md) keeps
every tool exactly as sent with its page index, the negotiated protocol, server info,
capabilities, instructions, notifications, stdout noise, problems and timings, and (from
version 2) ``eras``: which protocol eras the server answers (``mcp_matrix.targets.probes``) and ``era``,
the one the tools were listed in. Version 1 documents are still read (their eras are
unknown). A snapshot that could not be completed keeps what was gathered and says why in ``error``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from mcp_matrix import __version__
from mcp_matrix.core.errors import TOO_LONG_NUMBER, InputError, check_input_file, long_number_line
from mcp_matrix.core.schemas import checker
from mcp_matrix.targets.kinds import ServerKey, Target, server_key
from mcp_matrix.targets.probes import (
    HANDSHAKE_PROBES,
    Prober,
    answer_json,
    probe_handshake,
    probe_modern,
)
from mcp_matrix.wire.errors import ProtocolError, WireError
from mcp_matrix.wire.session import (
    LATEST_PROTOCOL,
    MODERN_PROTOCOL,
    Session,
    Timeouts,
    ToolListing,
    bounded,
)
from mcp_matrix.wire.transport import Transport

MODERN_PROBE = ("always", "if-refused")  # take_snapshot's ``modern``: when to probe 2026-07-28
NOT_PROBED = {
    "kind": "not-probed",
    "message": "not probed: no selected profile tries the 2026-07-28 era and no initialize was refused",
}
FORMAT = "mcp-matrix.snapshot"
VERSION = 2
READABLE_VERSIONS = (1, 2)
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

    @property
    def eras(self) -> Mapping[str, Any] | None:
        """Which eras the server answers (None for a version 1 snapshot: not probed)."""
        eras = self.doc.get("eras")
        return eras if isinstance(eras, dict) else None


@dataclass
class OpenSnapshot:
    """A snapshot whose main session is still open: ``session`` is None when it could not be kept
    (the handshake failed, or the tools were listed in the 2026-07-28 era). ``run`` makes its
    reference calls on it instead of starting another server; ``close`` ends it (twice is harmless)."""

    doc: dict
    session: Session | None = None
    transport: Transport | None = field(default=None, repr=False)

    def close(self) -> None:
        transport, self.session, self.transport = self.transport, None, None
        if transport is not None:
            transport.close()


def take_snapshot(
    target: Target,
    client_info: Mapping[str, Any] | None = None,
    protocol_version: str = LATEST_PROTOCOL,
    capabilities: Mapping[str, Any] | None = None,
    timeouts: Timeouts | None = None,
    page_cap: int = 100,
    probe_versions: tuple[str, ...] = HANDSHAKE_PROBES,
    probe_eras: bool = True,
    modern: str = "always",
) -> dict:
    """Connect to ``target`` as a client would and record everything it learns.

    The tools are listed after ``initialize`` at ``protocol_version``; a server that refuses
    the handshake is listed in the 2026-07-28 era instead. With ``probe_eras`` the other era
    and the other ``probe_versions`` are probed on connections of their own, side by side;
    ``modern="if-refused"`` probes the 2026-07-28 era only when an ``initialize`` was refused
    (the modern fallback, and the versions a refusal is reported with), else records it ``not-probed``."""
    return _snapshot(
        target,
        client_info,
        protocol_version,
        capabilities,
        timeouts,
        page_cap,
        probe_versions,
        probe_eras,
        modern,
        keep=False,
    ).doc


def open_snapshot(
    target: Target,
    timeouts: Timeouts | None = None,
    probe_versions: tuple[str, ...] = HANDSHAKE_PROBES,
    modern: str = "always",
) -> OpenSnapshot:
    """``take_snapshot`` (our own client info, the latest handshake version), with its main
    session left open when the tools were listed after ``initialize``: the caller closes it."""
    return _snapshot(
        target, None, LATEST_PROTOCOL, None, timeouts, 100, probe_versions, True, modern, keep=True
    )


# complexity: one session's life in one try/finally: refusal, wire errors, interrupts, then the era probes ended in order
def _snapshot(
    target: Target,
    client_info: Mapping[str, Any] | None,
    protocol_version: str,
    capabilities: Mapping[str, Any] | None,
    timeouts: Timeouts | None,
    page_cap: int,
    probe_versions: tuple[str, ...],
    probe_eras: bool,
    modern: str,
    keep: bool,
) -> OpenSnapshot:
    timeouts = timeouts or Timeouts()
    started = time.monotonic()
    doc = _new_doc(target, client_info, protocol_version, capabilities)
    if modern not in MODERN_PROBE:
        raise ValueError(f"modern must be one of {MODERN_PROBE}, not {modern!r}")
    prober = Prober(target, doc["client"], timeouts) if probe_eras else None

    def probe_modern_era() -> None:
        if prober is not None and "modern" not in prober.started:
            prober.start("modern", lambda s: probe_modern(s, page_cap))

    if modern == "always":
        probe_modern_era()
    if prober is not None:
        for version in dict.fromkeys(probe_versions):
            if version != protocol_version:
                prober.start(version, probe_handshake(version))
    transport = None
    session = None
    refused: dict | None = None
    interrupted = False
    kept: OpenSnapshot | None = None
    try:
        transport = target.transport(connect_timeout=timeouts.initialize)
        transport.start()  # inside the try: the finally below ends the server whatever happens
        session = Session(
            transport,
            client_info=doc["client"]["clientInfo"],
            protocol_version=protocol_version,
            capabilities=doc["client"]["capabilities"],
            timeouts=timeouts,
        )
        params = {
            "protocolVersion": protocol_version,
            "capabilities": doc["client"]["capabilities"],
            "clientInfo": doc["client"]["clientInfo"],
        }
        response = session.request("initialize", params, timeouts.initialize)
        refused = answer_json(protocol_version, response)
        if response.error is not None:
            probe_modern_era()  # the fallback: the tools are what a modern client lists
            raise ProtocolError(
                f"initialize was refused: {response.error.code} {response.error.message}",
                stderr_tail=transport.stderr_tail(),
            )
        result = response.result if isinstance(response.result, dict) else {}
        init = session.adopt_handshake(response, result.get("protocolVersion"))
        doc.update(
            protocolVersion=init.protocol_version,
            serverInfo=init.server_info,
            capabilities=init.capabilities,
            instructions=init.instructions,
        )
        doc["timings"]["initialize_ms"] = ms(init.elapsed)
        listing = session.list_tools(page_cap=page_cap)
        _record_listing(doc, listing)
        if keep:
            kept = OpenSnapshot(doc, session, transport)
    except WireError as exc:
        doc["error"] = exc.to_json()
        if refused is None:
            refused = answer_json(protocol_version, None, exc)
    except BaseException:
        if prober is not None:
            prober.close_all()
        raise
    finally:
        _record_traces(doc, session, transport)
        if transport is not None and kept is None:
            try:
                transport.close()
            except KeyboardInterrupt:  # delivered once the server is ended: keep what was learnt
                interrupted = True
            except Exception as exc:  # closing must never lose the snapshot
                doc["problems"].append({"kind": "close-failed", "message": str(exc)})
    if interrupted:  # the main session's snapshot is whole: keep it, end the probes
        _interrupted_with(doc, prober, started)
    if prober is not None:
        try:
            prober.join()
            if _any_refused(
                refused, prober.results
            ):  # a refusal is reported with modern's versions
                probe_modern_era()
                prober.join()
        except KeyboardInterrupt:  # the same while waiting for the probes: their eras stay unknown
            _close(kept)
            _interrupted_with(doc, prober, started)
        except BaseException:
            _close(kept)
            prober.close_all()
            raise
        results = dict(prober.results)
        if "modern" not in prober.started:
            results["modern"] = {"requested": MODERN_PROTOCOL, "wireError": dict(NOT_PROBED)}
        _record_eras(doc, refused, results, probe_versions, protocol_version)
    doc["timings"]["total_ms"] = ms(time.monotonic() - started)
    return kept or OpenSnapshot(doc)


def _new_doc(
    target: Target,
    client_info: Mapping[str, Any] | None,
    protocol_version: str,
    capabilities: Mapping[str, Any] | None,
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


def _record_listing(doc: dict[str, Any], listing: ToolListing) -> None:
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


def _record_traces(
    doc: dict[str, Any], session: Session | None, transport: Transport | None
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


def _any_refused(main: dict | None, results: Mapping[str, Any]) -> bool:
    """Was an ``initialize`` answered with a JSON-RPC error (the main one or a version probe)?"""
    answers = [main or {}, *(r for k, r in results.items() if k != "modern")]
    return any(isinstance(a, dict) and a.get("error") for a in answers)


def _close(kept: OpenSnapshot | None) -> None:
    """End a kept main session on the way out (an interrupt while the probes were awaited)."""
    if kept is not None:
        with contextlib.suppress(KeyboardInterrupt, Exception):  # we are stopping already
            kept.close()


def _interrupted_with(doc: dict, prober: Prober | None, started: float) -> NoReturn:
    """End the probes and raise ``SnapshotInterrupted`` carrying the finished main snapshot."""
    if prober is not None:
        try:
            prober.close_all()
        except KeyboardInterrupt:  # a second Ctrl-C: we are stopping already, the snapshot is kept
            pass
    doc["timings"]["total_ms"] = ms(time.monotonic() - started)
    raise SnapshotInterrupted(doc)


def _record_eras(
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


class SnapshotInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM arrived while the server was being closed: ``doc`` is the whole snapshot."""

    def __init__(self, doc: dict) -> None:
        super().__init__("interrupted while closing the server")
        self.doc = doc


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def write_snapshot(doc: Mapping[str, Any], path: str | Path) -> None:
    # A lone surrogate (valid JSON, "\ud800") is written as its escape, never a crash.
    Path(path).write_text(
        json.dumps(doc, indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
        errors="backslashreplace",
    )


def load_snapshot(path: str | Path) -> Snapshot:
    """Read and check a snapshot file; problems are InputErrors naming the file and key."""
    p = Path(path)
    check_input_file(p, "snapshot")
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read snapshot: {exc.strerror}", where=str(p)) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start}); expected a snapshot JSON file",
            where=str(p),
        ) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg} (column {exc.colno})", where=f"{p}:{exc.lineno}"
        ) from None
    except ValueError:  # an integer over mcp_matrix.INT_DIGITS digits
        raise InputError(TOO_LONG_NUMBER, where=f"{p}:{long_number_line(text) or 1}") from None
    except RecursionError:
        raise InputError("JSON nested too deeply to read", where=str(p)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f'not an mcp-matrix snapshot: expected "format": "{FORMAT}"', where=str(p))
    if doc.get("version") not in READABLE_VERSIONS:
        raise InputError(
            f"snapshot version {doc.get('version')!r} is not supported; expected one of "
            f"{', '.join(map(str, READABLE_VERSIONS))}",
            where=str(p),
        )
    tools = doc.get("tools")
    if not isinstance(tools, list):
        raise InputError("key 'tools' must be a list of {page, tool}", where=f"{p}: tools")
    for i, entry in enumerate(tools):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("page"), int)
            or "tool" not in entry
        ):
            raise InputError(
                "expected an object with an integer 'page' and a 'tool'", where=f"{p}: tools[{i}]"
            )
    # every key a reader uses, typed as snapshot.schema.json says (without its as-written v2 key list)
    problem = checker("snapshot", drop=("if", "then"))(doc)
    if problem is not None:
        raise InputError(problem.message, where=str(p))
    return Snapshot(doc, source=str(p))


def is_snapshot_file(arg: str) -> bool:
    return arg.endswith(".json") and Path(arg).is_file()
