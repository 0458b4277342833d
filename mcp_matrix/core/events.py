"""The results stream's events as typed values, one frozen dataclass per kind (docs/results.md).

Producers (``run``, ``discover``) build these and the results writer turns them into JSON
lines with ``to_json()``; readers get them back with ``event_from_json``, which checks each
event against the published schema (``mcp_matrix/core/schemas/results.schema.json``) first, so a
missing or mistyped key is one ``EventError`` naming the key, never a KeyError deep in a
writer. Writing and reading are generic (one key order, one reader for every kind); the
writers and the checklist take these typed values. Nested values (findings, mutations,
evidence, the snapshot) stay JSON: they have their own producers and documents.

Keys a file from an older version may lack have defaults here and in the schema; the keys
without a default are the ones no reader can do without (a cell's profile, tool and verdict).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mcp_matrix.core.model import ToolView
from mcp_matrix.core.schemas import checker

FORMAT = "mcp-matrix.results"
VERSION = 2
READABLE = (1, 2)

_OMIT = {"omit_if_none": True}  # written only when set (the run adds these keys when they apply)


def _tuples(value: Any) -> Any:
    """A JSON list as the tuple a frozen field holds (lists inside lists too; objects stay JSON)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


class EventError(ValueError):
    """An event that does not follow the results schema: ``key`` names the offending key."""

    def __init__(self, kind: str, key: str, message: str) -> None:
        self.kind, self.key, self.message = kind, key, message
        super().__init__(f"{kind} event: {message}")


def _lists(value: Any) -> Any:
    """A frozen field's tuple as the JSON list it was read from (tuples inside tuples too)."""
    return [_lists(v) for v in value] if isinstance(value, tuple) else value


@dataclass(frozen=True, slots=True)
class _Event:
    KIND: ClassVar[str] = ""
    # Keys written first, in this order (the key order of the version-1 stream); then the
    # other fields in declaration order. A field with ``_OMIT`` is left out while it is None.
    HEAD: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict:
        """The event as one line of the results stream."""
        out: dict[str, Any] = {"event": self.KIND}
        order, omitted, _ = _layout(type(self))
        for name in order:
            value = getattr(self, name)
            if value is None and name in omitted:
                continue
            out[name] = _lists(value)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Any:
        """The typed event; EventError when ``data`` does not follow this kind's schema."""
        if data.get("event") != cls.KIND:
            raise EventError(
                cls.KIND, "event", f"expected 'event': {cls.KIND!r}, got {data.get('event')!r}"
            )
        check_event(data)
        return cls.build(data)

    @classmethod
    def build(cls, data: Mapping[str, Any], strict: bool = False) -> Any:
        """The typed event of JSON already checked against the schema (the one reader every kind
        shares: each field from its key, lists as tuples, a missing key its documented default).
        ``strict``: a key that is no field is a TypeError instead of being left out."""
        names = _layout(cls)[2]
        return cls(
            **{k: _tuples(v) for k, v in data.items() if k != "event" and (strict or k in names)}
        )


_Layout = tuple[tuple[str, ...], frozenset[str], frozenset[str]]
_LAYOUTS: dict[type[_Event], _Layout] = {}


def _layout(cls: type[_Event]) -> _Layout:
    """(key order, keys omitted while None, every field) of an event class, computed once."""
    known = _LAYOUTS.get(cls)
    if known is not None:
        return known
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    order = (*cls.HEAD, *(n for n in names if n not in cls.HEAD))
    omitted = frozenset(f.name for f in fields if f.metadata.get("omit_if_none"))
    _LAYOUTS[cls] = order, omitted, frozenset(names)
    return _LAYOUTS[cls]


@dataclass(frozen=True, slots=True)
class RunStarted(_Event):
    """The first line: what was run, against what, through which profiles."""

    KIND: ClassVar[str] = "run-started"
    format: str = FORMAT
    version: int = VERSION
    run_id: str | None = None
    started_at: str | None = None
    mcp_matrix: str | None = None
    target: Any = None  # masked (mcp_matrix.targets.kinds)
    server: Any = None  # serverInfo as sent
    server_key: Any = None
    protocolVersion: str | None = None  # the key of the JSON document
    cases: str | None = ""
    baseline: str | None = None
    profiles: tuple[dict, ...] = ()


@dataclass(frozen=True, slots=True)
class SnapshotTaken(_Event):
    """The snapshot document the run measured (``{}`` when the target was never reached)."""

    KIND: ClassVar[str] = "snapshot"
    snapshot: Any


@dataclass(frozen=True, slots=True)
class SchemaStored(_Event):
    """Version 2 wire form only: a model-facing schema stored once (mcp_matrix.run.results resolves it)."""

    KIND: ClassVar[str] = "schema"
    id: int
    schema: Any


@dataclass(frozen=True, slots=True)
class DiscoveryCell(_Event):
    """The (profile, tool) cell: what one client does with one tool."""

    KIND: ClassVar[str] = "discovery"
    HEAD: ClassVar[tuple[str, ...]] = ("profile", "tool", "index", "verdict")
    profile: str
    tool: str
    verdict: str
    index: int | None = None
    model_name: str | None = None
    model_schema: Any = None
    findings: tuple[dict, ...] = ()
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
            findings=tuple(f.to_json() for f in view.findings),
            weakest_evidence=view.weakest_evidence,
        )


