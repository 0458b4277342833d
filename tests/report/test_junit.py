"""JUnit XML: one testcase per cell; release-failing verdicts are failures, the rest pass."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest
import xmlschema

from mcp_matrix.commands.report import write_report
from mcp_matrix.report.grid import RELEASE_FAILING
from mcp_matrix.report.junit import xml_text
from tests.report import events as ev
from tests.report.conftest import DATA

SERVER = "demo-server"  # the fixtures' server (its config key): the first part of every classname


def junit_text(events, failing=RELEASE_FAILING) -> str:
    buf = io.StringIO()
    write_report(events, "junit", buf, failing)
    return buf.getvalue()


def junit(events, failing=RELEASE_FAILING) -> ET.Element:
    return ET.fromstring(junit_text(events, failing))


@pytest.fixture(scope="module")
def junit_10() -> xmlschema.XMLSchema:
    # Vendored from jenkinsci/xunit-plugin (see the note at the top of the file).
    return xmlschema.XMLSchema(str(DATA / "junit-10.xsd"))


def merged_shards_of_two_servers() -> list[dict]:
    """Two shards of the full run's server and one of another server, as ``merge`` joins them."""
    other = [dict(e) for e in ev.full_run()]
    for e in other:
        if e["event"] == "run-started":
            e["run_id"] = "run000000009"
            e["target"] = {"kind": "server", "server": "billing --version 2", "transport": "stdio"}
    return ev.full_run() + ev.interrupted_run() + other


@pytest.mark.parametrize(
    "events",
    [ev.full_run, ev.interrupted_run, ev.merged_runs, merged_shards_of_two_servers],
    ids=lambda f: f.__name__,
)
def test_the_xml_is_valid_against_junit_10_xsd(junit_10, events):
    errors = list(junit_10.iter_errors(junit_text(events())))
    assert not errors, "\n".join(str(e)[:300] for e in errors[:5])


@pytest.mark.parametrize(
    "events", [ev.merged_runs, merged_shards_of_two_servers], ids=lambda f: f.__name__
)
def test_test_ids_are_unique_across_merged_shards_and_servers(events):
    root = junit(events())
    ids = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(ids) == len(set(ids))


def test_classnames_name_the_server_then_the_profile():
    root = junit(merged_shards_of_two_servers())
    classnames = {c.get("classname") for c in root.iter("testcase")}
    assert {f"{SERVER}.claude-code", "billing.claude-code"} <= classnames


def cells_of(events):
    return [e for e in events if e["event"] in ("discovery", "call")]


def test_there_is_one_testcase_per_cell_named_by_profile_and_tool_or_case(full_events):
    root = junit(full_events)
    cases = [
        c
        for c in root.iter("testcase")
        if not c.get("classname").endswith(".not-called") and c.get("name") != "(profile error)"
    ]
    want = [
        (f"{SERVER}.{e['profile']}", e["tool"] + (f"::{e['case']}" if e["event"] == "call" else ""))
        for e in cells_of(full_events)
    ]
    order = [
        "claude-code",
        "cursor",
        "stale-cache",
    ]  # one suite per profile, cells in stream order within it
    assert [(c.get("classname"), c.get("name")) for c in cases] == sorted(
        want, key=lambda w: order.index(w[0].split(".", 1)[1])
    )


def test_failures_are_exactly_the_release_failing_cells_with_the_reason_as_message(full_events):
    root = junit(full_events)
    failures = list(root.iter("failure"))
    # a verdict over the threshold, or a tool hidden in a required client: what fails the gate
    bad = [
        e
        for e in cells_of(full_events)
        if e["verdict"] in RELEASE_FAILING or (e["event"], e["verdict"]) == ("discovery", "hidden")
    ]
    assert len(failures) == len(bad) == int(root.get("failures")) == 7
    by_type = {f.get("type"): f for f in failures}
    assert set(by_type) == {
        "broken",
        "silent-corruption",
        "silent-loss",
        "accepted-invalid",
        "hidden",
    }
    assert (
        by_type["silent-loss"].get("message")
        == "the client sent /importance removed; the server reported success on the reduced call"
    )
    assert (
        "fix: For a write tool whose schema evolves, add a raw twin" in by_type["silent-loss"].text
    )


def test_passing_cells_carry_their_verdict_and_fix_in_system_out(full_events):
    root = junit(full_events, failing=())  # --fail-on none: nothing fails, not even a lost tool
    case = next(
        c
        for c in root.iter("testcase")
        if c.get("classname") == f"{SERVER}.claude-code" and c.get("name") == "memory_reflect"
    )
    out = case.find("system-out").text
    assert out.startswith("hidden: ")
    assert "fix: " in out and "docs/design.md#flatten-the-root" in out
    assert case.find("failure") is None


def test_a_given_list_of_verdicts_decides_the_failures(full_events):
    root = junit(full_events, failing=["hidden", "loud"])
    assert sorted(f.get("type") for f in root.iter("failure")) == [
        "hidden",
        "hidden",
        "hidden",
        "loud",
    ]


def test_hostile_text_survives_the_round_trip_and_forbidden_characters_become_escapes(full_events):
    root = junit(full_events)
    names = [c.get("name") for c in root.iter("testcase")]
    assert ev.HOSTILE in names
    broken = next(f for f in root.iter("failure") if f.get("type") == "broken")
    assert (
        broken.get("message")
        == "timeout: no answer within 30.0s\\u0007\nstderr: Traceback `boom` | </script>"
    )
    assert xml_text("a\x00b\x1bc\ud800d\ufffee\tf") == "a\\u0000b\\u001bc\\ud800d\\ufffee\tf"


def test_line_separators_and_bidi_controls_in_a_name_are_shown_as_escapes():
    """A server's tool name with U+202E reads backwards where CI lists the test (and U+2028 or
    U+0085 breaks its line): XML allows them, so the report wrote them as they were."""
    assert xml_text("pay\u202eyalp\u2028x\x85y\u2066z\ufeff") == (
        "pay\\u202eyalp\\u2028x\\u0085y\\u2066z\\ufeff"
    )


def test_suites_count_their_tests_and_skipped_calls_and_profile_errors_are_shown(full_events):
    root = junit(full_events)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == [
        f"{p} on {SERVER}" for p in ("claude-code", "cursor", "stale-cache")
    ] + [f"not called on {SERVER}"]
    assert suites[f"stale-cache on {SERVER}"].get("errors") == "1"
    assert suites[f"not called on {SERVER}"].get("skipped") == "2"
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites.values()) == 30 + 1 + 2
    assert root.find(".//error").get("message") == "RuntimeError: worker crashed <b>"


def test_an_interrupted_run_still_writes_well_formed_xml():
    root = junit(ev.interrupted_run())
    assert root.tag == "testsuites" and int(root.get("tests")) > 0
