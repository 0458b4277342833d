"""A tool offered under its own name stays itself when its rewritten content looks like
another server tool's (Claude Code merges root_anyof_shapes' variants into {a, b}, as
root_oneof has, and both say "Probe tool."); two tools that clean to one name still go by
content (collide.a vs collide_a)."""

from __future__ import annotations

from mcp_matrix.calibrate.model_requests import ModelTool, correlate

AB = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}


def _server(name: str, schema: dict) -> dict:
    return {"name": name, "description": "Probe tool.", "inputSchema": schema}


def test_a_lookalike_under_its_own_name_is_itself():
    server = [
        _server("root_oneof", {**AB, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        _server("root_anyof_shapes", {"type": "object", "anyOf": [{"properties": {"a": {}}}]}),
    ]
    offered = [
        ModelTool("mcp__probe__root_oneof", "Probe tool.", AB, call_name="mcp__probe__root_oneof"),
        ModelTool(
            "mcp__probe__root_anyof_shapes",
            "Input constraint: ...\n\nProbe tool.",
            AB,
            call_name="mcp__probe__root_anyof_shapes",
        ),
    ]
    got = correlate(offered, server)
    assert got["root_anyof_shapes"].name == "mcp__probe__root_anyof_shapes"
    assert got["root_oneof"].name == "mcp__probe__root_oneof"


def test_two_names_that_clean_alike_still_go_by_content():
    server = [
        _server("collide_a", {"type": "object", "properties": {"under_a": {}}}),
        _server("collide.a", {"type": "object", "properties": {"dot_a": {}}}),
    ]
    offered = [
        ModelTool(
            "mcp__probe__collide_a",
            "Probe tool.",
            {"type": "object", "properties": {"dot_a": {}}},
            call_name="mcp__probe__collide_a",
        )
    ]
    got = correlate(offered, server)
    assert set(got) == {"collide.a"}


def test_a_name_another_tool_cleans_to_with_underscores_goes_by_content():
    """smolagents shows clash.c as clashc and clash-c as clash_c: the name clash_c, which
    clash.c would also match with '.' as '_', carries clash-c's content, so it is clash-c's."""
    server = [
        _server("clash.c", {"type": "object", "properties": {"dot_c": {}}}),
        _server("clash-c", {"type": "object", "properties": {"dash_c": {}}}),
    ]
    offered = [
        ModelTool("clashc", "Probe tool.", server[0]["inputSchema"], call_name="clashc"),
        ModelTool("clash_c", "Probe tool.", server[1]["inputSchema"], call_name="clash_c"),
    ]
    got = correlate(offered, server)
    assert got["clash.c"].name == "clashc" and got["clash-c"].name == "clash_c"
