"""The results stream's events as typed values, one frozen dataclass per kind (docs/results.md).

Producers (``run``, ``discover``) build these and the results writer turns them into JSON
lines with ``to_json()``; readers get them back with ``event_from_json``, which checks each
event against the published schema (``mcp_matrix/core/schemas/results.schema.json``) first, so a
missing or mistyped key is one ``EventError`` naming the key, never a KeyError deep in a
writer. Writing and reading are generic (one key order, one reader for every kind); the
writers and the checklist take these typed values. The values inside them (findings, mutations,
evidence, violations, variants, listed profiles: ``mcp_matrix.core.event_values``) are frozen
values too, read and written by the same generic code (``mcp_matrix.core.json_record``); the
snapshot, schemas, the answer summary and the target stay JSON (typed
``JSON``: they are documents of their own or free-form).

Keys a file from an older version may lack have defaults here and in the schema; the keys
without a default are the ones no reader can do without (a cell's profile, tool and verdict).
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from mcp_matrix.core.event_values import (
    CellEvidence,
    CellFinding,
    CellMutation,
    CellVariant,
    CellViolation,
    ListedProfile,
)
from mcp_matrix.core.json_record import OMIT, JsonRecord, Memo
from mcp_matrix.core.jsontypes import JSON, JSONObject
from mcp_matrix.core.model import ToolView
from mcp_matrix.core.schemas import checker

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self is Python 3.11

FORMAT = "mcp-matrix.results"
VERSION = 3
READABLE = (1, 2, 3)


class EventError(ValueError):
    """An event that does not follow the results schema: ``key`` names the offending key."""

    def __init__(self, kind: str, key: str, message: str) -> None:
        self.kind, self.key, self.message = kind, key, message
        super().__init__(f"{kind} event: {message}")


@dataclass(frozen=True, slots=True)
class EventRecord(JsonRecord):
    """One line of a stream of events: its kind (``KIND``, the ``event`` key) and its schema."""

    KIND: ClassVar[str] = ""
    # Keys written first, in this order (the key order of the version-1 stream); then the
    # other fields in declaration order. A field with ``OMIT`` is left out while it is None.

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Self:
        """The typed event; EventError when ``data`` does not follow this kind's schema."""
        if data.get("event") != cls.KIND:
            raise EventError(
                cls.KIND, "event", f"expected 'event': {cls.KIND!r}, got {data.get('event')!r}"
            )
        cls._check(data)
        return cls.build(data)

    @classmethod
    def _check(cls, data: Mapping[str, JSON]) -> None:
        """Check ``data`` against this stream's schema (replay's events have their own)."""
        check_event(data)


@dataclass(frozen=True, slots=True)
class RunStarted(EventRecord):
    """The first line: what was run, against what, through which profiles."""

    KIND: ClassVar[str] = "run-started"
    format: str = FORMAT
    version: int = VERSION
    run_id: str | None = None
    started_at: str | None = None
    mcp_matrix: str | None = None
    target: JSONObject | None = None  # masked (mcp_matrix.targets.kinds)
    server: JSONObject | None = None  # serverInfo as sent
    server_key: JSONObject | None = None
    protocolVersion: str | None = None  # the key of the JSON document
    cases: str | None = ""
    baseline: str | None = None
    profiles: tuple[ListedProfile, ...] = ()


@dataclass(frozen=True, slots=True)
class SnapshotTaken(EventRecord):
    """The snapshot document the run measured (``{}`` when the target was never reached)."""

    KIND: ClassVar[str] = "snapshot"
    snapshot: JSONObject


@dataclass(frozen=True, slots=True)
class SchemaStored(EventRecord):
    """Version 2 wire form only: a model-facing schema stored once (mcp_matrix.run.results resolves it)."""

    KIND: ClassVar[str] = "schema"
    id: int
    schema: JSON


@dataclass(frozen=True, slots=True)
class DiscoveryCell(EventRecord):
    """The (profile, tool) cell: what one client does with one tool."""

    KIND: ClassVar[str] = "discovery"
    HEAD: ClassVar[tuple[str, ...]] = ("profile", "tool", "index", "verdict")
    profile: str
    tool: str
    verdict: str
    index: int | None = None
    model_name: str | None = None
    model_schema: JSON = None
    findings: tuple[CellFinding, ...] = ()
    weakest_evidence: str | None = None

    @classmethod
    def of(cls, profile: str, view: ToolView) -> DiscoveryCell:
        return cls(
            profile=profile,
            tool=view.tool,
            verdict=view.verdict,
            index=view.index,
            model_name=view.model_name,
            model_schema=view.model_schema,
            findings=tuple(CellFinding.of(f) for f in view.findings),
            weakest_evidence=view.weakest_evidence,
        )


@dataclass(frozen=True, slots=True)
class Skipped(EventRecord):
    """A call not made, and why; ``profile`` is set when only that profile's call was not made."""

    KIND: ClassVar[str] = "skipped"
    HEAD: ClassVar[tuple[str, ...]] = ("profile", "tool", "case", "reason")
    tool: str
    reason: str
    case: str | None = None
    profile: str | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True, slots=True)
