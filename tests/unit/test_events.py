"""Typed events: every kind round-trips, follows its published schema, and a bad line names its key."""

from __future__ import annotations

import dataclasses
import json

import pytest
from jsonschema import Draft202012Validator

from mcp_matrix.core.errors import InputError
from mcp_matrix.core.event_values import (
    CellEvidence,
    CellFinding,
    CellMutation,
    CellViolation,
    ListedProfile,
)
from mcp_matrix.core.events import (
    EVENTS,
    CallCell,
    DiscoveryCell,
    EventError,
    ProfileError,
    RunFinished,
    RunStarted,
    SchemaStored,
    Sharing,
    Skipped,
    SnapshotTaken,
    event_from_json,
)
from mcp_matrix.core.json_record import JsonRecord
from mcp_matrix.core.schemas import load_schema
from mcp_matrix.core.verdicts import CALL_VERDICTS, DISCOVERY_VERDICTS
from mcp_matrix.run.results import ResultsWriter, cells, read_events, read_typed

FINDING = {
    "code": "keyword-stripped",
    "message": "format is stripped",
    "pointer": "/inputSchema/properties/q/format",
    "lost": True,
    "materiality": "constraint",
    "blast_radius": "tool",
    "behaviour": "strip-keywords",
    "evidence": [{"level": "doc", "source": "https://example.com", "note": ""}],
}

ONE_OF_EACH = [
    RunStarted(
        run_id="r1",
        started_at="2026-12-01T00:00:00+00:00",
        mcp_matrix="0.1.0",
        target={"kind": "server", "server": "memory"},
        server={"name": "m", "version": "1"},
        server_key={"name": "memory", "source": "slug"},
        protocolVersion="2025-11-25",
        cases="cases.yaml",
        profiles=(
            {
                "name": "cursor",
                "client": "Cursor",
                "versions": "1.x",
                "models": "",
                "weakest_evidence": "issue",
                "required_by_default": True,
            },
        ),
    ),
    SnapshotTaken(snapshot={"format": "mcp-matrix.snapshot", "version": 2, "tools": []}),
    SchemaStored(id=0, schema={"type": "object"}),
    DiscoveryCell(
        profile="cursor",
        tool="find",
        verdict="degraded",
        index=0,
        model_name="find",
        model_schema={"type": "object"},
        findings=(FINDING,),
        weakest_evidence="doc",
    ),
    Skipped(tool="drop", case="auto", reason="may write (not readOnlyHint: true)"),
    Skipped(profile="cursor", tool="find", case="one", reason="the run's deadline passed"),
    CallCell(
        profile="cursor",
        tool="find",
        case="one",
        verdict="silent-loss",
        origin="file",
        expect="success",
        reason="lost q",
        mutations=({"kind": "removed", "pointer": "/q", "before": "x", "after": None},),
        answer={"isError": False},
        behaviours=("strip-unknown-arguments",),
        evidence=({"level": "code", "source": "x.ts@1", "note": ""},),
        weakest_evidence="code",
        sometimes=("stringify",),
        stale=True,
        stale_for="the session",
        violations=(
            {
                "validator": "required",
                "validator_value": ["q"],
                "path": [],
                "schema_path": ["required"],
                "instance": {},
                "names": ["q"],
                "message": "'q' is a required property",
            },
        ),
        notes=("a note",),
        variants=(
            {"verdict": "silent-loss", "sometimes": ["stringify"]},
            {"verdict": "intact", "sometimes": []},
        ),
        frequency="sometimes",
    ),
    Sharing(
        mode="sessions",
        sessions=(("cursor", "zed"), ("claude-code",)),
        calls=True,
        reason="cursor and zed send the same bytes",
    ),
    ProfileError(profile="zed", error="RuntimeError: boom"),
    RunFinished(
        finished_at="2026-12-01T00:00:01+00:00",
        measured=True,
        counts={"degraded": 1},
        deadline_passed=False,
    ),
    RunFinished(
        measured=False,
        error={"kind": "timeout", "message": "no answer", "detail": "", "stderr_tail": []},
    ),
]


