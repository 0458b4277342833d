"""The results stream, version 2: each distinct schema written once, every reader sees full events."""

from __future__ import annotations

import io
import json

import pytest

from mcp_matrix.core.errors import InputError
from mcp_matrix.run.results import FORMAT, ResultsWriter, read_events

SCHEMA = {"type": "object", "properties": {"q": {"type": "string", "description": "what to find"}}}


def _events() -> list[dict]:
    start = {"event": "run-started", "format": FORMAT, "version": 2, "run_id": "r1"}
    cells = [
        {
            "event": "discovery",
            "profile": p,
            "tool": t,
            "index": i,
            "verdict": "visible",
            "model_name": t,
            "model_schema": dict(SCHEMA) if t != "other" else {"type": "object"},
            "findings": [],
        }
        for p in ("claude-code", "cursor", "zed")
        for i, t in enumerate(("find", "find2", "other"))
    ]
    hidden = {
        "event": "discovery",
        "profile": "zed",
        "tool": "gone",
        "index": 3,
        "verdict": "hidden",
        "model_name": None,
        "model_schema": None,
        "findings": [],
    }
    return [start, *cells, hidden, {"event": "run-finished", "measured": True}]


def _write(events, tmp_path, secrets=()):
    path = tmp_path / "r.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        writer = ResultsWriter(handle, secrets=secrets)
        for e in events:
            writer(e)
    return path, writer


def test_each_distinct_schema_is_written_once_and_cells_name_it(tmp_path):
    path, _ = _write(_events(), tmp_path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    schemas = [e for e in lines if e["event"] == "schema"]
    assert [s["schema"] for s in schemas] == [
        SCHEMA,
        {"type": "object"},
    ]  # 9 cells, 2 distinct schemas
    cells = [e for e in lines if e["event"] == "discovery"]
    assert all("model_schema" not in e for e in cells if e["verdict"] == "visible")
    assert {e["model_schema_ref"] for e in cells if e["verdict"] == "visible"} == {0, 1}
    first_use = next(i for i, e in enumerate(lines) if e.get("model_schema_ref") == 1)
    assert lines[first_use - 1] == {"event": "schema", "id": 1, "schema": {"type": "object"}}


def test_reading_gives_back_exactly_the_events_the_run_emitted(tmp_path):
    events = _events()
    path, writer = _write(events, tmp_path)
    assert read_events(path) == events == writer.events


def test_a_version_1_file_is_still_read(tmp_path):
    events = [{**e, "version": 1} if e["event"] == "run-started" else e for e in _events()]
    path = tmp_path / "v1.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    assert read_events(path) == events


def test_secrets_are_scrubbed_in_schema_lines_too(tmp_path):
    events = _events()
    events[1]["model_schema"] = {"type": "object", "description": "token hunter2 inside"}
    path, _ = _write(events, tmp_path, secrets=["hunter2"])
    assert "hunter2" not in path.read_text(encoding="utf-8")
    assert read_events(path)[1]["model_schema"]["description"] == "token *** inside"


@pytest.mark.parametrize(
    "line, says",
    [
        (
            '{"event": "discovery", "model_schema_ref": 7}',
            "model_schema_ref 7 names no schema event before it",
        ),
        ('{"event": "schema", "id": "x", "schema": {}}', "a schema event needs an integer 'id'"),
    ],
)
def test_a_broken_reference_is_an_input_error_naming_the_line(tmp_path, line, says):
    path = tmp_path / "bad.jsonl"
    start = json.dumps({"event": "run-started", "format": FORMAT, "version": 2})
    path.write_text(start + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=says) as info:
        read_events(path)
    assert info.value.where.endswith(":2")


def test_an_in_memory_writer_keeps_full_events():
    writer = ResultsWriter(io.StringIO())
    for e in _events():
        writer(e)
    assert writer.events[1]["model_schema"] == SCHEMA
