"""The results stream: JSON lines, one event or shared entry per line, appended as they are made.

Writers read this (a finished, interrupted or merged run alike). Format
``mcp-matrix.results`` version 3, documented in docs/results.md: every distinct value a
discovery cell holds (a schema node, a name, a finding, its kind and evidence, the cell's row
but its profile) is written once, as an entry line before the first line that names it
(mcp_matrix.run.results_tables), each discovery event as a ``cell`` line naming its row and
each call event as a ``called`` line naming its outcome (a call but its profile):
a 5,000-tool server through 36 profiles is 23.7 MB, not version 2's 236 MB. Reading gives every
event back whole, so readers see the same events from version 1, 2 and 3 files. Secrets carried
by the target are scrubbed from every line before it is written. Every event read is checked
against the published schema (mcp_matrix.core.events,
``mcp_matrix/core/schemas/results.schema.json``), each shared entry once, where it is defined:
a missing or mistyped key is an input error naming the file, the line and the key.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from mcp_matrix.core.content_table import ContentTable
from mcp_matrix.core.errors import TOO_LONG_NUMBER, InputError
from mcp_matrix.core.events import (
    FORMAT,
    READABLE,
    VERSION,
    CallCell,
    Cell,
    DiscoveryCell,
    Event,
    EventError,
    RunStarted,
    SnapshotTaken,
    as_json,
    build_event,
    check_event,
    typed_event,
)
from mcp_matrix.core.infiles import UnwritableNumber, line_text, open_input_bytes, strict_json
from mcp_matrix.core.json_record import Memo
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.run.results_tables import WIRE_ONLY, EntryError, TableReader, Tables
from mcp_matrix.targets.kinds import scrub_json


class ResultsWriter:
    """Thread-safe JSON-lines sink; flushes every event so an interrupt loses nothing."""

    def __init__(
        self,
        stream: IO[str] | None,
        secrets: Iterable[str] = (),
        also: Callable[[dict], None] | None = None,
        version: int = VERSION,
    ):
        """``typed`` keeps every event written as a typed event (what the writers read), ``events``
        the same as JSON (what was written), both with the secrets masked. ``version``: the
        format written (2 only to compare with version 3; a ``run-started`` event says it)."""
        if version not in (2, VERSION):
            raise ValueError(f"ResultsWriter writes version 2 or {VERSION}, not {version!r}")
        self.stream = stream
        self.version = version
        self._tables = Tables()
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.also = also
        self.events: list[dict] = []
        self.typed: list[Event] = []
        self._lock = threading.Lock()
        self._schemas = ContentTable()

    def scrub(self, text: str) -> str:
        """JSON text with the secrets masked inside its strings (never inside numbers or literals),
        but a string that is a word of the format whole (a secret ``text`` leaves
        ``{"text": ...}`` readable: mcp_matrix.core.text.redact_json)."""
        return scrub_json(text, self.secrets)

    def __call__(self, event: Event | dict) -> None:
        typed = typed_event(event)
        if isinstance(typed, RunStarted) and typed.version != self.version:
            typed = event = replace(typed, version=self.version)  # the version its lines are in
        written = typed  # its lines are scrubbed as text: the run's own objects, shared
        event = as_json(event)
        clean = event
        if self.secrets:
            clean = json.loads(self.scrub(json.dumps(event, ensure_ascii=False, default=str)))
            typed = build_event(clean)  # the same keys, secrets masked inside strings
        with self._lock:
            self.events.append(clean)
            self.typed.append(typed)
            if self.stream is not None:
                lines = self._lines(event) if self.version == 2 else self._lines_v3(written, event)
                text = "".join(line + "\n" for line in lines)
                # one scrub for the event's lines (no JSON string spans two), none without secrets
                self.stream.write(self.scrub(text) if self.secrets else text)
                self.stream.flush()
        if self.also is not None:
            self.also(clean)

    def _lines_v3(self, typed: Event, event: dict) -> list[str]:
        """The event as version 3 writes it: a discovery cell by reference to its shared
        entries (mcp_matrix.run.results_tables), after the lines of the entries it is the first
        to name; any other event whole, compact."""
        if isinstance(typed, DiscoveryCell):
            return self._tables.cell(typed)
        if isinstance(typed, CallCell):
            return self._tables.call(typed)
        if isinstance(typed, SnapshotTaken):
            return self._tables.snapshot(event)
        if isinstance(typed, RunStarted):
            self._tables = Tables()  # a run's numbering starts at its run-started line
        return [_ENCODER.encode(event)]

    def _lines(self, event: dict) -> list[str]:
        """The event as written: a discovery event's schema by reference, after the schema's
        own line the first time it is seen."""
        schema = event.get("model_schema") if event.get("event") == "discovery" else None
        if schema is None:
            return [json.dumps(event, ensure_ascii=False, default=str)]
        known = len(self._schemas)
        number = self._schemas.ref(schema)
        wire = {k: v for k, v in event.items() if k != "model_schema"}
        wire["model_schema_ref"] = number
        out = [json.dumps(wire, ensure_ascii=False, default=str)]
        if number == known:
            out.insert(
                0, f'{{"event": "schema", "id": {number}, "schema": {self._schemas.texts[number]}}}'
            )
        return out


def read_events(path: str | Path) -> list[dict]:
    """Every event of a results file as JSON (to rewrite or inspect the stream; the writers read
    ``read_typed``); a truncated last line (an interrupted run) is ignored."""
    return list(iter_events(path))


def iter_events(path: str | Path) -> Iterator[dict]:
    """Every event of a results file as JSON, read a line at a time (a 5,000-tool run is 100s
    of MB: the file is never held whole). Equal findings (and lists of them) come back as one
    shared object: a finding repeated on every tool of a profile is held once, not 5,000 times."""
    p = Path(path)
    handle = open_input_bytes(p, "results file", "cannot read results")
    schemas = _Version2Schemas()
    shared: dict[int, JSON] = {}
    checked: dict[int, JSON] = {}  # findings lists a line was checked with, by id (held)
    tables = TableReader()  # version 3's entries
    number = 0
    with handle:
        for number, raw in enumerate(handle, 1):
            line = line_text(raw, number, p, "JSON lines")
            if line is None:
                return  # cut inside a character: an interrupted last line
            event = _event(p, number, line, schemas, shared, checked, tables)
            if event is _END and number == 1:
                raise InputError(
                    "the results file's only line is cut short (its run was interrupted as it "
                    "began); expected JSON lines starting with a run-started event",
                    where=f"{p}:1",
                )
            if event is _END:
                return  # the run was interrupted mid-write: keep everything before
            if event is not None:
                yield event
    if number == 0:
        raise InputError(
            "the results file is empty; expected JSON lines starting with a run-started event",
            where=str(p),
        )


_END: object = object()
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def _event(
    p: Path,
    number: int,
    line: str,
    schemas: _Version2Schemas,
    shared: dict[int, JSON],
    checked: dict[int, JSON],
    tables: TableReader,
) -> Any:
    """One line's event, checked (None for a blank, schema or entry line, ``_END`` for a cut
    last line); a findings list equal to one already checked is not checked again, a version-3
    entry is checked once, where it is defined."""
    if not line.strip():
        return None
    event = _parsed(p, number, line)
    if event is _END:
        return _END
    if tables.version >= 3 and isinstance(event, dict) and "event" not in event and number > 1:
        try:
            return tables.read(event)  # an entry, checked once, here; or a cell, by its entries
        except (EntryError, ValueError) as exc:  # ValueError: a node naming no earlier node
            raise InputError(str(exc), where=f"{p}:{number}") from None
    if not isinstance(event, dict) or "event" not in event:
        raise InputError(_not_an_event(event, number, tables.version), where=f"{p}:{number}")
    if number == 1:
        _check_first(p, event)
    if event["event"] == "run-started":
        schemas.run_line = number
        tables.reset()  # each run's entries are numbered from its run-started line
        if event.get("version") in READABLE:  # its own (files joined end to end); else the check's
            tables.version = event["version"]
    elif event["event"] == "snapshot":
        event = _snapshot(p, number, event, tables)
    if _version_2_schema(p, number, event, schemas, tables.version):
        return None
    findings = event.get("findings")
    known = None
    if findings and isinstance(findings, list):
        event["findings"] = known = _shared(findings, shared)
        if known is findings:  # a list not seen before: its findings may have been
            findings[:] = [_shared(f, shared) for f in findings]
    try:
        if known is not None and id(known) in checked:  # equal to a list checked before
            check_event({**event, "findings": []})
        else:
            check_event(event)
            if known is not None:  # checked once: a line repeating it checks the rest alone
                checked[id(known)] = known  # held here: its id stays its own
    except EventError as exc:
        raise InputError(str(exc), where=f"{p}:{number}") from None
    for key in _NAMES:  # a few names repeated on every line: one string each
        if isinstance(event.get(key), str):
            event[key] = sys.intern(event[key])
    return event


_NAMES = ("event", "profile", "verdict", "weakest_evidence")


class _Version2Schemas:
    """Version 2's ``schema`` lines, by id, with the line that defined each.

    Every version-2 writer numbered its schemas from 0 and defined each id once, before the
    first line naming it (``run``, the pytest plugin, and ``merge``, which rewrote every run it
    joined through one writer, so a later run may name a schema an earlier one defined). Files
    joined end to end define the same ids again, a run each: the latest definition names the
    lines after it. An id defined again in the same run was written by no release: the same
    schema again changes nothing; a different one is an input error naming both lines."""

    def __init__(self) -> None:
        self.by_id: dict[int, tuple[JSON, int]] = {}
        self.run_line = 0  # the line of the last run-started event

    def define(self, p: Path, number: int, event: dict) -> None:
        ident = event.get("id")
        if not isinstance(ident, int) or isinstance(ident, bool):
            raise InputError("a schema event needs an integer 'id'", where=f"{p}:{number}")
        schema, known = event.get("schema"), self.by_id.get(ident)
        if known is not None and known[1] > self.run_line and known[0] != schema:
            raise InputError(
                f"schema id {ident} is defined again with a different schema (first at line "
                f"{known[1]}); expected each id once a run",
                where=f"{p}:{number}",
            )
        self.by_id[ident] = (schema, number)

    def named(self, p: Path, number: int, ref: object) -> JSON:
        if isinstance(ref, bool) or not isinstance(ref, int) or ref not in self.by_id:
            raise InputError(
                f"model_schema_ref {ref!r} names no schema event before it",
                where=f"{p}:{number}",
            )
        return self.by_id[ref][0]


def _not_an_event(line: object, number: int, version: int) -> str:
    """What a line without an ``event`` key is said to be: a version-3 entry line in a run of
    another version says so."""
    label = next(iter(line), None) if isinstance(line, dict) and len(line) == 1 else None
    if label in WIRE_ONLY and number > 1:
        return (
            f"a {label!r} line is one only version 3 writes; this run is version {version} "
            "(its run-started line says so)"
        )
    return "expected an object with an 'event' key"


def _snapshot(p: Path, number: int, event: dict, tables: TableReader) -> dict:
    """A snapshot event with its tools' schemas in place (version 3 names them by node)."""
    if tables.version < 3:
        if "nodes" in event:
            raise InputError(
                f"a snapshot whose schemas are node numbers ('nodes') is version 3's; this run "
                f"is version {tables.version} (its run-started line says so)",
                where=f"{p}:{number}",
            )
        return event
    try:
        return tables.snapshot(event)
    except ValueError as exc:  # a tool's inputSchema that names no node
        raise InputError(str(exc), where=f"{p}:{number}") from None


