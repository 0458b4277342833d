"""The results stream's events as typed values, one frozen dataclass per kind (docs/results.md).

Producers (``run``, ``discover``) build these and the results writer turns them into JSON
lines with ``to_json()``; readers get them back with ``event_from_json``, which checks each
event against the published schema (``mcp_matrix/core/schemas/results.schema.json``) first, so a
missing or mistyped key is one ``EventError`` naming the key, never a KeyError deep in a
writer. Writing and reading are generic (one key order, one reader for every kind); the
writers and the checklist take these typed values. The values inside them (findings, mutations,
evidence, violations, variants, listed profiles) are frozen values too, read and written by the
same generic code; the snapshot, schemas, the answer summary and the target stay JSON (typed
``JSON``: they are documents of their own or free-form).

Keys a file from an older version may lack have defaults here and in the schema; the keys
without a default are the ones no reader can do without (a cell's profile, tool and verdict).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from mcp_matrix.core.evidence import Evidence
from mcp_matrix.core.jsontypes import JSON, JSONObject
from mcp_matrix.core.model import Finding, ToolView
from mcp_matrix.core.schemas import checker

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self is Python 3.11

FORMAT = "mcp-matrix.results"
VERSION = 2
READABLE = (1, 2)

_OMIT = {"omit_if_none": True}  # written only when set (the run adds these keys when they apply)
OMIT = _OMIT  # a field's metadata: its key is written only while the field is not None
# A field's metadata: the value holds it but its JSON has no such key (never written; read as
# its default): what a reader of the typed value needs and the JSON shape does not carry.
HELD = {"held": True}


class EventError(ValueError):
    """An event that does not follow the results schema: ``key`` names the offending key."""

    def __init__(self, kind: str, key: str, message: str) -> None:
        self.kind, self.key, self.message = kind, key, message
        super().__init__(f"{kind} event: {message}")


def _tuples(value: JSON) -> JSON:
    """A JSON list as the tuple a frozen field holds (lists inside lists too; objects stay JSON)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _lists(value: object) -> JSON:
    """A frozen field's value as JSON: tuples as lists, nested values as their objects."""
    if isinstance(value, tuple):
        return [_lists(v) for v in value]
    if isinstance(value, JsonRecord):
        return value.to_json()
    return value  # type: ignore[return-value]  # a JSON field holds JSON


@dataclass(frozen=True, slots=True)
class JsonRecord:
    """A JSON object as a frozen value: its keys are its fields, written in ``HEAD`` order and
    then in declaration order, a field with ``_OMIT`` left out while it is None (a key the file
    did not have stays absent, so a stream read and written again is the same bytes). A field
    whose type is a ``JsonRecord`` (or a tuple of them) is built from its JSON object, when read
    and when constructed with one."""

    HEAD: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        for name, nested, _ in _codec(type(self)).nested:
            value = getattr(self, name)
            if value is None or type(value) is nested:
                continue
            if type(value) is tuple and all(type(v) is nested for v in value):
                continue  # already typed (a producer's values): nothing to build
            object.__setattr__(self, name, _nest(nested, value))

    def to_json(self) -> dict[str, JSON]:
        """The value as its JSON object (an event's with its ``event`` key first)."""
        codec = _CODECS.get(type(self)) or _codec(type(self))
        return codec.write(self)

    @classmethod
    def build(
        cls, data: Mapping[str, JSON], strict: bool = False, memo: Memo | None = None
    ) -> Self:
        """The typed value of JSON already checked against the schema (the one reader every kind
        shares: each field from its key, lists as tuples, nested objects as their values, a
        missing key its documented default). ``strict``: a key that is no field is a TypeError
        instead of being left out. ``memo``: one typed value per JSON object, for a reader that
        shares equal objects across lines (``mcp_matrix.run.results.read_typed``)."""
        codec = _CODECS.get(cls) or _codec(cls)
        if strict and not codec.names.issuperset(data.keys() - {"event"}):
            unknown = sorted(data.keys() - codec.names - {"event"})
            raise TypeError(f"{cls.__name__} has no field {', '.join(unknown)}")
        try:
            return codec.read(data, memo)  # type: ignore[return-value]  # the reader of cls
        except KeyError as exc:  # JSON that was not checked: as the constructor would say
            raise TypeError(f"{cls.__name__} missing required key {exc}") from None