@dataclass(frozen=True, slots=True)
class Skipped(_Event):
    """A call not made, and why; ``profile`` is set when only that profile's call was not made."""

    KIND: ClassVar[str] = "skipped"
    HEAD: ClassVar[tuple[str, ...]] = ("profile", "tool", "case", "reason")
    tool: str
    reason: str
    case: str | None = None
    profile: str | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True)
class CallCell(_Event):
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
    mutations: tuple[dict, ...] = ()
    answer: Any = None
    behaviours: tuple[str, ...] = ()
    evidence: tuple[dict, ...] = ()
    weakest_evidence: str | None = None
    sometimes: tuple[str, ...] = ()
    stale: bool = False
    stale_for: str | None = field(default=None, metadata=_OMIT)
    violations: tuple[dict, ...] | None = field(
        default=None, metadata=_OMIT
    )  # why the listed schema refuses it
    notes: tuple[str, ...] | None = field(default=None, metadata=_OMIT)
    variants: tuple[dict, ...] | None = field(default=None, metadata=_OMIT)
    frequency: str | None = field(default=None, metadata=_OMIT)
    answer_from: str | None = field(
        default=None, metadata=_OMIT
    )  # run --share calls: whose answer this is

    @classmethod
    def of(cls, event: Mapping[str, Any]) -> CallCell:
        """The call pipeline's cell: each of its keys must be a field here (and in the schema)."""
        return cls.build(event, strict=True)


@dataclass(frozen=True, slots=True)
class Sharing(_Event):
    """Which profiles shared a session and whether read-only calls were shared (mcp_matrix.run.sharing)."""

    KIND: ClassVar[str] = "sharing"
    mode: str
    sessions: tuple[tuple[str, ...], ...]
    calls: bool
    reason: str


@dataclass(frozen=True, slots=True)
class ProfileError(_Event):
    """A profile whose worker failed: its cells are missing, so the run is not a pass."""

    KIND: ClassVar[str] = "profile-error"
    profile: str
    error: str


@dataclass(frozen=True, slots=True)
class RunFinished(_Event):
    """The last line: whether the target was measured, the counts, and why not."""

    KIND: ClassVar[str] = "run-finished"
    HEAD: ClassVar[tuple[str, ...]] = ("finished_at",)
    measured: bool
    finished_at: str | None = None
    counts: dict = field(default_factory=dict)
    interrupted: bool = False
    deadline_passed: bool | None = field(default=None, metadata=_OMIT)
    error: Any = field(default=None, metadata=_OMIT)


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
EVENTS: dict[str, type[_Event]] = {cls.KIND: cls for cls in typing.get_args(Event)}


def event_from_json(data: Mapping[str, Any]) -> Event:
    """The typed event of one line; EventError naming the key when it does not follow the schema."""
    kind = data.get("event") if isinstance(data, Mapping) else None
    return EVENTS[_known(kind)].from_json(data)


def build_event(data: Mapping[str, Any]) -> Event:
    """The typed event of a line already checked against the schema (mcp_matrix.run.results checks each
    line as it reads it, so it is not checked twice)."""
    return EVENTS[data["event"]].build(data)


def typed_event(event: Event | Mapping[str, Any]) -> Event:
    """A typed event as it is; a JSON event checked against the schema and typed."""
    return event if isinstance(event, _Event) else event_from_json(event)


def typed_events(events: Iterable[Event | Mapping[str, Any]]) -> list[Event]:
    """The events every writer and the checklist read: typed events as they are; a JSON event
    (a hand-built stream, a caller that kept JSON) checked and typed here, once."""
    return [typed_event(e) for e in events]


def as_json(event: Event | Mapping[str, Any]) -> dict:
    """The JSON form of a typed event; a mapping is taken as already JSON."""
    return event.to_json() if isinstance(event, _Event) else dict(event)


def check_event(data: Mapping[str, Any]) -> None:
    """Raise EventError, naming the key, if ``data`` does not follow the schema of its kind."""
    kind = _known(data.get("event"))
    problem = checker("results", part=kind)(data)
    if problem is not None:
        raise EventError(kind, problem.key, problem.message)


def _known(kind: Any) -> str:
    if not isinstance(kind, str) or kind not in EVENTS:
        raise EventError(
            str(kind), "event", f"unknown event kind {kind!r}; expected one of {', '.join(EVENTS)}"
        )
    return kind


__all__ = [
    "EVENTS",
    "FORMAT",
    "READABLE",
    "VERSION",
    "CallCell",
    "Cell",
    "DiscoveryCell",
    "Event",
    "EventError",
    "ProfileError",
    "RunFinished",
    "RunStarted",
    "SchemaStored",
    "Sharing",
    "Skipped",
    "SnapshotTaken",
    "as_json",
    "build_event",
    "check_event",
    "event_from_json",
    "typed_event",
    "typed_events",
]