def test_every_event_kind_has_a_class_and_a_schema_of_its_own():
    defs = load_schema("results")["$defs"]
    assert set(EVENTS) == {e.KIND for e in ONE_OF_EACH}
    assert set(EVENTS) <= set(defs)
    assert set(load_schema("results")["properties"]["event"]["enum"]) == set(EVENTS)
    refs = {r["$ref"].rsplit("/", 1)[1] for r in load_schema("results")["oneOf"]}
    assert refs == set(EVENTS) | {"entry"}  # version 3's entry and cell lines have no event


@pytest.mark.parametrize("kind", sorted(EVENTS))
def test_a_class_has_exactly_the_keys_of_its_schema_and_requires_the_same_ones(kind):
    cls, schema = EVENTS[kind], load_schema("results")["$defs"][kind]
    fields = {f.name for f in dataclasses.fields(cls)}
    # version 2 writes a discovery cell's schema by reference; version 3 the snapshot's by node
    wire_only = {"model_schema_ref", "nodes"}
    assert fields | {"event"} == set(schema["properties"]) - wire_only
    no_default = {
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    required_with_default = (
        {"format", "version"} if kind == "run-started" else set()
    )  # the defaults are ours
    assert no_default | required_with_default | {"event"} == set(schema["required"])


def test_the_verdicts_a_schema_allows_are_the_vocabulary():
    defs = load_schema("results")["$defs"]
    assert set(defs["discovery"]["properties"]["verdict"]["enum"]) == set(DISCOVERY_VERDICTS)
    assert set(defs["call"]["properties"]["verdict"]["enum"]) == set(CALL_VERDICTS)


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: e.KIND)
def test_an_event_round_trips_through_json_and_follows_the_published_schema(event):
    data = json.loads(json.dumps(event.to_json()))
    Draft202012Validator(load_schema("results")).validate(data)
    assert event_from_json(data) == event
    assert event_from_json(data).to_json() == data


@pytest.mark.parametrize(
    "kind, key",
    [
        ("discovery", "verdict"),
        ("discovery", "profile"),
        ("call", "case"),
        ("call", "tool"),
        ("skipped", "reason"),
        ("profile-error", "error"),
        ("run-finished", "measured"),
    ],
)
def test_a_missing_key_is_an_event_error_naming_it(kind, key):
    data = next(e for e in ONE_OF_EACH if e.KIND == kind).to_json()
    del data[key]
    with pytest.raises(EventError) as info:
        event_from_json(data)
    assert info.value.key == key and f"missing key {key!r}" in str(info.value)


def test_a_mistyped_nested_key_names_its_path():
    data = ONE_OF_EACH[3].to_json()
    data["findings"] = [{"code": "x", "message": 3}]
    with pytest.raises(EventError) as info:
        event_from_json(data)
    assert info.value.key == "findings.0.message"


def test_an_unknown_event_kind_is_an_error_listing_the_known_ones():
    with pytest.raises(EventError, match="unknown event kind 'cell'; expected one of run-started"):
        event_from_json({"event": "cell"})


def _results(tmp_path, events) -> str:
    path = tmp_path / "r.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        writer = ResultsWriter(handle)
        for e in events:
            writer(e)
    return path


def test_a_results_file_with_a_cell_missing_its_verdict_is_an_input_error_naming_file_line_and_key(
    tmp_path,
):
    path = _results(tmp_path, ONE_OF_EACH[:2])
    cell = ONE_OF_EACH[6].to_json()
    del cell["verdict"]
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(cell) + "\n")
    with pytest.raises(InputError) as info:
        read_events(path)
    assert info.value.where == f"{path}:3"
    assert info.value.message == "call event: missing key 'verdict'"


def test_the_writer_takes_typed_events_and_reading_gives_them_back(tmp_path):
    events = [e for e in ONE_OF_EACH if e.KIND != "schema"]
    path = _results(tmp_path, events)
    assert read_typed(path) == events
    assert cells(read_events(path)) == [ONE_OF_EACH[3], ONE_OF_EACH[6]]


def test_the_call_pipelines_dict_becomes_a_cell_and_an_unknown_key_is_refused():
    data = ONE_OF_EACH[6].to_json()
    assert CallCell.of(data) == ONE_OF_EACH[6]
    with pytest.raises(TypeError):
        CallCell.of({**data, "not_a_field": 1})


