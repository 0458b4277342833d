"""``replay --results``: typed events (``mcp_matrix.core.events``), the same bytes as before.

``data/replay-events.jsonl`` was written by the dict events replay had before they were typed
(replay.py and replay_file.py as at 0b72b1d): the billing retry corpus offline against version
2's tools through five profiles (delivered, refused with mutations and violations, the retry
outcomes), the report last.
"""

from __future__ import annotations

import json
from pathlib import Path

import matrix_servers.billing
import pytest
from matrix_servers.billing.schemas import tool_definitions

from mcp_matrix import __version__
from mcp_matrix.core.errors import InputError
from mcp_matrix.core.event_values import CellMutation, CellViolation
from mcp_matrix.core.replay_events import ReplayCall, ReplayFinished
from mcp_matrix.evolution.calls_file import calls_file
from mcp_matrix.evolution.replay import ReplayConfig, replay
from mcp_matrix.evolution.replay_file import ReplayResultsFile, read_replay_events
from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.targets.snapshot import Snapshot

CORPORA = Path(matrix_servers.billing.__file__).parent / "corpora"
BEFORE = Path(__file__).parent / "data" / "replay-events.jsonl"
# The stored file names the corpus by this placeholder, not by the machine path it was written at.
CORPUS_PLACEHOLDER = "<corpora>/retry.jsonl"
PROFILES = ["continue", "gemini-cli", "stale-serialiser", "claude-code-legacy", "jetbrains-copilot"]


def written(path: Path, emitted: list | None = None) -> list[str]:
    """The --results lines of the fixture's replay, written by ``ReplayResultsFile``."""
    sink = ReplayResultsFile(str(path), None)

    def emit(event: ReplayCall) -> None:
        if emitted is not None:
            emitted.append(event)
        sink(event)

    snapshot = Snapshot({"tools": [{"page": 0, "tool": t} for t in tool_definitions("2")]})
    config = ReplayConfig(
        files=[calls_file(CORPORA / "retry.jsonl")],
        profiles=select_profiles(load_profiles(), PROFILES),
        snapshot=snapshot,
        emit=emit,
    )
    sink.finish(replay(config).to_json([]))
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def without_version(line: str) -> dict:
    doc = json.loads(line)
    doc["report"].pop("mcp_matrix")
    return doc


def test_replay_emits_typed_events_written_as_the_same_bytes_as_its_dict_events(tmp_path):
    emitted: list = []
    lines = written(tmp_path / "events.jsonl", emitted)
    corpus = json.dumps(str(CORPORA / "retry.jsonl"))[1:-1]  # as the writer escapes it
    stored = BEFORE.read_text(encoding="utf-8").replace(CORPUS_PLACEHOLDER, corpus)
    before = stored.splitlines(keepends=True)
    assert emitted and all(type(e) is ReplayCall for e in emitted)
    typed = [e for e in emitted if e.mutations and e.violations]
    assert typed and all(type(m) is CellMutation for e in typed for m in e.mutations)
    assert all(type(v) is CellViolation for e in typed for v in e.violations)
    assert len(lines) == len(before) == len(emitted) + 2
    assert lines[:-1] == before[:-1]  # every byte but the version in the report
    assert json.loads(lines[-1])["report"]["mcp_matrix"] == __version__
    assert without_version(lines[-1]) == without_version(before[-1])


def test_reading_a_replay_events_file_gives_typed_events_that_write_the_same_bytes(tmp_path):
    lines = BEFORE.read_text(encoding="utf-8").splitlines(keepends=True)
    events = list(read_replay_events(BEFORE))
    assert [type(e).__name__ for e in (events[0], events[1], events[-1])] == [
        "ReplayStarted",
        "ReplayCall",
        "ReplayFinished",
    ]
    assert isinstance(events[-1], ReplayFinished) and events[-1].report["format"] == (
        "mcp-matrix.replay"
    )
    again = [json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in events]
    assert again == lines


def test_an_older_events_file_without_mutations_or_answer_and_a_null_verdict_is_read(tmp_path):
    old = tmp_path / "old.jsonl"
    lines = [
        {"event": "replay-started", "format": "mcp-matrix.replay", "version": 1},
        {
            "event": "replay-call",
            "profile": "continue",
            "file": "retry.jsonl",
            "line": 1,
            "id": None,
            "tool": "get_account",
            "population": "retry",
            "category": "sent",
            "verdict": None,
            "reason": "sent to the modelled server",
        },
    ]
    text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
    old.write_text(text + '{"event": "replay-call", "prof', encoding="utf-8")  # cut short
    events = list(read_replay_events(old))
    assert len(events) == 2 and isinstance(events[1], ReplayCall)
    assert events[1].verdict is None and events[1].mutations is None and events[1].answer is None
    assert "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in events) == text


def test_a_line_breaking_the_schema_is_an_input_error_naming_the_file_the_line_and_the_key(
    tmp_path,
):
    bad = tmp_path / "bad.jsonl"
    first = BEFORE.read_text(encoding="utf-8").splitlines(keepends=True)[:2]
    call = json.loads(first[1])
    del call["tool"]
    bad.write_text(first[0] + first[1] + json.dumps(call) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(read_replay_events(bad))
    assert caught.value.where == f"{bad}:3" and "'tool'" in str(caught.value)


def test_a_file_that_is_not_utf8_is_an_input_error_naming_the_file_not_a_traceback(tmp_path):
    """Before the shared input-file opening (core/infiles.py) it raised UnicodeDecodeError."""
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(BEFORE.read_bytes().splitlines(keepends=True)[0] + b'{"tool": "caf\xe9"}\n')
    with pytest.raises(InputError) as caught:
        list(read_replay_events(bad))
    assert caught.value.where == str(bad)
    said = str(caught.value)
    assert "not UTF-8 text (invalid continuation byte at byte" in said, said
    assert said.endswith("; expected JSON lines"), said
