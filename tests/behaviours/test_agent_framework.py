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