# A reader's typed values by the id of the JSON object they were built from (the object is held
# beside its value, so the id stays its own).
Memo = dict[int, tuple[object, object]]


def _nest(nested: type[JsonRecord], value: object, memo: Memo | None = None) -> object:
    """A nested value (or a tuple of them) from its JSON, as read or as a caller passed it."""
    if type(value) is dict or isinstance(value, Mapping):
        return _one(_codec(nested).read, value, memo)
    if isinstance(value, (tuple, list)):
        return _many(_codec(nested).read, value, memo)
    return value


def _one(read: Callable[..., object], value: object, memo: Memo | None) -> object:
    """A nested object's typed value (once per JSON object with a memo); a value that is not
    a JSON object as it is (a producer's typed value)."""
    if type(value) is not dict and not isinstance(value, Mapping):
        return value
    if memo is None:
        return read(value, None)
    held = memo.get(id(value))
    if held is None:
        held = memo[id(value)] = (value, read(value, memo))
    return held[1]


def _many(read: Callable[..., object], value: object, memo: Memo | None) -> object:
    """A list of nested objects as the tuple of their typed values (once per JSON list with a
    memo: a reader shares equal lists across lines)."""
    if not value:
        return ()
    if memo is None:
        return tuple([_one(read, v, None) for v in value])  # type: ignore[attr-defined]
    held = memo.get(id(value))
    if held is None:
        typed = tuple([_one(read, v, memo) for v in value])  # type: ignore[attr-defined]
        held = memo[id(value)] = (value, typed)
    return held[1]


@dataclass(frozen=True)
class _Codec:
    """A value class's reader and writer, generated once from its fields (as dataclasses
    generates ``__init__``): a line is read and written with no loop over keys, no type test
    per key, and no ``__init__``/``__post_init__`` for JSON already checked. Measured per
    discovery line with 2 findings in benchmarks/report_json.py --per-line."""

    names: frozenset[str]  # every field
    nested: tuple[tuple[str, type[JsonRecord], bool], ...]  # (field, its class, a tuple of them)
    read: Callable[[Mapping[str, JSON], Memo | None], object]
    write: Callable[[object], dict[str, JSON]]


_CODECS: dict[type, _Codec] = {}


def _codec(cls: type[JsonRecord]) -> _Codec:
    """The reader and writer of a value class, made once (its nested fields from its type hints)."""
    known = _CODECS.get(cls)
    if known is not None:
        return known
    fields = dataclasses.fields(cls)
    hints = typing.get_type_hints(cls)
    env: dict[str, object] = {
        "_new": object.__new__,
        "_cls": cls,
        "_tuples": _tuples,
        "_lists": _lists,
        "_one": _one,
        "_many": _many,
    }
    nested = []
    read = ["def read(data, memo):", " get = data.get", " o = _new(_cls)"]
    for i, f in enumerate(fields):
        env[f"_s{i}"] = _setter(cls, f.name)
        if f.default is not dataclasses.MISSING:
            env[f"_d{i}"] = f.default
            value = f"get({f.name!r}, _d{i})"
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_f{i}"] = f.default_factory
            value = f"get({f.name!r}) if {f.name!r} in data else _f{i}()"
        else:
            value = f"data[{f.name!r}]"
        inner = _nested_class(hints[f.name])
        if inner is not None:
            many = _is_tuple(hints[f.name])
            nested.append((f.name, inner, many))
            env[f"_n{i}"], env[f"_r{i}"] = inner, _codec(inner).read
            env[f"_w_{f.name}"], env[f"_n_{f.name}"] = _codec(inner).write, inner
            convert = f"_{'many' if many else 'one'}(_r{i}, v, memo)"
            read.append(f" v = {value}")
            read.append(f" _s{i}(o, v if v is None or type(v) is _n{i} else {convert})")
        elif _writer(hints[f.name]) is None:  # a scalar: as it is
            read.append(f" _s{i}(o, {value})")
        else:  # JSON or a tuple of JSON: lists as tuples
            read.append(f" v = {value}")
            read.append(f" _s{i}(o, _tuples(v) if type(v) is list else v)")
    read.append(" return o")
    kind = getattr(cls, "KIND", "")
    write = ["def write(self):", f" out = {{'event': {kind!r}}}" if kind else " out = {}"]
    by_name = {f.name: f for f in fields}
    for name in (*cls.HEAD, *(n for n in by_name if n not in cls.HEAD)):
        if by_name[name].metadata.get("held"):
            continue
        omitted = bool(by_name[name].metadata.get("omit_if_none"))
        plain = _writer(hints[name]) is None
        value = "v" if plain else "_lists(v)"
        if f"_w_{name}" in env:  # nested values: their class's writer (else as JSON)
            one = "_w_{0}({1}) if type({1}) is _n_{0} else _lists({1})"
            many = _is_tuple(hints[name])
            value = f"[{one.format(name, 'x')} for x in v]" if many else one.format(name, "v")
        write.append(f" v = self.{name}")
        if omitted:
            write.append(f" if v is not None: out[{name!r}] = {value}")
        elif plain:
            write.append(f" out[{name!r}] = v")
        else:
            write.append(f" out[{name!r}] = None if v is None else {value}")
    write.append(" return out")
    exec("\n".join([*read, *write]), env)  # noqa: S102  # our own text, from the fields
    codec = _Codec(frozenset(by_name), tuple(nested), env["read"], env["write"])  # type: ignore[arg-type]
    _CODECS[cls] = codec
    return codec


