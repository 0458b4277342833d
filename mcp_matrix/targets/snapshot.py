"""Snapshots: what a client learns on connect, stored as a versioned JSON document.

The document (``format: mcp-matrix.snapshot``, ``version: 2``; see docs/snapshot.md) keeps
every tool exactly as sent with its page index, the negotiated protocol, server info,
capabilities, instructions, notifications, stdout noise, problems and timings, and (from
version 2) ``eras``: which protocol eras the server answers (``mcp_matrix.targets.probes``) and ``era``,
the one the tools were listed in. Version 1 documents are still read (their eras are
unknown). A snapshot that could not be completed keeps what was gathered and says why in ``error``.

This module takes a snapshot (the main session and the era probes beside it); the document it
fills is ``snapshot_doc``'s, the file ``snapshot_file``'s (``Snapshot``, ``load_snapshot``,
``write_snapshot``, kept importable from here).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NoReturn

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.probes import (
    HANDSHAKE_PROBES,
    Prober,
    answer_json,
    probe_handshake,
    probe_modern,
)
from mcp_matrix.targets.snapshot_doc import (
    NOT_PROBED,
    any_refused,
    ms,
    new_doc,
    record_eras,
    record_listing,
    record_traces,
)
from mcp_matrix.targets.snapshot_file import (
    FORMAT,
    READABLE_VERSIONS,
    Snapshot,
    load_snapshot,
    write_snapshot,
)
from mcp_matrix.wire.errors import ProtocolError, WireError
from mcp_matrix.wire.session import LATEST_PROTOCOL, MODERN_PROTOCOL, Session, Timeouts
from mcp_matrix.wire.transport import Transport

# The names callers take from here: this module's own, and the file's.
__all__ = [
    "FORMAT",
    "MODERN_PROBE",
    "READABLE_VERSIONS",
    "OpenSnapshot",
    "Snapshot",
    "SnapshotInterrupted",
    "load_snapshot",
    "open_snapshot",
    "take_snapshot",
    "write_snapshot",
]

MODERN_PROBE = ("always", "if-refused")  # take_snapshot's ``modern``: when to probe 2026-07-28


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
    client_info: Mapping[str, JSON] | None = None,
    protocol_version: str = LATEST_PROTOCOL,
    capabilities: Mapping[str, JSON] | None = None,
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


def _snapshot(
    target: Target,
    client_info: Mapping[str, JSON] | None,
    protocol_version: str,
    capabilities: Mapping[str, JSON] | None,
    timeouts: Timeouts | None,
    page_cap: int,
    probe_versions: tuple[str, ...],
    probe_eras: bool,
    modern: str,
    keep: bool,
) -> OpenSnapshot:
    timeouts = timeouts or Timeouts()
    started = time.monotonic()
    doc = new_doc(target, client_info, protocol_version, capabilities)
    if modern not in MODERN_PROBE:
        raise ValueError(f"modern must be one of {MODERN_PROBE}, not {modern!r}")
    prober = Prober(target, doc["client"], timeouts) if probe_eras else None
    if modern == "always":
        _probe_modern_era(prober, page_cap)
    if prober is not None:
        for version in dict.fromkeys(probe_versions):
            if version != protocol_version:
                prober.start(version, probe_handshake(version))
    main = _MainSession(target, doc, protocol_version, timeouts, prober, page_cap)
    main.take(keep)
    if main.interrupted:  # the main session's snapshot is whole: keep it, end the probes
        _interrupted_with(doc, prober, started)
    if prober is not None:
        _await_probes(doc, prober, main, started, probe_versions, protocol_version)
    doc["timings"]["total_ms"] = ms(time.monotonic() - started)
    return main.kept or OpenSnapshot(doc)


def _probe_modern_era(prober: Prober | None, page_cap: int) -> None:
    """Start the 2026-07-28 probe, once."""
    if prober is not None and "modern" not in prober.started:
        prober.start("modern", lambda s: probe_modern(s, page_cap))


@dataclass
class _MainSession:
    """The snapshot's own connection: ``initialize`` at the requested version, then the tools."""

    target: Target
    doc: dict
    protocol_version: str
    timeouts: Timeouts
    prober: Prober | None
    page_cap: int
    refused: dict | None = None  # the initialize answer as the eras record it
    interrupted: bool = False  # Ctrl-C arrived while the server was being closed
    kept: OpenSnapshot | None = None

    def take(self, keep: bool) -> None:
        """Connect, list the tools into the document, and close (unless ``keep``); a wire error
        is recorded, anything else ends the probes and is raised."""
        doc, timeouts, version = self.doc, self.timeouts, self.protocol_version
        transport = None
        session = None
        try:
            transport = self.target.transport(connect_timeout=timeouts.initialize)
            transport.start()  # inside the try: the finally below ends the server whatever happens
            session = Session(
                transport,
                client_info=doc["client"]["clientInfo"],
                protocol_version=version,
                capabilities=doc["client"]["capabilities"],
                timeouts=timeouts,
            )
            self._initialize(session, transport)
            record_listing(doc, session.list_tools(page_cap=self.page_cap))
            if keep:
                self.kept = OpenSnapshot(doc, session, transport)
        except WireError as exc:
            doc["error"] = exc.to_json()
            if self.refused is None:
                self.refused = answer_json(version, None, exc)
        except BaseException:
            if self.prober is not None:
                self.prober.close_all()
            raise
        finally:
            record_traces(doc, session, transport)
            if transport is not None and self.kept is None:
                self._close(transport)

    def _initialize(self, session: Session, transport: Transport) -> None:
        """``initialize`` as the snapshot's client; a refusal starts the modern probe and raises."""
        doc, version = self.doc, self.protocol_version
        params = {
            "protocolVersion": version,
            "capabilities": doc["client"]["capabilities"],
            "clientInfo": doc["client"]["clientInfo"],
        }
        response = session.request("initialize", params, self.timeouts.initialize)
        self.refused = answer_json(version, response)
        if response.error is not None:
            _probe_modern_era(
                self.prober, self.page_cap
            )  # the fallback: what a modern client lists
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

    def _close(self, transport: Transport) -> None:
        try:
            transport.close()
        except KeyboardInterrupt:  # delivered once the server is ended: keep what was learnt
            self.interrupted = True
        except Exception as exc:  # closing must never lose the snapshot
            self.doc["problems"].append({"kind": "close-failed", "message": str(exc)})


def _await_probes(
    doc: dict,
    prober: Prober,
    main: _MainSession,
    started: float,
    versions: tuple[str, ...],
    requested: str,
) -> None:
    """Wait for the era probes (a refusal is reported with modern's versions) and record them."""
    try:
        prober.join()
        if any_refused(main.refused, prober.results):
            _probe_modern_era(prober, main.page_cap)
            prober.join()
    except KeyboardInterrupt:  # the same while waiting for the probes: their eras stay unknown
        _close(main.kept)
        _interrupted_with(doc, prober, started)
    except BaseException:
        _close(main.kept)
        prober.close_all()
        raise
    results = dict(prober.results)
    if "modern" not in prober.started:
        results["modern"] = {"requested": MODERN_PROTOCOL, "wireError": dict(NOT_PROBED)}
    record_eras(doc, main.refused, results, versions, requested)


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


class SnapshotInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM arrived while the server was being closed: ``doc`` is the whole snapshot."""

    def __init__(self, doc: dict) -> None:
        super().__init__("interrupted while closing the server")
        self.doc = doc
