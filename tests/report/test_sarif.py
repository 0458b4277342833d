"""SARIF 2.1.0: valid against the published schema; one result per finding, a rule per behaviour."""

from __future__ import annotations

import io
import json

import jsonschema
import pytest

from mcp_matrix.commands.report import write_report
from mcp_matrix.report.grid import RELEASE_FAILING
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
    from mcp_matrix.report.json_report import build_report

    failing = {
        (c["profile"], c["tool"], c.get("case")): c["release_failing"]
        for c in build_report(full_events)["cells"]
        if c["finding"]
    }
    levels = {}
    for r in sarif(full_events)["runs"][0]["results"]:
        for profile in r["properties"]["profiles"]:
            levels[(profile, r["properties"]["tool"], r["properties"]["case"])] = r["level"]
    assert levels == {k: "error" if v else "warning" for k, v in failing.items()}
    assert levels[("cursor", "memory_store", "store-basic")] == "error"
    assert levels[("cursor", ev.HOSTILE, "case|<b>1</b>")] == "warning"  # loud


TOOLS_SOURCE = """\
from demo import server


@server.tool(name="memory_store")
def store(agent_id, text): ...


@server.tool(name="memory_reflect")
def reflect(action, agent_id=None): ...


def list_items(ids): ...
"""


def test_with_the_tools_source_results_point_at_the_line_that_names_each_tool(
    full_events, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "tools.py").write_text(TOOLS_SOURCE, encoding="utf-8")
    write_report(
        full_events, "sarif", tmp_path / "matrix.sarif", sarif_source=tmp_path / "src" / "tools.py"
    )
    run = json.loads((tmp_path / "matrix.sarif").read_text(encoding="utf-8"))["runs"][0]
    assert [a["location"]["uri"] for a in run["artifacts"]] == ["src/tools.py"]  # relative
    assert not list(tmp_path.glob("*.snapshot*.json"))  # no generated file for alerts to sit on
    lines = TOOLS_SOURCE.splitlines()
    located = {}
    for r in run["results"]:
        physical = r["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "src/tools.py", "index": 0}
        line = physical.get("region", {}).get("startLine")
        located[r["properties"]["tool"]] = lines[line - 1] if line else None
    assert located["memory_store"] == '@server.tool(name="memory_store")'
    assert located["memory_reflect"] == '@server.tool(name="memory_reflect")'
    assert located["list_items"] == "def list_items(ids): ..."
    assert located["search"] is None  # not in the file: the file itself, no line
    hidden = next(r for r in run["results"] if r["ruleId"] == "root-combinators")
    logical = hidden["locations"][0]["logicalLocations"][0]
    assert logical == {
        "name": "memory_reflect",
        "fullyQualifiedName": "demo-server/memory_reflect",
        "kind": "function",
    }
    assert hidden["locations"][0]["properties"]["jsonPointer"] == "/tools/1/tool/inputSchema/anyOf"
    assert "docs/design.md#flatten-the-root" in hidden["message"]["text"]


def test_without_the_tools_source_locations_are_logical_and_a_notification_says_what_to_pass(
    full_events,
):
    run = sarif(full_events)["runs"][0]
    assert "artifacts" not in run
    for r in run["results"]:
        (location,) = r["locations"]
        assert "physicalLocation" not in location
        assert location["logicalLocations"][0]["name"] == r["properties"]["tool"]
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any("--sarif-source FILE" in n for n in notes)


def test_a_missing_tools_source_is_an_input_error_naming_the_file(full_events, tmp_path):
    from mcp_matrix.core.errors import InputError

    with pytest.raises(InputError) as e:
        write_report(full_events, "sarif", io.StringIO(), sarif_source=tmp_path / "nope.py")
    assert "nope.py" in str(e.value.where) and "defines the tools" in str(e.value)


def test_a_merged_stream_is_one_sarif_run_with_an_invocation_per_mcp_matrix_run():
    log = sarif(ev.merged_runs())
    assert len(log["runs"]) == 1  # GitHub takes at most one run per tool and category in a file
    run = log["runs"][0]
    assert run["automationDetails"]["id"] == "mcp-matrix/demo-server/"
    assert [i["properties"]["runId"] for i in run["invocations"]] == [
        "run000000001",
        "run000000002",
    ]
    assert run["properties"]["profiles"] == ["claude-code", "cursor", "stale-cache"]


def fingerprint_events() -> list[dict]:
    """The full run, with claude-code's memory_store call tolerated under stringify-arguments
    (corrupted under the same rule in cursor): one tool, case and rule, two verdicts."""
    tolerated = ev._call(
        "claude-code",
        "memory_store",
        "store-basic",
        "tolerated",
        "the client sent /tags stringified; the server gave the same result as for the intact call",
        behaviours=["stringify-arguments"],
        evidence=[ev.EV_STRINGIFY],
        weakest="issue",
    )
    mine = ("call", "claude-code", "memory_store", "store-basic")
    return [
        tolerated if (e["event"], e.get("profile"), e.get("tool"), e.get("case")) == mine else e
        for e in ev.full_run()
    ]


def test_every_result_has_its_own_fingerprint_and_every_client_is_in_one_result_per_rule():
    run = sarif(fingerprint_events())["runs"][0]
    prints = [r["partialFingerprints"]["mcpMatrixCell/v3"] for r in run["results"]]
    assert len(prints) == len(set(prints))
    by_rule = {}
    for r in run["results"]:
        for profile in r["properties"]["profiles"]:
            key = (r["ruleId"], r["properties"]["tool"], r["properties"]["case"], profile)
            assert key not in by_rule, key
            by_rule[key] = r["partialFingerprints"]["mcpMatrixCell/v3"]
    corrupted = by_rule[("stringify-arguments", "memory_store", "store-basic", "cursor")]
    tolerated = by_rule[("stringify-arguments", "memory_store", "store-basic", "claude-code")]
    assert corrupted != tolerated


def test_two_tools_of_one_name_are_two_alerts():
    events = ev.full_run()
    first = next(i for i, e in enumerate(events) if e["event"] == "discovery")
    twin = dict(events[first + 1], index=6)  # claude-code hides memory_reflect, listed twice
    events.insert(first + 2, twin)
    run = sarif(events)["runs"][0]
    hidden = [r for r in run["results"] if r["properties"]["verdict"] == "hidden"]
    hidden = [r for r in hidden if r["properties"]["tool"] == "memory_reflect"]
    assert len(hidden) == 2
    assert len({r["partialFingerprints"]["mcpMatrixCell/v3"] for r in hidden}) == 2


def test_a_fingerprint_stays_the_same_when_other_clients_change():
    def prints(events):
        return {
            (r["ruleId"], r["properties"]["tool"], r["properties"]["verdict"]): r[
                "partialFingerprints"
            ]["mcpMatrixCell/v3"]
            for r in sarif(events)["runs"][0]["results"]
        }

    without_cursor = [
        e
        for e in ev.full_run()
        if not (e["event"] in ("discovery", "call") and e["profile"] == "cursor")
    ]
    full, fewer = prints(ev.full_run()), prints(without_cursor)
    assert fewer and all(full[k] == v for k, v in fewer.items())


def test_every_rule_has_a_full_description_and_help_with_the_fix(full_events):
    rules = sarif(full_events)["runs"][0]["tool"]["driver"]["rules"]
    for rule in rules:
        assert rule["fullDescription"]["text"], rule["id"]
        assert rule["help"]["text"].startswith("Fix: ") and len(rule["help"]["text"]) > 20
        assert rule["help"]["markdown"].startswith("**Fix:** ")
    root = next(r for r in rules if r["id"] == "root-combinators")
    assert "docs/design.md#flatten-the-root" in root["help"]["text"]


def test_results_over_githubs_limit_keep_the_most_severe_and_say_how_many_were_left_out(
    full_events, monkeypatch
):
    from mcp_matrix.report import sarif as sarif_module

    monkeypatch.setattr(sarif_module, "MAX_RESULTS", 3)
    run = sarif(full_events)["runs"][0]
    assert len(run["results"]) == 3 and all(r["level"] == "error" for r in run["results"])
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any("results left out: GitHub accepts at most 3 per run" in n for n in notes)


def test_past_the_limit_the_warnings_kept_are_the_most_severe(full_events, monkeypatch):
    from mcp_matrix.core.verdicts import rank
    from mcp_matrix.report import sarif as sarif_module

    every = sarif(full_events)["runs"][0]["results"]
    errors = sum(r["level"] == "error" for r in every)
    monkeypatch.setattr(sarif_module, "MAX_RESULTS", errors + 2)
    kept = sarif(full_events)["runs"][0]["results"]
    warnings = sorted(
        (r["properties"]["verdict"] for r in every if r["level"] == "warning"), key=rank
    )
    assert [r["properties"]["verdict"] for r in kept if r["level"] == "warning"] == warnings[:2]
    assert "degraded" not in [r["properties"]["verdict"] for r in kept]  # the least severe


def test_an_interrupted_run_is_marked_unsuccessful():
    inv = sarif(ev.interrupted_run())["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert "did not finish" in inv["toolExecutionNotifications"][0]["message"]["text"]


def github_problems(log: dict) -> list[str]:
    """What GitHub code scanning rejects or truncates, from its documented limits and rules:
    https://docs.github.com/en/code-security/code-scanning/troubleshooting-sarif-uploads/results-exceed-limit
    (runs per file 20, results per run 25,000, rules per run 25,000, locations per result 1,000,
    tags per rule 20) and the upload rules (one run per tool and category in a file, a ruleId
    for every result, relative artifact URIs, 1-based lines; a file in every location: GitHub
    rejects the whole file when a result has only a logical location, "expected a physical
    location", as https://github.com/KKloudTarus/synapse-ce/pull/51 met)."""
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
            if not res["locations"]:
                problems.append("a result without a location")
            for loc in res["locations"] + res.get("relatedLocations", []):
                if "physicalLocation" not in loc:  # "expected a physical location": all rejected
                    problems.append("a location without a file (physicalLocation)")
                    continue
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
    (tmp_path / "tools.py").write_text(TOOLS_SOURCE, encoding="utf-8")
    write_report(events(), "sarif", tmp_path / "matrix.sarif", sarif_source="tools.py")
    log = json.loads((tmp_path / "matrix.sarif").read_text(encoding="utf-8"))
    assert github_problems(log) == []
    assert [a["location"]["uri"] for a in log["runs"][0]["artifacts"]] == ["tools.py"]


def test_githubs_rules_catch_a_log_of_logical_locations_only(full_events):
    assert "a location without a file (physicalLocation)" in github_problems(sarif(full_events))


def test_a_bidi_control_in_a_tool_name_is_an_escape_in_the_alert_message():
    """GitHub shows an alert's message text: a tool named with U+202E read backwards there, and
    U+2028 broke its line (the properties keep the name as the server sent it)."""
    events = ev.full_run()
    tricky = "pay\u202etsil\u2028x"
    for e in events:
        if e.get("tool") == "memory_reflect":
            e["tool"] = tricky
    results = [r for r in sarif(events)["runs"][0]["results"] if r["properties"]["tool"] == tricky]
    assert results
    for r in results:
        assert "pay\\u202etsil\\u2028x" in r["message"]["text"]
        assert "\u202e" not in r["message"]["text"] and "\u2028" not in r["message"]["text"]
