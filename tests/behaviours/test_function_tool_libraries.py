"""The two function-tool libraries calibrated for issue 23: OpenAI Agents JS (agents-js-*) and
smolagents (smolagents-*), on tool lists beyond the probe sets: the rules read in their code
(@openai/agents-core 0.20.0 dist/utils/tools.mjs and dist/mcp.mjs; mcpadapt 0.1.19
smolagents_adapter.py, smolagents 1.26.0 tools.py and models.py) and observed in
clients/calibrations/openai-agents-js/0.20.0.json and clients/calibrations/smolagents/1.26.0.json."""

from __future__ import annotations

from mcp_matrix.behaviours.openai_agents_js import function_tool_name
from mcp_matrix.behaviours.smolagents import function_name, smolagents_validate
from mcp_matrix.core.model import CallContext, CallPlan
from tests.behaviours.conftest import discover

OBJ = {"type": "object", "properties": {"q": {"type": "string"}}}


def test_agents_js_names_have_every_character_outside_ascii_alphanumerics_as_underscore():
    assert function_tool_name("dash-name") == "dash_name"
    assert function_tool_name("café") == "caf_"
    assert function_tool_name("a b.c/d") == "a_b_c_d"
    assert function_tool_name("x😀") == "x__"  # two UTF-16 units, as JavaScript counts
    assert function_tool_name("A" * 80) == "A" * 80  # no length limit


def test_agents_js_fails_the_whole_list_when_two_names_clean_alike():
    view = discover("openai-agents-js", [{"name": n, "inputSchema": OBJ} for n in ("a-b", "a.b")])
    assert view.outcome == "server-dropped"
    assert all(t.verdict != "visible" for t in view.tools)


def test_agents_js_opens_every_root_and_fills_what_is_missing():
    closed = {"type": "object", "properties": {"q": {}}, "additionalProperties": False}
    view = discover("openai-agents-js", [{"name": "t", "inputSchema": closed}])
    got = view.tools[0].model_schema
    assert got["additionalProperties"] is True and got["required"] == []


def test_smolagents_names_are_python_identifiers():
    assert function_name("dash-name") == "dash_name"
    assert function_name("probe.dotted") == "probedotted"
    assert function_name("café") == "café"
    assert function_name("3d") == "_3d"
    assert function_name("class") == "class_"


def test_smolagents_fails_the_run_on_a_tool_it_cannot_adapt():
    for bad in (
        {"type": "object"},  # no properties: KeyError
        {"type": "object", "properties": {"a": True}},  # a boolean property schema
        {"type": "object", "properties": {"a": {"type": "tuple"}}},  # not a smolagents type
        {
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/N"}},
            "$defs": {"N": {"type": "object", "properties": {"c": {"$ref": "#/$defs/N"}}}},
        },
    ):
        view = discover(
            "smolagents", [{"name": "ok", "inputSchema": OBJ}, {"name": "t", "inputSchema": bad}]
        )
        assert view.outcome == "server-dropped", bad


def test_smolagents_makes_every_property_required_and_folds_anyof():
    s = {
        "type": "object",
        "properties": {"a": {"anyOf": [{"type": "integer"}, {"type": "null"}]}, "b": {}},
        "required": [],
    }
    got = discover("smolagents", [{"name": "t", "inputSchema": s}]).tools[0].model_schema
    assert got["required"] == ["a", "b"]
    assert got["properties"]["a"] == {
        "description": "see tool description",
        "type": "integer",
        "nullable": True,
    }
    assert got["properties"]["b"] == {"description": "see tool description", "type": "string"}


def _refused(schema: dict, arguments: dict) -> bool:
    tool = {"name": "t", "inputSchema": schema}
    plan = smolagents_validate(
        CallPlan(tool="t", arguments=arguments), CallContext("t", schema, tool)
    )
    return plan.refused is not None


def test_smolagents_checks_keys_and_json_types_before_a_call():
    s = {"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "string"}}}
    assert not _refused(s, {"n": 1, "s": "x"})  # an integer passes for a number
    assert _refused(s, {"n": "1", "s": "x"})  # a string form does not
    assert _refused(s, {"n": 1})  # every property is required
    assert _refused(s, {"n": 1, "s": "x", "extra": 0})  # unknown key
    assert _refused(s, {"n": None, "s": "x"})  # null only where nullable
    assert not _refused(
        {"type": "object", "properties": {"v": {"anyOf": [{"type": "integer"}]}}}, {"v": "5"}
    )
