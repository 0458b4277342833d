"""SARIF 2.1.0: valid against the published schema; one result per finding, a rule per behaviour."""

from __future__ import annotations

import io
import json

import jsonschema
import pytest

from matrix.commands.report import write_report
from matrix.report.grid import RELEASE_FAILING
from tests.report import events as ev
from tests.report.conftest import DATA


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    # Vendored from oasis-tcs/sarif-spec, sarif-2.1/schema/sarif-schema-2.1.0.json (the errata01 text).
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def sarif(events, failing=RELEASE_FAILING) -> dict:
    buf = io.StringIO()
    write_report(events, "sarif", buf, failing)
    return json.loads(buf.getvalue())


@pytest.mark.parametrize(
    "events", [ev.full_run, ev.interrupted_run, ev.merged_runs], ids=lambda f: f.__name__
)
def test_the_log_is_valid_sarif_2_1_0(validator, events):
    log = sarif(events())
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    assert log["version"] == "2.1.0"


def test_there_is_one_result_per_finding_and_a_rule_per_behaviour(full_events):
    run = sarif(full_events)["runs"][0]
    findings = [
        e
        for e in full_events
        if e["event"] in ("discovery", "call") and e["verdict"] not in ("intact", "visible")
    ]
    assert len(run["results"]) == len(findings) == 12
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert len(rules) == len(set(rules))
    assert {
        "root-combinators",
        "strip-keywords",
        "tool-name",
        "array-items-required",
        "stringify-arguments",
        "client-validate",
    } <= set(rules)
    # With no behaviour involved, the verdict names the rule.
    assert {"broken", "accepted-invalid", "failed"} <= set(rules)
    for r in run["results"]:
        assert rules[r["ruleIndex"]] == r["ruleId"]


def test_release_failing_verdicts_are_errors_and_the_rest_warnings(full_events):
    results = sarif(full_events)["runs"][0]["results"]
    levels = {
        (r["properties"]["profile"], r["properties"]["tool"], r["properties"]["case"]): r["level"]
        for r in results
    }
    assert levels[("cursor", "memory_store", "store-basic")] == "error"
    assert levels[("claude-code", "memory_reflect", None)] == "warning"
    assert sum(level == "error" for level in levels.values()) == 4


def test_results_point_at_the_snapshot_with_a_json_pointer(full_events):
    results = sarif(full_events)["runs"][0]["results"]
    hidden = next(
        r for r in results if r["ruleId"] == "root-combinators" and r["properties"]["case"] is None
    )
    location = hidden["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "snapshot.json"
    assert (
        location["logicalLocations"][0]["fullyQualifiedName"] == "/tools/1/tool/inputSchema/anyOf"
    )
    assert location["properties"]["jsonPointer"] == "/tools/1/tool/inputSchema/anyOf"
    assert "decision record 014" in hidden["message"]["text"]


def test_a_merged_stream_gives_one_sarif_run_per_mcp_matrix_run():
    log = sarif(ev.merged_runs())
    assert [r["automationDetails"]["id"] for r in log["runs"]] == [
        "mcp-matrix/run000000001",
        "mcp-matrix/run000000002",
    ]
    assert log["runs"][1]["results"] == []  # the later release fixed every finding


def test_an_interrupted_run_is_marked_unsuccessful():
    inv = sarif(ev.interrupted_run())["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert "did not finish" in inv["toolExecutionNotifications"][0]["message"]["text"]
