"""``replay --results``'s events as typed values (format mcp-matrix.replay, replay-events.schema.json).

Their own stream and schema, read and written by the same generic code as the results stream's
events (``mcp_matrix.core.events``).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from mcp_matrix.core.event_values import CellMutation, CellViolation
from mcp_matrix.core.events import EventError, EventRecord
from mcp_matrix.core.json_record import OMIT
from mcp_matrix.core.jsontypes import JSON, JSONObject
from mcp_matrix.core.schemas import checker

REPLAY_FORMAT = "mcp-matrix.replay"
REPLAY_VERSION = 1


@dataclass(frozen=True, slots=True)
class _ReplayEvent(EventRecord):
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
    retry: str | None = field(default=None, metadata=OMIT)  # queued retries: what became of it
    diverged: bool | None = field(default=None, metadata=OMIT)  # against the recorded result
    alias: str | None = field(default=None, metadata=OMIT)  # a call using a deprecated alias
    mutations: tuple[CellMutation, ...] | None = field(default=None, metadata=OMIT)
    answer: JSON = field(default=None, metadata=OMIT)  # run.classify.Answer.summary
    violations: tuple[CellViolation, ...] | None = field(default=None, metadata=OMIT)


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
