"""The JSON report: one versioned document with the grid, every cell, the skipped calls and counts."""

from __future__ import annotations

import copy
import io
import json
import json.encoder
from pathlib import Path

import jsonschema
import pytest

from mcp_matrix.core.errors import InputError
from mcp_matrix.core.event_values import CellFinding
from mcp_matrix.core.events import CallCell, EventError, typed_events
from mcp_matrix.report.grid import RELEASE_FAILING
from mcp_matrix.report.json_read import read_report
from mcp_matrix.report.json_report import (
    FORMAT,
    SCHEMA,
    VERSION,
    build_report,
    report_document,
    write_json,
)
from mcp_matrix.run.results import read_typed
from tests.report import events as ev

DATA = Path(__file__).parent / "data"


def cells_of(events):
    return [e for e in events if e["event"] in ("discovery", "call")]


def test_the_document_is_valid_against_its_published_schema(full_events):
    doc = json.loads(_dump(full_events))
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert (doc["format"], doc["version"]) == (FORMAT, VERSION) == ("mcp-matrix.report", 3)
    assert doc == report_document(full_events)  # what is written is the document, as JSON
    # the full shape the other writers render validates too (version 1)
    jsonschema.Draft202012Validator(SCHEMA).validate(_json(build_report(full_events)))


@pytest.mark.parametrize("build", [ev.full_run, ev.interrupted_run, ev.merged_runs])
def test_the_written_document_reads_back_to_every_cell_in_full(build):
    """Version 3 loses nothing: read back, it is the report every other writer renders."""
    events = build()
    full = read_report(json.loads(_dump(events)))
    assert full == _json(build_report(events))
    assert full["version"] == 1 and len(full["cells"]) == full["counts"]["cells"]
    cell = next(c for c in full["cells"] if c["tool"] == "memory_reflect")
    assert cell["kind"] == "discovery" and cell["model_schema"] is None and cell["findings"]


def test_a_value_repeated_on_many_cells_is_written_once():
    """One finding, evidence and schema on 400 tools x 3 profiles: each is in its table once and
    a cell is a row of numbers (version 1 repeated the finding and schema in every cell)."""
    events = ev.full_run()
    start = next(i for i, e in enumerate(events) if e["event"] == "discovery")
    degraded = next(e for e in events if e["event"] == "discovery" and e["verdict"] == "degraded")
    many = []
    for n in range(400):
        for profile in ("claude-code", "cursor", "stale-cache"):
            many.append({**copy.deepcopy(degraded), "profile": profile, "tool": f"tool_{n}"})
    small = _dump(events)
    big = _dump(events[:start] + many + events[start:])
    doc = json.loads(big)
    (prop,) = degraded["model_schema"]["properties"].values()
    assert big.count(json.dumps(prop, separators=(",", ":"))) == 1  # the schema's one property
    assert len(doc["schemas"]) == len(json.loads(small)["schemas"])
    assert big.count(degraded["findings"][0]["message"]) == 1  # the reason is the finding's
    assert len(doc["cells"]) == len(json.loads(small)["cells"]) + 1200
    assert (len(big) - len(small)) / 1200 < 80  # a row and its tool's name, not the finding
    cells = read_report(doc)["cells"][: len(many)]
    assert [(c["profile"], c["tool"], c["findings"]) for c in cells] == [
        (e["profile"], e["tool"], [_full_finding(f, e["index"]) for f in e["findings"]])
        for e in many
    ]


def test_the_document_is_written_with_the_c_encoder(full_events, monkeypatch):
    """``indent`` makes json.dumps use its pure-Python encoder (seconds per 100 MB): never."""

    def pure_python(*args, **kwargs):
        raise AssertionError("the pure-Python JSON encoder was used")

    monkeypatch.setattr(json.encoder, "_make_iterencode", pure_python)
    assert json.loads(_dump(full_events))["format"] == FORMAT


def test_reading_a_results_file_holds_a_repeated_finding_once(tmp_path):
    """A finding repeated on every tool of a profile (a long name breaking the session) is one
    object in memory, not one per cell: 5,000 tools x 36 profiles held 860 MB of copies."""
    events = ev.full_run()
    hidden = next(e for e in events if e["event"] == "discovery" and e["verdict"] == "hidden")
    copies = [{**copy.deepcopy(hidden), "tool": f"tool_{n}"} for n in range(3)]
    path = ev.write_jsonl(events + copies, tmp_path / "r.jsonl")
    read = [e for e in read_typed(path) if getattr(e, "tool", "").startswith("tool_")]
    assert len(read) == 3 and read[0].findings == tuple(map(CellFinding.build, hidden["findings"]))
    assert read[0].findings[0] is read[1].findings[0] is read[2].findings[0]