@dataclass(frozen=True, slots=True)
class _Event(JsonRecord):
    KIND: ClassVar[str] = ""
    # Keys written first, in this order (the key order of the version-1 stream); then the
    # other fields in declaration order. A field with ``_OMIT`` is left out while it is None.

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


def _setter(cls: type, name: str) -> Callable[[object, object], None]:
    """How the reader sets a field of a frozen value: its slot's own setter (no lookup by name,
    no frozen ``__setattr__``)."""
    slot = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
    if isinstance(slot, types.MemberDescriptorType):
        return slot.__set__
    return lambda value, given: object.__setattr__(value, name, given)  # a class without slots


_SCALARS = (str, int, float, bool, type(None))


def _writer(hint: object) -> Callable[[object], JSON] | None:
    """How a field of this type becomes JSON: None for a scalar (it is JSON as it is)."""
    args = typing.get_args(hint) or (hint,)
    if all(isinstance(a, type) and issubclass(a, _SCALARS) for a in args):
        return None
    return _lists


def _is_tuple(hint: object) -> bool:
    """Whether a field's type is a tuple (``tuple[C, ...]``, maybe ``| None``)."""
    return typing.get_origin(hint) is tuple or any(_is_tuple(a) for a in typing.get_args(hint))


def _nested_class(hint: object) -> type[JsonRecord] | None:
    """The value class a field's type holds: ``C``, ``tuple[C, ...]``, either or None."""
    if isinstance(hint, type) and issubclass(hint, JsonRecord):
        return hint
    for arg in typing.get_args(hint):
        found = _nested_class(arg)
        if found is not None:
            return found
    return None


# -- the values inside events (results.schema.json $defs) -----------------------------------


@dataclass(frozen=True, slots=True)
class CellEvidence(JsonRecord):
    """Where a behaviour involved in a cell comes from (core.evidence.Evidence as written)."""

    level: str
    source: str | None = field(default=None, metadata=_OMIT)
    note: str | None = field(default=None, metadata=_OMIT)
    checked: str | None = field(default=None, metadata=_OMIT)

    @classmethod
    def of(cls, e: Evidence) -> CellEvidence:
        return cls(e.level, e.source, e.note, e.checked)


@dataclass(frozen=True, slots=True)
class CellFinding(JsonRecord):
    """One thing a client does to a tool (core.model.Finding as written): a key the file lacks
    is None here (a reader takes None as the key's default: "", false)."""

    code: str
    message: str
    pointer: str | None = field(default=None, metadata=_OMIT)
    lost: bool | None = field(default=None, metadata=_OMIT)
    materiality: str | None = field(default=None, metadata=_OMIT)
    blast_radius: str | None = field(default=None, metadata=_OMIT)
    behaviour: str | None = field(default=None, metadata=_OMIT)
    evidence: tuple[CellEvidence, ...] | None = field(default=None, metadata=_OMIT)
    culprit: str | None = field(default=None, metadata=_OMIT)

    @classmethod
    def of(cls, f: Finding) -> CellFinding:
        return _cell_finding(f)