def _version_2_schema(
    p: Path, number: int, event: dict, schemas: _Version2Schemas, version: int
) -> bool:
    """Version 2's schemas by reference: True for a ``schema`` line (kept in ``schemas``); a
    discovery event's ``model_schema_ref`` is replaced by the schema it names."""
    if event["event"] == "schema":
        if version != 2:
            raise InputError(
                f"a schema event is a line only version 2 writes; this run is version {version}",
                where=f"{p}:{number}",
            )
        schemas.define(p, number, event)
        return True
    if "model_schema_ref" in event:
        event["model_schema"] = schemas.named(p, number, event.pop("model_schema_ref"))
    return False


def _parsed(p: Path, number: int, line: str) -> Any:
    """The line's JSON value (``_END`` for a last line cut short), or an input error."""
    try:
        return strict_json(line)
    except UnwritableNumber as exc:
        raise InputError(str(exc), where=f"{p}:{number}") from None
    except json.JSONDecodeError as exc:
        if not line.endswith("\n"):  # only the last line lacks its newline
            return _END
        raise InputError(f"not a JSON object: {exc.msg}", where=f"{p}:{number}") from None
    except ValueError:  # an integer over mcp_matrix.INT_DIGITS digits
        raise InputError(TOO_LONG_NUMBER, where=f"{p}:{number}") from None
    except RecursionError:
        raise InputError(
            "JSON nested too deeply to read; expected one event object a line",
            where=f"{p}:{number}",
        ) from None