def test_a_version_1_document_reads_as_it_is_and_a_bad_one_is_an_input_error(full_events):
    old = _json(build_report(full_events))
    assert read_report(old) == old
    doc = json.loads(_dump(full_events))
    for broken, says in (
        ({**doc, "version": 9}, "report version 9 is not supported"),
        ({**doc, "format": "other"}, "not an mcp-matrix.report document"),
        ({**doc, "cells": [[0, 0, 0, 0, 10**6, 1, None, None]]}, "not an entry"),
        ({**doc, "cells": [[0, 0]]}, "is not a row of"),
        ({**doc, "findings": [[0, "m"]]}, "a finding is not a row of"),
        ({**doc, "kinds": [10**6]}, "a kind is not a row of"),
        ({**doc, "details": [["hidden"]]}, "a detail is not a row of"),
        ({k: v for k, v in doc.items() if k != "details"}, "malformed version-3 report"),
    ):
        with pytest.raises(InputError, match=says):
            read_report(broken, where="r.json")


def test_a_version_2_document_still_reads_to_every_cell_in_full():
    """The version-2 document 213d9e9 wrote for the full run (tests/report/data/report-v2.json)
    reads back as the version-1 shape of the same events, cell for cell."""
    old = json.loads((DATA / "report-v2.json").read_text(encoding="utf-8"))
    assert old["version"] == 2
    jsonschema.Draft202012Validator(SCHEMA).validate(old)
    full = read_report(old)
    want = _json(build_report(ev.full_run()))
    assert full["cells"] == want["cells"] and full["grid"] == want["grid"]
    assert {k: v for k, v in full.items() if k != "generated_by"} == {
        k: v for k, v in want.items() if k != "generated_by"
    }


def test_a_cells_pointer_follows_from_its_detail_and_index_as_version_2_wrote_it():
    """Version 3 writes no pointer: read back, each cell's equals the one version 2 stored
    (a call's at its first mutation, a discovery cell's at its deciding finding or tool)."""
    old = read_report(json.loads((DATA / "report-v2.json").read_text(encoding="utf-8")))
    new = read_report(json.loads(_dump(ev.full_run())))
    assert [c["pointer"] for c in new["cells"]] == [c["pointer"] for c in old["cells"]]
    assert any(c["pointer"] and "/properties/" in c["pointer"] for c in new["cells"])


def test_a_finding_is_a_row_naming_its_kind_and_a_property_schema_is_stored_once():
    """Findings that differ only in message and pointer share their kind (code, loss, blast
    radius, behaviour, evidence); a property schema two tools share is one entry."""
    events = ev.full_run()
    start = next(i for i, e in enumerate(events) if e["event"] == "discovery")
    degraded = next(e for e in events if e["event"] == "discovery" and e["verdict"] == "degraded")
    more = []
    for n in range(3):  # the same kind of finding, another message and tool each
        cell = {**copy.deepcopy(degraded), "tool": f"tool_{n}"}
        cell["findings"][0]["message"] += f" ({n})"
        more.append(cell)
    small, doc = (
        json.loads(_dump(events)),
        json.loads(_dump(events[:start] + more + events[start:])),
    )
    assert len(doc["findings"]) == len(small["findings"]) + 3
    assert sorted(k[0] for k in doc["kinds"]) == sorted(k[0] for k in small["kinds"])
    assert all(isinstance(f, list) and len(f) == 4 for f in doc["findings"])
    for table in ("schemas", "properties"):
        texts = [json.dumps(s, separators=(",", ":")) for s in doc[table]]
        assert len(texts) == len(set(texts))


def test_interrupted_and_merged_streams_are_valid_documents_too():
    for events in (ev.interrupted_run(), ev.merged_runs()):
        jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(_dump(events)))


def test_every_cell_of_the_stream_is_in_the_report_with_its_verdict(full_events):
    doc = build_report(full_events)
    want = [(e["profile"], e["tool"], e.get("case"), e["verdict"]) for e in cells_of(full_events)]
    got = [(c["profile"], c["tool"], c["case"], c["verdict"]) for c in doc["cells"]]
    assert got == want
    assert doc["counts"]["cells"] == len(want)
    # release-failing: a verdict over the threshold, or a tool lost in a required client (the
    # gate's own rule: the reports fail exactly the cells the gate fails on)
    lost = [
        e
        for e in cells_of(full_events)
        if e["event"] == "discovery"
        and e["verdict"] in ("hidden", "server-dropped", "session-broken")
    ]
    assert (
        doc["counts"]["release_failing"]
        == len(lost) + sum(e["verdict"] in RELEASE_FAILING for e in cells_of(full_events))
        == 3 + 4
    )


def test_the_grid_holds_the_worst_verdict_of_each_tool_and_client(full_events):
    doc = build_report(full_events)
    grid = {
        row["tool"]: dict(zip(doc["grid"]["profiles"], row["cells"])) for row in doc["grid"]["rows"]
    }
    assert grid["memory_store"] == {
        "claude-code": "intact",
        "cursor": "silent-corruption",
        "stale-cache": "silent-loss",
    }
    assert (
        grid["memory_reflect"]["claude-code"] == "hidden"
    )  # hidden is worse than its unreachable calls
    assert grid[ev.HOSTILE]["claude-code"] == "broken"


