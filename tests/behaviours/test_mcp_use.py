"""mcp-use (profile ``mcp-use``) beyond the probe sets: the schema the model is shown and the
arguments sent, against what mcp-use 1.7.1's own code did with the same inputs (run 2026-12-02 in
its venv: tests/behaviours/data/mcp_use_1_7_1_pydantic.json says how), and the profile's verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_matrix.behaviours.mcp_use import (
    Invalid,
    Unbuildable,
    mcp_use_validate,
    parameters,
    sent_arguments,
)
from mcp_matrix.core.model import CallContext, CallPlan
from tests.behaviours.conftest import discover

DATA = Path(__file__).parent / "data" / "mcp_use_1_7_1_pydantic.json"
CASES = json.loads(DATA.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: json.dumps(c["input"])[:60])
def test_the_schema_and_the_calls_are_what_mcp_use_itself_made_of_them(case):
    if "fails" in case:
        with pytest.raises(Unbuildable):
            parameters(case["input"])
        return
    assert parameters(case["input"]) == case["shown"]
    for call in case["calls"]:
        if call.get("refused"):
            with pytest.raises(Invalid):
                sent_arguments(case["input"], call["arguments"])
        else:
            assert sent_arguments(case["input"], call["arguments"]) == call["sent"]


def test_the_recorded_cases_cover_failures_refusals_and_hidden_keys():
    assert sum("fails" in c for c in CASES) >= 10
    assert any(call.get("refused") for c in CASES for call in c.get("calls", []))
    hidden = [
        c
        for c in CASES
        if "shown" in c and len(c["shown"]["properties"]) < len(c["input"].get("properties", {}))
    ]
    assert hidden, "no case where a key that is not a Python identifier is hidden"


OBJ = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def test_a_boolean_subschema_fails_the_whole_run():
    bad = {"type": "object", "properties": {"b": True}}
    view = discover(
        "mcp-use", [{"name": "ok", "inputSchema": OBJ}, {"name": "b", "inputSchema": bad}]
    )
    assert view.outcome == "server-dropped"
    assert all(t.verdict != "visible" for t in view.tools)


def test_a_string_is_coerced_unknown_keys_dropped_and_unset_fields_sent_null():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "m": {"type": "string"}}}
    ctx = CallContext(tool="t", held_schema={}, held_tool={"name": "t", "inputSchema": schema})
    plan = mcp_use_validate(CallPlan(tool="t", arguments={"n": "5", "x": 1}), ctx)
    assert plan.refused is None and plan.arguments == {"n": 5, "m": None}
    refused = mcp_use_validate(CallPlan(tool="t", arguments={"m": 5}), ctx).refused
    assert refused is not None and refused.code == "client-refused"
