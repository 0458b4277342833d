"""Recorded-call files: JSON Lines of frozen calls, read one line at a time.

One call per line (docs/evolution.md, "Replay")::

    {"id": "live-0001", "tool": "update_account", "arguments": {...},
     "timestamp": "2026-09-14T08:11:36Z", "result": {...}, "transcript": "t-01", "turn": 4}

``id``, ``tool`` and ``arguments`` are required; ``timestamp`` (ISO 8601), ``result`` (the
``CallToolResult`` as recorded), ``transcript`` and ``turn`` are optional, except that a
transcript file needs ``transcript`` on every line. Other keys (``conversation``, ``job``,
``attempts``) are allowed and ignored. A bad line is an ``InputError`` naming ``FILE:LINE`` and
the key. Files are read as a stream, so a file of any length needs the memory of one line.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_matrix.core.errors import InputError, InputErrors
from mcp_matrix.core.infiles import open_input_bytes, parse_json
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.evolution.model import POPULATIONS

MAX_ERRORS = 20  # problems reported at once; a file that is wrong everywhere stops there
_NO_RESULT = object()


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One frozen call; ``result`` is ``None`` when the line recorded none."""

    id: str
    tool: str
    arguments: Any
    line: int
    timestamp: _dt.datetime | None = None
    result: Any = None
    has_result: bool = False
    transcript: str | None = None
    turn: int | None = None


@dataclass(frozen=True)
class CallsFile:
    """A calls file and the population of frozen callers it stands for."""

    path: Path
    population: str
    population_from: str  # "file name" | "--population" | "policy"

    @property
    def name(self) -> str:
        return str(self.path)


def population_from_name(path: str | Path) -> str | None:
    """``live.jsonl``, ``retry-queue.jsonl``, ``transcripts_2026.jsonl`` -> the population, else None."""
    stem = Path(path).name.split(".")[0].lower()
    for population in POPULATIONS:
        if re.fullmatch(rf"{population}s?([-_].*)?", stem):
            return population
    return None


def calls_file(
    path: str | Path, population: str | None = None, given_by: str = "--population"
) -> CallsFile:
    """A ``CallsFile`` with its population: given, or read from the file name (else an InputError)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such calls file", where=str(p))
    if population is not None:
        if population not in POPULATIONS:
            raise InputError(
                f"unknown population {population!r}; expected one of {', '.join(POPULATIONS)}",
                where=given_by,
            )
        return CallsFile(p, population, given_by)
    found = population_from_name(p)
    if found is None:
        raise InputError(
            "cannot tell the population of frozen callers from the file name; name the file live.jsonl, "
            "retry.jsonl or transcript.jsonl, or pass --population live|retry|transcript",
            where=str(p),
        )
    return CallsFile(p, found, "file name")


def parse_timestamp(value: str) -> _dt.datetime | None:
    """An ISO 8601 timestamp as an aware UTC datetime (naive ones are taken as UTC), or None
    (not ISO 8601, or outside the years 1 to 9999 once in UTC)."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    try:
        return moment.astimezone(_dt.timezone.utc)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is in year 0 in UTC, which no datetime holds
        return None


