"""The Python SDK 2.x list gate, the openai-agents 0.24 strict conversion and the Pydantic AI
OpenAI schema transform, against what the real libraries did with the same inputs
(tests/behaviours/data, produced by running mcp 2.3.0, openai-agents 0.24.0 and
pydantic-ai-slim 2.66.0 on each case)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.behaviours.python_sdk import lax_bool, python_sdk_problem
from mcp_matrix.behaviours.run_scope import fold_run_scope
from mcp_matrix.simulate.discovery import initial_state

DATA = Path(__file__).parent / "data"
SDK_CASES = json.loads((DATA / "python_sdk_2_3_tools_list.json").read_text())["cases"]
STRICT_CASES = json.loads((DATA / "openai_agents_0_24_strict.json").read_text())["cases"]
CONTROL = {
    "name": "control",
    "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
}


@pytest.mark.parametrize(
    "case", SDK_CASES, ids=lambda c: f"{c['era']}-{json.dumps(c['tool'])[:60]}"
)
def test_the_gate_accepts_exactly_what_the_python_sdk_accepted(case):
    assert (python_sdk_problem(case["tool"], case["era"]) is None) == case["accepted"]


def test_one_untyped_input_schema_drops_every_tool_of_the_server():
    gate = registry.get("python-sdk-gate").fn
    bad = {"name": "no_type", "inputSchema": {"properties": {"q": {"type": "string"}}}}
    out = gate(initial_state([(0, CONTROL), (0, bad)], "probe"))
    assert out.outcome == "server-dropped"
    assert out.culprit == 1
    assert out.findings[-1].pointer == "/inputSchema/type"
    assert out.findings[-1].blast_radius == "server"


def test_an_array_output_schema_fails_the_list_before_2026_only():
    gate = registry.get("python-sdk-gate").fn
    tool = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}
    assert gate(initial_state([(0, tool)], "p")).outcome == "server-dropped"
    assert gate(initial_state([(0, tool)], "p"), era="2026-07-28").outcome == "ok"


def test_a_library_that_raises_the_gate_s_error_widens_it_to_the_run():
    gate = registry.get("python-sdk-gate").fn
    raises = registry.get("list-failure-raises").fn
    bad = {"name": "t", "inputSchema": {"type": "string"}}
    out = raises(gate(initial_state([(0, bad)], "p")))
    assert out.outcome == "server-dropped"
    assert [f.code for f in out.findings] == ["list-rejected", "run-aborted"]
    assert fold_run_scope(out.findings).blast_radius == "run"
    good = initial_state([(0, {"name": "t", "inputSchema": {"type": "object"}})], "p")
    assert raises(gate(good)).findings == ()  # nothing failed: nothing to widen


def test_lax_booleans_are_the_ones_pydantic_reads_as_booleans():
    assert all(lax_bool(v) for v in (True, 0, 1, 1.0, "yes", "OFF", " t "))
    assert not any(lax_bool(v) for v in (2, "maybe", None, [], {}))


@pytest.mark.parametrize("case", STRICT_CASES, ids=lambda c: json.dumps(c["input"])[:70])
def test_the_strict_conversion_sends_what_openai_agents_sent(case):
    rewrite = registry.get("openai-agents-strict").fn
    state = rewrite(initial_state([(0, {"name": "t", "inputSchema": case["input"]})], "p"))
    assert state.tools[0].schema == case["sent"]
    fell_back = any(f.code == "strict-fallback" for f in state.tools[0].findings)
    assert fell_back == (not case["strict"])


PYDANTIC_CASES = json.loads((DATA / "pydantic_ai_2_66_openai_schema.json").read_text())["cases"]


@pytest.mark.parametrize("case", PYDANTIC_CASES, ids=lambda c: json.dumps(c["input"])[:70])
def test_the_pydantic_ai_transform_sends_what_pydantic_ai_sent(case):
    rewrite = registry.get("pydantic-ai-openai-schema").fn
    state = rewrite(initial_state([(0, {"name": "t", "inputSchema": case["input"]})], "p"))
    assert state.tools[0].schema == case["sent"]