def test_the_values_inside_events_are_typed_and_a_nested_value_class_follows_its_schema_def():
    discovery, call, started = ONE_OF_EACH[3], ONE_OF_EACH[6], ONE_OF_EACH[0]
    assert isinstance(discovery.findings[0], CellFinding)
    assert discovery.findings[0].evidence[0] == CellEvidence("doc", "https://example.com", "")
    assert isinstance(call.mutations[0], CellMutation) and call.mutations[0].pointer == "/q"
    assert isinstance(call.violations[0], CellViolation) and call.violations[0].names == ("q",)
    assert [v.verdict for v in call.variants] == ["silent-loss", "intact"]
    assert isinstance(started.profiles[0], ListedProfile) and started.profiles[0].name == "cursor"
    defs = load_schema("results")["$defs"]
    for cls, name in (
        (CellFinding, "finding"),
        (CellEvidence, "evidence"),
        (CellMutation, "mutation"),
        (CellViolation, "violation"),
    ):
        fields = {f.name for f in dataclasses.fields(cls)}
        # core.evidence.Evidence writes "checked" too: the schema does not close the object
        assert fields - {"checked"} == set(defs[name]["properties"]), name
        required = {f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING}
        assert required == set(defs[name]["required"]), name


def test_a_key_a_nested_object_lacks_stays_absent_so_a_line_read_and_written_is_the_same_bytes():
    line = json.dumps(
        {
            "event": "discovery",
            "profile": "p",
            "tool": "t",
            "index": 0,
            "verdict": "hidden",
            "model_name": None,
            "model_schema": None,
            "findings": [{"code": "c", "message": "m", "evidence": [{"level": "assumed"}]}],
            "weakest_evidence": "assumed",
        }
    )
    typed = event_from_json(json.loads(line))
    assert typed.findings[0].pointer is None and typed.findings[0].evidence[0].note is None
    assert json.dumps(typed.to_json()) == line


def test_a_finding_of_the_model_becomes_the_cells_finding_with_every_key_a_run_writes():
    from mcp_matrix.core.evidence import Evidence
    from mcp_matrix.core.model import Finding, ToolView

    finding = Finding(
        "c", "m", "/p", lost=True, evidence=(Evidence("doc", "s", "n", "2026-01-01"),)
    )
    view = ToolView("t", 0, "degraded", "t", {"type": "object"}, (finding,))
    cell = DiscoveryCell.of("p", view)
    assert cell.to_json()["findings"] == [finding.to_json()]


def test_reading_checked_lines_builds_their_values_without_running_a_constructor(
    tmp_path, monkeypatch
):
    """A line already checked against the schema is read by its class's reader (core/events.py
    ``_Codec``): each field set from its key, no ``__init__``/``__post_init__`` per value."""
    events = [e for e in ONE_OF_EACH if e.KIND != "schema"]
    path = _results(tmp_path, events)
    built: list[type] = []
    monkeypatch.setattr(JsonRecord, "__post_init__", lambda self: built.append(type(self)))
    assert read_typed(path) == events
    assert built == []


def test_json_not_checked_that_lacks_a_required_key_or_has_an_unknown_one_is_a_type_error():
    given = {"code": "c", "message": "m", "evidence": [{"level": "doc"}]}
    assert CellFinding.build(given) == CellFinding("c", "m", evidence=(CellEvidence("doc"),))
    with pytest.raises(TypeError, match="message"):
        CellFinding.build({"code": "c"})
    with pytest.raises(TypeError, match="extra"):
        CellFinding.build({**given, "extra": 1}, strict=True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda cell: cell.pop("verdict"), "discovery event: missing key 'verdict'"),
        (
            lambda cell: cell["findings"][1].pop("code"),
            "discovery event: missing key 'findings.1.code'",
        ),
    ],
    ids=["a repeated findings list, the cell's own key missing", "a finding not seen before"],
)
def test_a_line_repeating_checked_findings_is_still_checked_for_the_rest(tmp_path, change, message):
    """A findings list equal to one a line was checked with is not checked again; the rest
    of the line is, and a list that differs is checked in full."""
    path = _results(tmp_path, ONE_OF_EACH[:2])
    cell = ONE_OF_EACH[3].to_json()
    cell["findings"] = [FINDING, FINDING]
    changed = json.loads(json.dumps(cell))
    change(changed)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(cell) + "\n" + json.dumps(changed) + "\n")
    with pytest.raises(InputError) as info:
        read_events(path)
    assert info.value.where == f"{path}:4"
    assert info.value.message == message
