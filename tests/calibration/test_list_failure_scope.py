"""How far a rejected list reaches is compared as its own drift cell (``list-failure``): ``run``
where a library raises it (``list-failure-raises``, record outcome ``list-failed``), ``server``
where an application goes on without the server (``no-probe-tools``). Offline, from the real
records in clients/calibrations/ and the real profiles."""

from __future__ import annotations

from dataclasses import replace

from mcp_matrix.calibrate import probe, record
from mcp_matrix.calibrate.drift import LIST, observed_scope, record_drift
from mcp_matrix.profiles.loader import load_profiles

SETS = ("root-not-object", "no-type")  # both SDK gates reject these lists


def _scope_cells(name: str, profile=None) -> dict[str, tuple]:
    _, doc = record.latest_record(name)
    doc = {"probe_sets": {s: doc["probe_sets"][s] for s in SETS}}
    cells = record_drift(profile or load_profiles()[name], doc, probe.PROBE_SETS)
    return {
        c.probe_set: (c.predicted, c.observed, c.agree)
        for c in cells
        if c.aspect == "list-failure" and c.tool == LIST
    }


def test_the_record_s_outcome_says_how_far_the_failure_reached():
    assert observed_scope({"outcome": "list-failed"}) == "run"
    assert observed_scope({"outcome": "no-probe-tools"}) == "server"
    assert observed_scope({"outcome": "ok"}) is None
    aborted = {"outcome": "no-model-request", "driver": {"ok": False, "error": "boom"}}
    assert observed_scope(aborted) == "run"
    assert observed_scope({**aborted, "run": {"timed_out": True}}) is None


def test_a_library_that_raises_the_list_is_compared_as_the_run_and_agrees():
    assert _scope_cells("python-sdk") == {s: ("run", "run", True) for s in SETS}


def test_an_application_that_goes_on_without_the_server_is_compared_as_the_server():
    assert _scope_cells("gemini-cli") == {s: ("server", "server", True) for s in SETS}


def test_a_library_profile_without_list_failure_raises_disagrees():
    real = load_profiles()["python-sdk"]
    wrong = replace(
        real, discovery=tuple(u for u in real.discovery if u.name != "list-failure-raises")
    )
    assert len(wrong.discovery) == len(real.discovery) - 1
    assert _scope_cells("python-sdk", wrong) == {s: ("server", "run", False) for s in SETS}