def _check_first(p: Path, event: dict) -> None:
    """The first line opens a run of a format and version this reader knows."""
    if event.get("event") != "run-started" or event.get("format") != FORMAT:
        raise InputError(
            f"not an mcp-matrix results file: the first line must be a run-started event of format {FORMAT!r}",
            where=f"{p}:1",
        )
    if event.get("version") not in READABLE:
        raise InputError(
            f"results version {event.get('version')!r} is not supported; expected one of "
            f"{list(READABLE)}",
            where=f"{p}:1",
        )


def _shared(value: JSON, seen: dict[int, JSON]) -> JSON:
    """``value``, or the equal value read before it: one object for values repeated on many
    lines. Keyed by the hash of its JSON text, checked for equality (a collision keeps both)."""
    key = hash((type(value).__name__, _ENCODER.encode(value)))
    known = seen.get(key)
    if known is not None and known == value:
        return known
    seen.setdefault(key, value)
    return value


def read_typed(path: str | Path) -> list[Event]:
    """Every event of a results file as typed values (mcp_matrix.core.events): what the writers and the
    checklist read. Each line is checked once, as it is read, and typed once."""
    memo: Memo = {}  # a finding the reader shares across lines is one typed value too
    return [build_event(e, memo) for e in iter_events(path)]


def cells(events: Iterable[Event | dict[str, JSON]]) -> list[Cell]:
    """Discovery and call events as typed cells: the cells of the grid."""
    return [e for e in map(typed_event, events) if isinstance(e, (DiscoveryCell, CallCell))]


__all__ = [
    "FORMAT",
    "READABLE",
    "VERSION",
    "ResultsWriter",
    "cells",
    "iter_events",
    "read_events",
    "read_typed",
]
