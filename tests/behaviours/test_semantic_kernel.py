"""Semantic Kernel (profile ``semantic-kernel``) beyond the probe sets: names, skipped tools and
what stops the agent, read in semantic-kernel 1.45.0's connectors/mcp.py and utils/validation.py
and observed in clients/calibrations/semantic-kernel/1.45.0.json."""

from __future__ import annotations

from mcp_matrix.behaviours.semantic_kernel import local_name, semantic_kernel_arguments
from mcp_matrix.core.model import CallContext, CallPlan
from tests.behaviours.conftest import discover

OBJ = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def _tool(name: str, schema: dict = OBJ) -> dict:
    return {"name": name, "description": f"{name} tool", "inputSchema": schema}


def test_names_are_the_plugin_and_the_cleaned_tool_name():
    assert [local_name(n) for n in ("space name", "café", "a/b:c", "ok-1_x", "x.y")] == [
        "space-name",
        "caf-",
        "a-b-c",
        "ok-1_x",
        "x.y",
    ]
    view = discover("semantic-kernel", [_tool("space name")], server="probe")
    assert view.tools[0].model_name == "probe-space-name"


def test_the_model_sees_the_root_properties_as_served_and_nothing_else():
    schema = {
        "type": "object",
        "$defs": {"P": {"type": "object"}},
        "properties": {"p": {"$ref": "#/$defs/P"}, "n": {"type": "integer", "minimum": 1}},
        "required": ["n", "ghost"],
        "additionalProperties": False,
    }
    view = discover("semantic-kernel", [_tool("t", schema)], server="probe")
    assert view.tools[0].model_schema == {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/P"}, "n": {"type": "integer", "minimum": 1}},
        "required": ["n"],
    }


def test_a_dotted_name_a_bad_key_or_a_type_list_builds_no_agent():
    for tools in (
        [_tool("ok"), _tool("files.read")],
        [
            _tool("ok"),
            _tool("k", {"type": "object", "properties": {"user.name": {"type": "string"}}}),
        ],
        [
            _tool("ok"),
            _tool("n", {"type": "object", "properties": {"m": {"type": ["string", "null"]}}}),
        ],
    ):
        view = discover("semantic-kernel", tools, server="probe")
        assert view.outcome == "server-dropped"
        assert all(t.verdict != "visible" for t in view.tools)


def test_a_taken_name_or_a_plugin_attribute_is_skipped_and_the_rest_kept():
    view = discover(
        "semantic-kernel", [_tool("a b"), _tool("a-b"), _tool("close"), _tool("ok")], server="probe"
    )
    shown = {t.tool: t.verdict for t in view.tools}
    assert view.outcome == "ok"
    assert shown["a b"] != "hidden" and shown["ok"] != "hidden"
    assert shown["a-b"] == "hidden" and shown["close"] == "hidden"


def test_missing_required_and_unknown_keys_are_refused_types_are_not_checked():
    ctx = CallContext(tool="t", held_schema={}, held_tool=_tool("t"))
    assert semantic_kernel_arguments(CallPlan(tool="t", arguments={"q": 7}), ctx).refused is None
    missing = semantic_kernel_arguments(CallPlan(tool="t", arguments={}), ctx).refused
    assert missing is not None and "Missing required argument(s): ['q']" in missing.message
    extra = semantic_kernel_arguments(CallPlan(tool="t", arguments={"q": "x", "z": 1}), ctx).refused
    assert extra is not None and "Received unexpected argument(s): ['z']" in extra.message