def test_run_metadata_profiles_and_skipped_calls_are_carried(full_events):
    doc = build_report(full_events)
    assert doc["server"] == {"name": "demo-server", "version": "1.2.0"}
    assert doc["mcp_matrix"] == "0.1.0"
    assert [p["name"] for p in doc["profiles"]] == ["claude-code", "cursor", "stale-cache"]
    assert doc["profiles"][0]["client"] == "Claude Code"
    assert doc["runs"][0]["finished"] and doc["complete"]
    assert [s["tool"] for s in doc["skipped"]] == ["list_items", ev.LONG]
    assert doc["profile_errors"] == [
        {
            "run": "run000000001",
            "profile": "stale-cache",
            "error": "RuntimeError: worker crashed <b>",
        }
    ]


def test_discovery_cells_point_into_the_snapshot_with_a_json_pointer(full_events):
    cells = {(c["profile"], c["tool"], c["case"]): c for c in build_report(full_events)["cells"]}
    assert (
        cells[("claude-code", "memory_reflect", None)]["pointer"]
        == "/tools/1/tool/inputSchema/anyOf"
    )
    assert cells[("claude-code", ev.LONG, None)]["pointer"] == "/tools/4/tool/name"
    assert (
        cells[("cursor", "memory_store", "store-basic")]["pointer"]
        == "/tools/0/tool/inputSchema/properties/tags"
    )


def test_a_list_level_failure_points_at_the_tool_that_caused_it():
    events = ev.full_run()
    events.insert(
        3,
        {
            "event": "discovery",
            "profile": "legacy",
            "tool": "search",
            "index": 5,
            "verdict": "session-broken",
            "model_name": None,
            "model_schema": None,
            "weakest_evidence": "issue",
            "findings": [
                {
                    "code": "root-combinator",
                    "message": "because of tool 'memory_reflect': inputSchema has anyOf "
                    "at the root; the model API rejects root combinators",
                    "culprit": "memory_reflect",
                    "pointer": "/inputSchema/anyOf",
                    "lost": True,
                    "blast_radius": "session",
                    "behaviour": "root-combinators",
                    "evidence": [],
                }
            ],
        },
    )
    cell = next(c for c in build_report(events)["cells"] if c["profile"] == "legacy")
    assert cell["pointer"] == "/tools/1/tool/inputSchema/anyOf"
    assert cell["blast_radius"] == "session"


def test_an_interrupted_run_is_reported_as_incomplete_with_what_it_gathered():
    doc = build_report(ev.interrupted_run())
    assert doc["complete"] is False
    assert doc["runs"][0]["finished"] is False and doc["runs"][0]["finished_at"] is None
    assert doc["counts"]["calls"] == 4


def test_a_merged_stream_keeps_each_run_and_tags_each_cell_with_its_run():
    doc = build_report(ev.merged_runs())
    assert [r["run_id"] for r in doc["runs"]] == ["run000000001", "run000000002"]
    assert doc["runs"][1]["server"]["version"] == "1.3.0"
    later = [c for c in doc["cells"] if c["run"] == "run000000002"]
    assert [(c["tool"], c["verdict"]) for c in later] == [
        ("memory_store", "visible"),
        ("memory_reflect", "visible"),
        ("memory_reflect", "intact"),
    ]


def test_a_custom_release_failing_list_changes_which_cells_fail(full_events):
    doc = build_report(full_events, failing=["hidden"])
    assert doc["release_failing"] == ["hidden"]
    assert doc["counts"]["release_failing"] == 3


def test_an_unknown_verdict_is_shown_as_unknown_and_an_unknown_event_kind_is_an_error_naming_it():
    # The results reader checks every line (an unknown kind or verdict in a file is exit 2 naming
    # the line); a typed cell made in code with a verdict from a newer version still renders.
    events = typed_events(ev.full_run())
    events.insert(3, CallCell(profile="claude-code", tool="search", case="x", verdict="novel"))
    doc = build_report(events)
    assert any(c["verdict"] == "novel" and c["symbol"] == "?" for c in doc["cells"])
    with pytest.raises(EventError) as info:
        build_report([*ev.full_run(), {"event": "future-event", "anything": 1}])
    assert info.value.key == "event" and "unknown event kind 'future-event'" in str(info.value)


def _dump(events) -> str:
    buf = io.StringIO()
    write_json(events, buf)
    return buf.getvalue()


def _json(value):
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _full_finding(f: dict, index: int) -> dict:
    """A results finding as the report's full shape shows it (with its snapshot pointer)."""
    return {
        "code": f["code"],
        "message": f["message"],
        "pointer": f["pointer"],
        "snapshot_pointer": f"/tools/{index}/tool" + f["pointer"],
        "lost": f["lost"],
        "blast_radius": f["blast_radius"],
        "behaviour": f["behaviour"],
        "evidence": f["evidence"],
    }