@functools.lru_cache(maxsize=1 << 16)
def _cell_finding(f: Finding) -> CellFinding:
    """One typed finding per distinct finding: discovery copies one finding to every tool a
    list-level failure takes down, and building a frozen value per cell cost 3x the cell."""
    return CellFinding(
        f.code,
        f.message,
        f.pointer,
        f.lost,
        f.materiality,
        f.blast_radius,
        f.behaviour,
        tuple(CellEvidence.of(e) for e in f.evidence),
        f.culprit or None,
    )


@dataclass(frozen=True, slots=True)
class CellMutation(JsonRecord):
    """One difference between the intended and the wire arguments (core.model.Mutation)."""

    kind: str
    pointer: str
    before: JSON = None
    after: JSON = None


@dataclass(frozen=True, slots=True)
class CellViolation(JsonRecord):
    """One reason the listed inputSchema refuses the call sent (behaviours.validation.Violation)."""

    validator: str
    path: tuple[str | int, ...]
    message: str
    HEAD: ClassVar[tuple[str, ...]] = (
        "validator",
        "validator_value",
        "path",
        "schema_path",
        "instance",
        "names",
        "message",
    )
    validator_value: JSON = None
    schema_path: tuple[str | int, ...] | None = field(default=None, metadata=_OMIT)
    instance: JSON = None
    names: tuple[str, ...] | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True)
class CellVariant(JsonRecord):
    """One way a client sometimes sends a call, and its verdict."""

    verdict: str
    sometimes: tuple[str, ...] | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True)
class ListedProfile(JsonRecord):
    """A profile as the run-started event lists it (``run`` lists every key, ``discover`` the
    first three and ``required_by_default``; a key not listed stays absent)."""

    name: str
    client: str | None = field(default=None, metadata=_OMIT)
    versions: str | None = field(default=None, metadata=_OMIT)
    models: str | None = field(default=None, metadata=_OMIT)
    # null only for a profile citing no evidence at all (none bundled): written as absent
    weakest_evidence: str | None = field(default=None, metadata=_OMIT)
    required_by_default: bool | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True)
class RunStarted(_Event):
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
class SnapshotTaken(_Event):
    """The snapshot document the run measured (``{}`` when the target was never reached)."""

    KIND: ClassVar[str] = "snapshot"
    snapshot: JSONObject


@dataclass(frozen=True, slots=True)
class SchemaStored(_Event):
    """Version 2 wire form only: a model-facing schema stored once (mcp_matrix.run.results resolves it)."""

    KIND: ClassVar[str] = "schema"
    id: int
    schema: JSON


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
    mutations: tuple[CellMutation, ...] = ()
    answer: JSON = None  # a summary of the server's answer (run.classify.Answer.summary)
    behaviours: tuple[str, ...] = ()
    evidence: tuple[CellEvidence, ...] = ()
    weakest_evidence: str | None = None
    sometimes: tuple[str, ...] = ()
    stale: bool = False
    stale_for: str | None = field(default=None, metadata=_OMIT)
    violations: tuple[CellViolation, ...] | None = field(
        default=None, metadata=_OMIT
    )  # why the listed schema refuses it
    notes: tuple[str, ...] | None = field(default=None, metadata=_OMIT)
    variants: tuple[CellVariant, ...] | None = field(default=None, metadata=_OMIT)
    frequency: str | None = field(default=None, metadata=_OMIT)
    answer_from: str | None = field(
        default=None, metadata=_OMIT
    )  # run --share calls: whose answer this is

    @classmethod
    def of(cls, event: Mapping[str, JSON]) -> CallCell:
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
    counts: Mapping[str, int] = field(default_factory=dict)
    interrupted: bool = False
    deadline_passed: bool | None = field(default=None, metadata=_OMIT)
    error: Mapping[str, object] | None = field(default=None, metadata=_OMIT)  # a wire error


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


# -- replay --results (format mcp-matrix.replay, replay-events.schema.json) -------------------

REPLAY_FORMAT = "mcp-matrix.replay"
REPLAY_VERSION = 1


@dataclass(frozen=True, slots=True)
class _ReplayEvent(_Event):
    """An event of ``replay --results``: its own stream and schema (``replay-events``), read and
    written by the same generic code as the results stream's events."""

    @classmethod
    def _check(cls, data: Mapping[str, JSON]) -> None:
        check_replay_event(data)


@dataclass(frozen=True, slots=True)
class ReplayStarted(_ReplayEvent):
    """The first line of a replay's events."""

    KIND: ClassVar[str] = "replay-started"
    format: str = REPLAY_FORMAT
    version: int = REPLAY_VERSION