class CallCell(EventRecord):
    """The (profile, tool, case) cell: what one client's call did at the server."""

    KIND: ClassVar[str] = "call"
    HEAD: ClassVar[tuple[str, ...]] = ("profile", "tool", "case", "origin", "expect")
    profile: str
    tool: str
    case: str
    verdict: str
    origin: str = "file"
    expect: str = "success"
    reason: str = ""
    mutations: tuple[CellMutation, ...] = ()
    answer: JSON = None  # a summary of the server's answer (run.classify.Answer.summary)
    behaviours: tuple[str, ...] = ()
    evidence: tuple[CellEvidence, ...] = ()
    weakest_evidence: str | None = None
    sometimes: tuple[str, ...] = ()
    stale: bool = False
    stale_for: str | None = field(default=None, metadata=OMIT)
    violations: tuple[CellViolation, ...] | None = field(
        default=None, metadata=OMIT
    )  # why the listed schema refuses it
    notes: tuple[str, ...] | None = field(default=None, metadata=OMIT)
    variants: tuple[CellVariant, ...] | None = field(default=None, metadata=OMIT)
    frequency: str | None = field(default=None, metadata=OMIT)
    answer_from: str | None = field(
        default=None, metadata=OMIT
    )  # run --share calls: whose answer this is

    @classmethod
    def of(cls, event: Mapping[str, JSON]) -> CallCell:
        """The call pipeline's cell: each of its keys must be a field here (and in the schema)."""
        return cls.build(event, strict=True)


@dataclass(frozen=True, slots=True)
class Sharing(EventRecord):
    """Which profiles shared a session and whether read-only calls were shared (mcp_matrix.run.sharing)."""

    KIND: ClassVar[str] = "sharing"
    mode: str
    sessions: tuple[tuple[str, ...], ...]
    calls: bool
    reason: str


@dataclass(frozen=True, slots=True)
class ProfileError(EventRecord):
    """A profile whose worker failed: its cells are missing, so the run is not a pass."""

    KIND: ClassVar[str] = "profile-error"
    profile: str
    error: str


@dataclass(frozen=True, slots=True)
class RunFinished(EventRecord):
    """The last line: whether the target was measured, the counts, and why not."""

    KIND: ClassVar[str] = "run-finished"
    HEAD: ClassVar[tuple[str, ...]] = ("finished_at",)
    measured: bool
    finished_at: str | None = None
    counts: Mapping[str, int] = field(default_factory=dict)
    interrupted: bool = False
    deadline_passed: bool | None = field(default=None, metadata=OMIT)
    error: Mapping[str, object] | None = field(default=None, metadata=OMIT)  # a wire error


Event = (
    RunStarted
    | SnapshotTaken
    | SchemaStored
    | DiscoveryCell
    | Skipped
    | CallCell
    | Sharing
    | ProfileError
    | RunFinished
)
Cell = DiscoveryCell | CallCell
# in stream order
EVENTS: dict[str, type[Event]] = {cls.KIND: cls for cls in typing.get_args(Event)}


def event_from_json(data: Mapping[str, JSON]) -> Event:
    """The typed event of one line; EventError naming the key when it does not follow the schema."""
    kind = data.get("event") if isinstance(data, Mapping) else None
    return EVENTS[_known(kind)].from_json(data)


def build_event(data: Mapping[str, JSON], memo: Memo | None = None) -> Event:
    """The typed event of a line already checked against the schema (mcp_matrix.run.results checks each
    line as it reads it, so it is not checked twice); ``memo`` as ``JsonRecord.build``'s."""
    return EVENTS[str(data["event"])].build(data, memo=memo)


def typed_event(event: Event | Mapping[str, JSON]) -> Event:
    """A typed event as it is; a JSON event checked against the schema and typed."""
    return event if isinstance(event, EventRecord) else event_from_json(event)


def typed_events(events: Iterable[Event | Mapping[str, JSON]]) -> list[Event]:
    """The events every writer and the checklist read: typed events as they are; a JSON event
    (a hand-built stream, a caller that kept JSON) checked and typed here, once."""
    return [typed_event(e) for e in events]


def as_json(event: Event | Mapping[str, JSON]) -> dict[str, JSON]:
    """The JSON form of a typed event; a mapping is taken as already JSON."""
    return event.to_json() if isinstance(event, EventRecord) else dict(event)


def check_event(data: Mapping[str, JSON]) -> None:
    """Raise EventError, naming the key, if ``data`` does not follow the schema of its kind."""
    kind = _known(data.get("event"))
    problem = checker("results", part=kind)(data)
    if problem is not None:
        raise EventError(kind, problem.key, problem.message)


def _known(kind: object) -> str:
    if not isinstance(kind, str) or kind not in EVENTS:
        raise EventError(
            str(kind), "event", f"unknown event kind {kind!r}; expected one of {', '.join(EVENTS)}"
        )
    return kind