def parse_line(
    text: str | bytes, path: str | Path, line: int, transcript_needed: bool = False
) -> RecordedCall:
    """Line ``line`` of the calls file ``path``; a problem is an InputError at ``FILE:LINE``."""
    doc = parse_json(text, path, line)
    if not isinstance(doc, dict):
        raise InputError(
            f"expected a JSON object (one recorded call), got {_kind(doc)}", where=f"{path}:{line}"
        )
    for key in ("id", "tool", "arguments"):
        if key not in doc:
            raise InputError(
                f"{key}: missing; every recorded call needs id, tool and arguments",
                where=f"{path}:{line}",
            )
    call_id, tool, arguments = doc["id"], doc["tool"], doc["arguments"]
    if not isinstance(call_id, (str, int)) or isinstance(call_id, bool) or call_id == "":
        raise InputError(
            f"id: expected a non-empty string, got {_kind(call_id)}", where=f"{path}:{line}"
        )
    if not isinstance(tool, str) or not tool:
        raise InputError(
            f"tool: expected the tool's name (a non-empty string), got {_kind(tool)}",
            where=f"{path}:{line}",
        )
    if not isinstance(arguments, dict):
        raise InputError(
            f"arguments: expected an object (the call's arguments), got {_kind(arguments)}",
            where=f"{path}:{line}",
        )
    moment = None
    if doc.get("timestamp") is not None:
        raw = doc["timestamp"]
        moment = parse_timestamp(raw) if isinstance(raw, str) else None
        if moment is None:
            raise InputError(
                f"timestamp: expected an ISO 8601 date and time such as 2026-09-14T08:11:36Z, "
                f"from year 1 to 9999 in UTC, got {json.dumps(raw)}",
                where=f"{path}:{line}",
            )
    result = doc.get("result", _NO_RESULT)
    if result is not _NO_RESULT and result is not None and not isinstance(result, dict):
        raise InputError(
            f"result: expected the recorded CallToolResult (an object), got {_kind(result)}",
            where=f"{path}:{line}",
        )
    transcript = doc.get("transcript")
    if transcript is not None and (
        not isinstance(transcript, (str, int)) or isinstance(transcript, bool)
    ):
        raise InputError(
            f"transcript: expected the transcript's id (a string), got {_kind(transcript)}",
            where=f"{path}:{line}",
        )
    if transcript_needed and transcript is None:
        raise InputError(
            "transcript: missing; every call of a transcript file names its transcript",
            where=f"{path}:{line}",
        )
    turn = doc.get("turn")
    if turn is not None and (not isinstance(turn, int) or isinstance(turn, bool)):
        raise InputError(f"turn: expected an integer, got {_kind(turn)}", where=f"{path}:{line}")
    return RecordedCall(
        id=str(call_id),
        tool=tool,
        arguments=arguments,
        line=line,
        timestamp=moment,
        result=None if result is _NO_RESULT else result,
        has_result=result is not _NO_RESULT and result is not None,
        transcript=None if transcript is None else str(transcript),
        turn=turn,
    )


def iter_calls(source: CallsFile) -> Iterator[tuple[RecordedCall, int]]:
    """Every call of the file in order, with the bytes read so far (for a progress bar)."""
    needed = source.population == "transcript"
    with open_input_bytes(source.path, "recorded-calls file", "cannot read calls") as handle:
        done = 0
        for number, raw in enumerate(handle, 1):
            done += len(raw)
            if raw.isspace():
                continue
            yield parse_line(raw, source.path, number, needed), done


def check_files(sources: list[CallsFile]) -> dict[str, int]:
    """Read every file once and report every bad line together (up to MAX_ERRORS); calls per file."""
    errors: list[InputError] = []
    counts: dict[str, int] = {}
    for source in sources:
        needed = source.population == "transcript"
        count = 0
        with open_input_bytes(source.path, "recorded-calls file", "cannot read calls") as handle:
            for number, raw in enumerate(handle, 1):
                if raw.isspace():
                    continue
                try:
                    parse_line(raw, source.path, number, needed)
                    count += 1
                except InputError as exc:
                    errors.append(exc)
                    if len(errors) >= MAX_ERRORS:
                        raise InputErrors(errors) from None
        counts[source.name] = count
    if errors:
        raise InputErrors(errors)
    return counts


def _kind(value: JSON) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {json.dumps(value[:40])}"
    if isinstance(value, list):
        return "an array"
    return "an object"


__all__ = [
    "CallsFile",
    "RecordedCall",
    "calls_file",
    "check_files",
    "iter_calls",
    "parse_line",
    "parse_timestamp",
    "population_from_name",
]
