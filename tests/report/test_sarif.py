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


def test_there_is_one_result_per_tool_and_rule_naming_every_client_and_a_rule_per_behaviour(
    full_events,
):
    run = sarif(full_events)["runs"][0]
    findings = [
        e
        for e in full_events
        if e["event"] in ("discovery", "call") and e["verdict"] not in ("intact", "visible")
    ]
    assert sum(len(r["properties"]["profiles"]) for r in run["results"]) == len(findings) == 12
    keys = [
        (
            r["properties"]["tool"],
            r["properties"]["case"],
            r["ruleId"],
            r["properties"]["verdict"],
            r["properties"]["jsonPointer"],
        )
        for r in run["results"]
    ]
    assert len(keys) == len(set(keys))
    for r in run["results"]:
        assert all(p in r["message"]["text"] for p in r["properties"]["profiles"])
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
    levels = {}
    for r in results:
        for profile in r["properties"]["profiles"]:
            levels[(profile, r["properties"]["tool"], r["properties"]["case"])] = r["level"]
    assert levels[("cursor", "memory_store", "store-basic")] == "error"
    assert levels[("claude-code", "memory_reflect", None)] == "warning"
    assert sum(level == "error" for level in levels.values()) == 4


def test_results_point_at_the_line_of_the_tool_in_the_snapshot_written_beside_the_sarif(
    full_events, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    write_report(full_events, "sarif", tmp_path / "out" / "matrix.sarif")
    log = json.loads((tmp_path / "out" / "matrix.sarif").read_text(encoding="utf-8"))
    run = log["runs"][0]
    assert [a["location"]["uri"] for a in run["artifacts"]] == ["out/matrix.snapshot.json"]
    lines = (tmp_path / "out" / "matrix.snapshot.json").read_text(encoding="utf-8").splitlines()
    snapshot = next(e["snapshot"] for e in full_events if e["event"] == "snapshot")
    assert json.loads("\n".join(lines)) == snapshot  # the snapshot as the run took it
    hidden = next(
        r
        for r in run["results"]
        if r["ruleId"] == "root-combinators" and r["properties"]["case"] is None
    )
    location = hidden["locations"][0]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "out/matrix.snapshot.json", "index": 0}
    assert lines[physical["region"]["startLine"] - 1].strip() == '"name": "memory_reflect",'
    assert (
        location["logicalLocations"][0]["fullyQualifiedName"] == "/tools/1/tool/inputSchema/anyOf"
    )
    assert location["properties"]["jsonPointer"] == "/tools/1/tool/inputSchema/anyOf"
    assert "decision record 014" in hidden["message"]["text"]
    for r in run["results"]:  # the tool's line, or the culprit's for a list the client dropped
        line = r["locations"][0]["physicalLocation"]["region"]["startLine"]
        index = int(r["properties"]["jsonPointer"].split("/")[2])
        assert (
            lines[line - 1].strip()
            == f'"name": {json.dumps(snapshot["tools"][index]["tool"]["name"])},'
        )


def test_a_merged_stream_is_one_sarif_run_with_an_invocation_per_mcp_matrix_run():
    log = sarif(ev.merged_runs())
    assert len(log["runs"]) == 1  # GitHub takes at most one run per tool and category in a file
    run = log["runs"][0]
    assert run["automationDetails"]["id"].startswith("mcp-matrix/") and run["automationDetails"][
        "id"
    ].endswith("/")
    assert [i["properties"]["runId"] for i in run["invocations"]] == [
        "run000000001",
        "run000000002",
    ]
    assert len(run["artifacts"]) == 2  # two releases, two distinct snapshots
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert uris == {"mcp-matrix.snapshot.json"}  # the later release fixed every finding


def test_results_over_githubs_limit_keep_the_most_severe_and_say_how_many_were_left_out(
    full_events, monkeypatch
):
    from matrix.report import sarif as sarif_module

    monkeypatch.setattr(sarif_module, "MAX_RESULTS", 3)
    run = sarif(full_events)["runs"][0]
    assert len(run["results"]) == 3 and all(r["level"] == "error" for r in run["results"])
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any("results left out: GitHub accepts at most 3 per run" in n for n in notes)


def test_an_interrupted_run_is_marked_unsuccessful():
    inv = sarif(ev.interrupted_run())["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert "did not finish" in inv["toolExecutionNotifications"][0]["message"]["text"]


def github_problems(log: dict) -> list[str]:
    """What GitHub code scanning rejects or truncates, from its documented limits and rules:
    https://docs.github.com/en/code-security/code-scanning/troubleshooting-sarif-uploads/results-exceed-limit
    (runs per file 20, results per run 25,000, rules per run 25,000, locations per result 1,000,
    tags per rule 20) and the upload rules (one run per tool and category in a file, a ruleId
    for every result, relative artifact URIs, 1-based lines)."""
    problems = []
    runs = log["runs"]
    if len(runs) > 20:
        problems.append(f"{len(runs)} runs > 20")
    categories = [
        (r["tool"]["driver"]["name"], r.get("automationDetails", {}).get("id")) for r in runs
    ]
    if len(categories) != len(set(categories)):
        problems.append("several runs of one tool and category")
    for run in runs:
        rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
        if len(run["results"]) > 25_000 or len(rules) > 25_000:
            problems.append("over 25,000 results or rules in a run")
        problems += [
            f"rule {i} has over 20 tags"
            for i, r in rules.items()
            if len(r["properties"]["tags"]) > 20
        ]
        for res in run["results"]:
            if res.get("ruleId") not in rules or not res["message"]["text"]:
                problems.append(f"result without a known rule or a message: {res.get('ruleId')}")
            if len(res["locations"]) > 1000:
                problems.append("over 1,000 locations in a result")
            for loc in res["locations"] + res.get("relatedLocations", []):
                uri = loc["physicalLocation"]["artifactLocation"]["uri"]
                if uri.startswith("/") or "://" in uri:
                    problems.append(f"artifact URI not relative to the repository: {uri}")
                if loc["physicalLocation"].get("region", {}).get("startLine", 1) < 1:
                    problems.append("a line below 1")
    return problems


@pytest.mark.parametrize(
    "events", [ev.full_run, ev.interrupted_run, ev.merged_runs], ids=lambda f: f.__name__
)
def test_the_log_keeps_githubs_rules(events, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_report(events(), "sarif", tmp_path / "matrix.sarif")
    log = json.loads((tmp_path / "matrix.sarif").read_text(encoding="utf-8"))
    assert github_problems(log) == []
    for artifact in log["runs"][0]["artifacts"]:
        assert (
            tmp_path / artifact["location"]["uri"]
        ).is_file()  # every location's file was written
