"""The results stream's events as typed values, one frozen dataclass per kind (docs/results.md).

Producers (``run``, ``discover``) build these and the results writer turns them into JSON
lines with ``to_json()``; readers get them back with ``event_from_json``, which checks each
event against the published schema (``matrix/schemas/results.schema.json``) first, so a
missing or mistyped key is one ``EventError`` naming the key, never a KeyError deep in a
writer. Nested values (findings, mutations, evidence, the snapshot) stay JSON: they have
their own producers and documents.

Keys a file from an older version may lack have defaults here and in the schema; the keys
without a default are the ones no reader can do without (a cell's profile, tool and verdict).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from matrix.model import ToolView
from matrix.schemas import checker

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


@dataclass(frozen=True)
class _Event:
    KIND: ClassVar[str] = ""

    def to_json(self) -> dict:
        """The event as one line of the results stream."""
        out: dict[str, Any] = {"event": self.KIND}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None and f.metadata.get("omit_if_none"):
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Any:
        """The typed event; EventError when ``data`` does not follow this kind's schema."""
        if data.get("event") != cls.KIND:
            raise EventError(
                cls.KIND, "event", f"expected 'event': {cls.KIND!r}, got {data.get('event')!r}"
            )
        check_event(data)
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: _tuples(v) for k, v in data.items() if k in names})


@dataclass(frozen=True)
class RunStarted(_Event):
    """The first line: what was run, against what, through which profiles."""

    KIND: ClassVar[str] = "run-started"
    format: str = FORMAT
    version: int = VERSION
    run_id: str | None = None
    started_at: str | None = None
    mcp_matrix: str | None = None
    target: Any = None  # masked (matrix.targets)
    server: Any = None  # serverInfo as sent
    server_key: Any = None
    protocolVersion: str | None = None  # the key of the JSON document
    cases: str | None = ""
    baseline: str | None = None
    profiles: tuple[dict, ...] = ()


@dataclass(frozen=True)
class SnapshotTaken(_Event):
    """The snapshot document the run measured (``{}`` when the target was never reached)."""

    KIND: ClassVar[str] = "snapshot"
    snapshot: Any


@dataclass(frozen=True)
class SchemaStored(_Event):
    """Version 2 wire form only: a model-facing schema stored once (matrix.results resolves it)."""

    KIND: ClassVar[str] = "schema"
    id: int
    schema: Any


@dataclass(frozen=True)
class DiscoveryCell(_Event):
    """The (profile, tool) cell: what one client does with one tool."""

    KIND: ClassVar[str] = "discovery"
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

    def to_json(self) -> dict:  # the key order of the version-1 stream
        out = super().to_json()
        return {
            "event": self.KIND,
            "profile": self.profile,
            "tool": self.tool,
            "index": out["index"],
            "verdict": self.verdict,
            **{k: v for k, v in out.items() if k not in _CELL_HEAD},
        }


@dataclass(frozen=True)
class Skipped(_Event):
    """A call not made, and why; ``profile`` is set when only that profile's call was not made."""

    KIND: ClassVar[str] = "skipped"
    tool: str
    reason: str
    case: str | None = None
    profile: str | None = field(default=None, metadata=_OMIT)

    def to_json(self) -> dict:
        out = {
            "event": self.KIND,
            **({"profile": self.profile} if self.profile is not None else {}),
        }
        return {**out, "tool": self.tool, "case": self.case, "reason": self.reason}


@dataclass(frozen=True)
class CallCell(_Event):
    """The (profile, tool, case) cell: what one client's call did at the server."""

    KIND: ClassVar[str] = "call"
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
        return cls(
            **{k: tuple(v) if isinstance(v, list) else v for k, v in event.items() if k != "event"}
        )

    def to_json(self) -> dict:  # the key order of the version-1 stream
        out = super().to_json()
        head = {
            "event": self.KIND,
            "profile": self.profile,
            "tool": self.tool,
            "case": self.case,
            "origin": self.origin,
            "expect": self.expect,
        }
        return {**head, **{k: v for k, v in out.items() if k not in head}}


@dataclass(frozen=True)
class Sharing(_Event):
    """Which profiles shared a session and whether read-only calls were shared (matrix.sharing)."""

    KIND: ClassVar[str] = "sharing"
    mode: str
    sessions: tuple[tuple[str, ...], ...]
    calls: bool
    reason: str

    def to_json(self) -> dict:
        return {
            "event": self.KIND,
            "mode": self.mode,
            "sessions": [list(g) for g in self.sessions],
            "calls": self.calls,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ProfileError(_Event):
    """A profile whose worker failed: its cells are missing, so the run is not a pass."""

    KIND: ClassVar[str] = "profile-error"
    profile: str
    error: str


@dataclass(frozen=True)
class RunFinished(_Event):
    """The last line: whether the target was measured, the counts, and why not."""

    KIND: ClassVar[str] = "run-finished"
    measured: bool
    finished_at: str | None = None
    counts: dict = field(default_factory=dict)
    interrupted: bool = False
    deadline_passed: bool | None = field(default=None, metadata=_OMIT)
    error: Any = field(default=None, metadata=_OMIT)

    def to_json(self) -> dict:
        out = super().to_json()
        return {
            "event": self.KIND,
            "finished_at": self.finished_at,
            **{k: v for k, v in out.items() if k not in ("event", "finished_at")},
        }


_CELL_HEAD = ("event", "profile", "tool", "index", "verdict")

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
EVENTS: dict[str, type] = {
    cls.KIND: cls
    for cls in (
        RunStarted,
        SnapshotTaken,
        SchemaStored,
        DiscoveryCell,
        Skipped,
        CallCell,
        Sharing,
        ProfileError,
        RunFinished,
    )
}


def event_from_json(data: Mapping[str, Any]) -> Event:
    """The typed event of one line; EventError naming the key when it does not follow the schema."""
    kind = data.get("event") if isinstance(data, Mapping) else None
    return EVENTS[_known(kind)].from_json(data)


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
    "check_event",
    "event_from_json",
]