@dataclass(frozen=True, slots=True)
class ReplayCall(_ReplayEvent):
    """One recorded call replayed through one profile (mcp_matrix.evolution.replay). A key an
    older file lacks (``mutations``, ``answer``) stays absent, and ``verdict`` may be null
    (an offline call that was only sent, ``category`` "sent", in early files)."""

    KIND: ClassVar[str] = "replay-call"
    profile: str
    file: str
    line: int
    id: str | None
    tool: str
    population: str
    category: str
    verdict: str | None
    reason: str
    retry: str | None = field(default=None, metadata=_OMIT)  # queued retries: what became of it
    diverged: bool | None = field(default=None, metadata=_OMIT)  # against the recorded result
    alias: str | None = field(default=None, metadata=_OMIT)  # a call using a deprecated alias
    mutations: tuple[CellMutation, ...] | None = field(default=None, metadata=_OMIT)
    answer: JSON = field(default=None, metadata=_OMIT)  # run.classify.Answer.summary
    violations: tuple[CellViolation, ...] | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True)
class ReplayFinished(_ReplayEvent):
    """The last line: the report (replay.schema.json); none when the replay stopped on an error."""

    KIND: ClassVar[str] = "replay-finished"
    report: JSONObject


ReplayEvent = ReplayStarted | ReplayCall | ReplayFinished
REPLAY_EVENTS: dict[str, type[ReplayEvent]] = {
    cls.KIND: cls for cls in typing.get_args(ReplayEvent)
}


def replay_event_from_json(data: Mapping[str, JSON]) -> ReplayEvent:
    """The typed event of one ``replay --results`` line; EventError naming the key when it does
    not follow the replay-events schema (a finished event's report: replay.schema.json)."""
    kind = data.get("event") if isinstance(data, Mapping) else None
    if not isinstance(kind, str) or kind not in REPLAY_EVENTS:
        raise EventError(
            str(kind),
            "event",
            f"unknown event kind {kind!r}; expected one of {', '.join(REPLAY_EVENTS)}",
        )
    return REPLAY_EVENTS[kind].from_json(data)


def check_replay_event(data: Mapping[str, JSON]) -> None:
    """Raise EventError, naming the key, if ``data`` does not follow its replay event's schema."""
    kind = str(data.get("event"))
    if kind == ReplayFinished.KIND:  # the event's own keys, then the report against its schema
        if not isinstance(data.get("report"), Mapping):
            raise EventError(kind, "report", "missing key 'report' (an object)")
        problem = checker("replay")(data["report"])
        if problem is not None:
            key = f"report.{problem.key}" if problem.key else "report"
            raise EventError(kind, key, problem.message)
        return
    problem = checker("replay-events", part=kind)(data)
    if problem is not None:
        raise EventError(kind, problem.key, problem.message)


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
    return event if isinstance(event, _Event) else event_from_json(event)


def typed_events(events: Iterable[Event | Mapping[str, JSON]]) -> list[Event]:
    """The events every writer and the checklist read: typed events as they are; a JSON event
    (a hand-built stream, a caller that kept JSON) checked and typed here, once."""
    return [typed_event(e) for e in events]


def as_json(event: Event | Mapping[str, JSON]) -> dict[str, JSON]:
    """The JSON form of a typed event; a mapping is taken as already JSON."""
    return event.to_json() if isinstance(event, _Event) else dict(event)


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


__all__ = [
    "EVENTS",
    "FORMAT",
    "HELD",
    "OMIT",
    "READABLE",
    "REPLAY_EVENTS",
    "REPLAY_FORMAT",
    "REPLAY_VERSION",
    "VERSION",
    "CallCell",
    "Cell",
    "CellEvidence",
    "CellFinding",
    "CellMutation",
    "CellVariant",
    "CellViolation",
    "DiscoveryCell",
    "Event",
    "EventError",
    "JsonRecord",
    "ListedProfile",
    "Memo",
    "ProfileError",
    "ReplayCall",
    "ReplayEvent",
    "ReplayFinished",
    "ReplayStarted",
    "RunFinished",
    "RunStarted",
    "SchemaStored",
    "Sharing",
    "Skipped",
    "SnapshotTaken",
    "as_json",
    "build_event",
    "check_event",
    "check_replay_event",
    "event_from_json",
    "replay_event_from_json",
    "typed_event",
    "typed_events",
]
