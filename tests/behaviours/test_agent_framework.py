"""Microsoft Agent Framework (profile ``agent-framework``): the top-level argument check read in
agent-framework-core 1.23.0 agent_framework/_tools.py and observed in
clients/calibrations/agent-framework/1.23.0.json."""

from __future__ import annotations

from mcp_matrix.behaviours.agent_framework import refusal

CLOSED = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "k": {"enum": ["a", "b"]},
        "x": {"type": ["string", "null"]},
    },
    "required": ["n"],
    "additionalProperties": False,
}


def test_what_it_refuses():
    assert "missing" in refusal(CLOSED, {})
    assert "unexpected" in refusal(CLOSED, {"n": 1, "extra": 1})
    assert "not in" in refusal(CLOSED, {"n": 1, "k": "c"})
    assert "type integer" in refusal(CLOSED, {"n": "5"})
    assert "type integer" in refusal(CLOSED, {"n": True})
    assert "any type" in refusal(CLOSED, {"n": 1, "x": 3})


def test_what_it_lets_through():
    assert refusal(CLOSED, {"n": 1, "k": "a", "x": None}) is None
    nested = {
        "type": "object",
        "properties": {"o": {"type": "object", "properties": {"i": {"type": "integer"}}}},
    }
    assert refusal(nested, {"o": {"i": "5"}}) is None  # nothing nested is checked
    assert refusal({"type": "object", "properties": {}}, {"anything": 1}) is None  # open schema


def test_a_refused_call_says_it_counts_toward_the_stop_after_three_failed_turns():
    """agent_framework/_tools.py 1.23.0: max_consecutive_errors_per_request = 3."""
    from mcp_matrix.core.model import CallContext
    from mcp_matrix.profiles.loader import load_profiles
    from mcp_matrix.simulate.calls import plan_call

    ctx = CallContext("t", CLOSED, {})
    profile = load_profiles()["agent-framework"]
    (variant,) = plan_call(profile, ctx, {"k": "a"})
    assert variant.plan.refused is not None
    assert "after 3 model turns in a row" in variant.plan.refused.message


def test_agent_framework_calls_no_tool_after_three_turns_of_refused_calls():
    """Observed: clients/calibrations/agent-framework/1.23.0.json, probe set error-streak: the
    fourth request carries tool_choice none and the control is never called."""
    from mcp_matrix.calibrate.drift import NOT_SENT, predict
    from mcp_matrix.calibrate.probe import PROBE_SETS
    from mcp_matrix.profiles.loader import load_profiles

    streak = PROBE_SETS["error-streak"]
    af = predict(load_profiles()["agent-framework"], streak, "probe")
    assert [c["variants"] for c in af["calls"]] == [[NOT_SENT]] * 4
    other = predict(load_profiles()["openai-agents"], streak, "probe")
    assert other["calls"][-1]["variants"] == [{"q": "hello"}]
