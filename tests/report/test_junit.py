"""JUnit XML: one testcase per cell; release-failing verdicts are failures, the rest pass."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from matrix.commands.report import write_report
from matrix.report.grid import RELEASE_FAILING
from matrix.report.junit import xml_text
from tests.report import events as ev


def junit(events, failing=RELEASE_FAILING) -> ET.Element:
    buf = io.StringIO()
    write_report(events, "junit", buf, failing)
    return ET.fromstring(buf.getvalue())


def cells_of(events):
    return [e for e in events if e["event"] in ("discovery", "call")]


def test_there_is_one_testcase_per_cell_named_by_profile_and_tool_or_case(full_events):
    root = junit(full_events)
    cases = [
        c
        for c in root.iter("testcase")
        if c.get("classname") != "skipped" and c.get("name") != "(profile error)"
    ]
    want = [
        (e["profile"], e["tool"] + (f"::{e['case']}" if e["event"] == "call" else ""))
        for e in cells_of(full_events)
    ]
    order = [
        "claude-code",
        "cursor",
        "stale-cache",
    ]  # one suite per profile, cells in stream order within it
    assert [(c.get("classname"), c.get("name")) for c in cases] == sorted(
        want, key=lambda w: order.index(w[0])
    )


def test_failures_are_exactly_the_release_failing_cells_with_the_reason_as_message(full_events):
    root = junit(full_events)
    failures = list(root.iter("failure"))
    bad = [e for e in cells_of(full_events) if e["verdict"] in RELEASE_FAILING]
    assert len(failures) == len(bad) == int(root.get("failures")) == 4
    by_type = {f.get("type"): f for f in failures}
    assert set(by_type) == {"broken", "silent-corruption", "silent-loss", "accepted-invalid"}
    assert (
        by_type["silent-loss"].get("message")
        == "the client sent /importance removed; the server reported success on the reduced call"
    )
    assert (
        "fix: For a write tool whose schema evolves, add a raw twin" in by_type["silent-loss"].text
    )


def test_passing_cells_carry_their_verdict_as_a_property(full_events):
    root = junit(full_events)
    case = next(
        c
        for c in root.iter("testcase")
        if c.get("classname") == "claude-code" and c.get("name") == "memory_reflect"
    )
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["verdict"] == "hidden"
    assert "decision record 014" in props["advice"]
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


def test_suites_count_their_tests_and_skipped_calls_and_profile_errors_are_shown(full_events):
    root = junit(full_events)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == ["claude-code", "cursor", "stale-cache", "skipped"]
    assert suites["stale-cache"].get("errors") == "1"
    assert suites["skipped"].get("skipped") == "2"
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites.values()) == 30 + 1 + 2
    assert root.find(".//error").get("message") == "RuntimeError: worker crashed <b>"


def test_an_interrupted_run_still_writes_well_formed_xml():
    root = junit(ev.interrupted_run())
    assert root.tag == "testsuites" and int(root.get("tests")) > 0
