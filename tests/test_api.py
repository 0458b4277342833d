"""mcp_matrix.api against real bundled servers: timeouts and env are honoured, cells come back typed."""

from __future__ import annotations

import json

import pytest

from mcp_matrix import api
from mcp_matrix.core.errors import InputError
from mcp_matrix.core.events import CallCell, DiscoveryCell


def test_snapshot_starts_the_server_with_the_env_given_and_masks_it():
    snap = api.snapshot(
        api.target(server="billing --version 1"),
        timeouts=api.Timeouts(initialize=60, list=60),
        env={"BILLING_TOKEN": "s3cret-value-42"},
    )
    assert snap.error is None and [t["name"] for _, t in snap.tools]
    assert snap.doc["target"]["env"] == {
        "BILLING_TOKEN": "***"
    }  # the target that was started had it
    assert "s3cret-value-42" not in json.dumps(snap.doc)
    cells = api.discover(snap, api.profiles(["cursor", "claude-code"]))
    assert all(isinstance(c, DiscoveryCell) for c in cells)
    assert {(c.profile, c.tool) for c in cells} == {
        (p, t["name"]) for p in ("cursor", "claude-code") for _, t in snap.tools
    }


def test_the_timeouts_given_bound_the_run_and_the_cells_are_typed():
    outcome = api.run(
        api.target(server="faulty --mode hang-on-call"),
        profiles=api.profiles(["claude-code"]),
        timeouts=api.Timeouts(initialize=60, list=60, call=1.0),
    )
    assert outcome.measured
    cell = outcome.cell("echo", "claude-code", "auto")
    assert isinstance(cell, CallCell) and cell.verdict == "broken" and "1.0s" in cell.reason
    assert outcome.verdict("echo", "claude-code") in ("visible", "degraded")
    assert (
        outcome.to_json()[0]["event"] == "run-started"
        and outcome.to_json()[-1]["event"] == "run-finished"
    )


def test_a_cell_the_run_did_not_make_is_a_key_error_naming_it():
    empty = api.RunOutcome(measured=True, interrupted=False, deadline_passed=False, events=())
    with pytest.raises(KeyError, match=r"no call cell echo\[zed\]::auto"):
        empty.cell("echo", "zed", "auto")


def test_two_targets_at_once_is_an_input_error():
    with pytest.raises(InputError, match="give one target, not stdio and server"):
        api.target(stdio="python -m x", server="memory")


def test_an_unknown_profile_is_an_input_error_with_did_you_mean():
    with pytest.raises(InputError, match="did you mean 'cursor'"):
        api.profiles(["cursr"])


def test_a_run_streams_its_results_writes_its_reports_and_reports_progress_with_counts(tmp_path):
    seen: list[api.Progress] = []
    outcome = api.run(
        api.target(server="memory"),
        profiles=api.profiles(["claude-code", "cursor"]),
        timeouts=api.Timeouts(initialize=60, list=60, call=30),
        results=tmp_path / "r.jsonl",
        reports=[("md", tmp_path / "r.md"), ("junit", tmp_path / "junit.xml")],
        share="none",
        on_progress=seen.append,
    )
    assert outcome.measured and not outcome.interrupted
    lines = (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[-1])["event"] == "run-finished"
    assert "# mcp-matrix" in (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "<testsuite" in (tmp_path / "junit.xml").read_text(encoding="utf-8")
    calls = [p for p in seen if p.total]
    made = sum(
        1 for e in outcome.to_json() if e["event"] in ("call", "skipped") and e.get("profile")
    )
    assert calls and calls[-1].done == calls[-1].total == made
    assert all(0 <= p.done <= p.total for p in calls)
    assert outcome.gate().passed and outcome.gate(require=["cursor"]).required == ("cursor",)


def test_the_gate_counts_cells_over_fail_on_and_nothing_with_fail_on_empty():
    cell = CallCell(profile="zed", tool="t", case="c", verdict="silent-loss")
    outcome = api.RunOutcome(
        measured=True, interrupted=False, deadline_passed=False, events=(cell,)
    )
    assert outcome.gate().over == (cell,)
    assert outcome.gate(fail_on=()).passed and outcome.gate(fail_on=()).required == ()


def test_progress_has_no_eta_before_the_first_call_and_the_pace_after_it():
    assert api.Progress(0, 10, 0.0, "calling").eta is None
    assert api.Progress(2, 10, 4.0, "x").eta == pytest.approx(16.0)
    assert api.Progress(10, 10, 9.0, "x").eta is None


def test_an_unknown_report_format_is_an_input_error_before_any_server_starts():
    with pytest.raises(InputError, match="unknown report format 'pdf'"):
        api.run(
            api.target(stdio="/nonexistent/server"),
            profiles=api.profiles(["zed"]),
            timeouts=api.Timeouts(),
            reports=[("pdf", "x.pdf")],
        )


def test_the_progress_line_says_calls_done_of_planned_and_the_time_left():
    from mcp_matrix.commands.run import progress_line

    assert progress_line(api.Progress(0, 0, 0.0, "discovery")) == "discovery ..."
    assert progress_line(api.Progress(2, 10, 4.0, "zed t::c")) == (
        "2/10 calls, about 16 s left: zed t::c"
    )
    assert "about 10 min left" in progress_line(api.Progress(1, 11, 60.0, "x"))
