"""A probe set where the client made no model request is judged, not skipped: when the record
shows the client aborted the run (its driver reported the exception), the set is compared as every
tool absent and every call not sent, so a profile that says "visible" there drifts; when the record
cannot say why (a timeout), the set is counted as unjudged. Offline, from the real records in
clients/calibrations/ and the real profiles."""

from __future__ import annotations

from dataclasses import replace

from mcp_matrix.calibrate import probe, record
from mcp_matrix.calibrate.drift import agreement, judge_record, record_drift
from mcp_matrix.calibrate.status import calibration_status, status_text
from mcp_matrix.profiles.loader import load_profiles

# smolagents 1.26.0 raised before asking its model: 'Circular reference detected' building the
# request (ref-cycle), duplicate tool names (name-collision); each set's abort rule in the profile
ABORTS = {"ref-cycle": "smolagents-gate", "name-collision": "smolagents-tool-name"}


def _sets(name: str, sets) -> dict:
    _, doc = record.latest_record(name)
    return {"probe_sets": {s: doc["probe_sets"][s] for s in sets}}


def test_the_recorded_aborts_are_aborts_in_the_record():
    doc = _sets("smolagents", ABORTS)
    for obs in doc["probe_sets"].values():
        assert obs["outcome"] == "no-model-request" and obs["driver"]["ok"] is False
        assert not any(t["present"] for t in obs["tools"].values())


def test_an_aborted_run_is_compared_as_every_tool_absent_and_the_profile_agrees():
    doc = _sets("smolagents", ABORTS)
    judged = judge_record(load_profiles()["smolagents"], doc, probe.PROBE_SETS)
    assert judged.unjudged == ()
    for set_id in ABORTS:
        cells = [c for c in judged.cells if c.probe_set == set_id]
        visible = [c for c in cells if c.aspect == "visible"]
        assert {c.tool for c in visible} == {t["name"] for t in probe.PROBE_SETS[set_id].tools}
        assert all(c.predicted is False and c.observed is False for c in visible)
        calls = [c for c in cells if c.aspect == "arguments"]
        assert len(calls) == len(probe.PROBE_SETS[set_id].calls)
        assert agreement(cells) == (len(cells), len(cells))


def test_a_profile_without_the_abort_rule_now_disagrees_on_the_aborted_sets():
    """Before, these sets were skipped: the profile read 100% with its abort rule removed."""
    real = load_profiles()["smolagents"]
    for set_id, rule in ABORTS.items():
        wrong = replace(real, discovery=tuple(u for u in real.discovery if u.name != rule))
        assert len(wrong.discovery) == len(real.discovery) - 1
        cells = record_drift(wrong, _sets("smolagents", [set_id]), probe.PROBE_SETS)
        shown = [c for c in cells if c.aspect == "visible" and c.predicted is True]
        assert shown and not any(c.agree for c in shown), set_id
        agree, total = agreement(cells)
        assert agree < total


def _timed_out(obs: dict) -> dict:
    """``obs`` as a run with no model request and no word why: the harness's timeout, no driver
    line (how semantic-kernel 1.45.0's bool-subschema set was recorded on 2026-12-02)."""
    return {
        **obs,
        "outcome": "no-model-request",
        "tools": {name: {"present": False} for name in obs["tools"]},
        "driver": None,
        "run": {"returncode": None, "timed_out": True, "seconds": 90.13},
    }


def test_no_model_request_the_record_cannot_explain_is_counted_unjudged():
    """Neither visible nor absent is known after a timeout, so the set is not compared, and it is
    counted."""
    doc = _sets("semantic-kernel", ["bool-subschema", "ref-cycle"])
    sets = doc["probe_sets"]
    sets["bool-subschema"] = _timed_out(sets["bool-subschema"])
    judged = judge_record(load_profiles()["semantic-kernel"], doc, probe.PROBE_SETS)
    assert judged.unjudged == ("bool-subschema",)
    assert {c.probe_set for c in judged.cells} == {"ref-cycle"}


def test_semantic_kernel_bool_subschema_is_judged_now_its_driver_bounds_connect():
    """Since 2026-12-03 the driver bounds connect() and reports the exception its connection task
    died with, so the record says why the run ended and the set is compared (no set unjudged)."""
    obs = _sets("semantic-kernel", ["bool-subschema"])["probe_sets"]["bool-subschema"]
    assert obs["run"]["timed_out"] is False and obs["driver"]["ok"] is False
    assert obs["driver"]["error_type"] == "builtins.AttributeError"
    profile = load_profiles()["semantic-kernel"]
    judged = judge_record(profile, {"probe_sets": {"bool-subschema": obs}}, probe.PROBE_SETS)
    assert judged.unjudged == ()
    assert judged.cells and agreement(list(judged.cells)) == (len(judged.cells),) * 2
    assert calibration_status(profile)["unjudged"] == 0


def test_the_profiles_calibration_status_counts_the_unjudged_set(monkeypatch):
    path, doc = record.latest_record("semantic-kernel")
    sets = dict(doc["probe_sets"])
    sets["bool-subschema"] = _timed_out(sets["bool-subschema"])
    monkeypatch.setattr(record, "latest_record", lambda name: (path, {**doc, "probe_sets": sets}))
    status = calibration_status(load_profiles()["semantic-kernel"])
    assert status is not None and status["unjudged"] == 1
    assert status_text(status).endswith("100%, 1 set unjudged")
