"""Qwen Code 0.24.4 (behaviour qwen-tool-name), through the qwen-code profile.

The first two names are what the real client sent its model on 2026-12-02 (probe sets long-name and
dotted-name, clients/calibrations/qwen-code/0.24.4.json); the others are what the client's own
``normalizeToolNameForProvider`` (``chunks/chunk-WZAD4ZNJ.js`` of the 0.24.4 npm bundle) returned
for them under node.
"""

from __future__ import annotations

from mcp_matrix.behaviours.qwen import qwen_name
from tests.behaviours.conftest import discover

OBJ = {"type": "object", "properties": {"q": {"type": "string"}}}
LONG = "probe_very_long_tool_name_very_long_tool_name_very_long_tool_name_end"


def names(*tool_names: str, server: str = "probe") -> dict[str, str | None]:
    """Raw tool name -> the model-facing name (None: left out)."""
    view = discover("qwen-code", [{"name": n, "inputSchema": OBJ} for n in tool_names], server)
    return {t.tool: (t.model_name if t.verdict != "hidden" else None) for t in view.tools}


def test_the_observed_dotted_and_long_names_are_hashed_not_dropped():
    assert names("control", "probe.dotted", LONG) == {
        "control": "mcp__probe__control",
        "probe.dotted": "mcp__probe__probe_dotted_1g6lmdz",
        LONG: "mcp__probe__probe_very_long_tool_name_very_long_tool_na_0m153hm",
    }


def test_63_characters_are_kept_and_64_are_cut_to_55_plus_hash():
    assert names("a" * 51, "a" * 52) == {
        "a" * 51: "mcp__probe__" + "a" * 51,
        "a" * 52: "mcp__probe__" + "a" * 43 + "_0ni1kef",
    }
    assert qwen_name("mcp__probe__" + "x" * 200) == "mcp__probe__" + "x" * 43 + "_0nmdz4z"


def test_invalid_characters_are_utf16_units_and_the_hash_is_padded_to_seven_digits():
    assert names("get user", "café", "emoji😀tool", "日本語") == {
        "get user": "mcp__probe__get_user_00g9kx0",
        "café": "mcp__probe__caf__0b6tbn6",
        "emoji😀tool": "mcp__probe__emoji__tool_1ji5k1g",
        "日本語": "mcp__probe______122qljg",
    }
    assert names("t", server="my server") == {"t": "mcp__my_server__t_1onrjg4"}


def test_a_name_not_starting_with_a_letter_gets_tool_prefix():
    assert qwen_name("9lives") == "tool_9lives_1qyx1hj"


def test_a_cut_name_is_a_lost_finding_a_sanitised_one_is_not():
    view = discover(
        "qwen-code", [{"name": n, "inputSchema": OBJ} for n in ("probe.dotted", LONG)], "probe"
    )
    codes = {t.tool: [(f.code, f.lost) for f in t.findings] for t in view.tools}
    assert ("name-sanitised", False) in codes["probe.dotted"]
    assert ("name-shortened", True) in codes[LONG]


def test_a_closed_object_opens_only_when_it_has_an_optional_property():
    """Observed 2026-12-02 (error-streak: strict kept closed; validation: v_unknown opened) and
    read in relaxSchemaForFunctionCalling (chunks/chunk-CF5KXZZX.js of the 0.24.4 bundle), which
    walks every level."""
    closed = {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "additionalProperties": False,
    }
    nested = {"type": "object", "properties": {"o": closed}, "required": ["o"]}
    tools = [
        {"name": "all_required", "inputSchema": {**closed, "required": ["q"]}},
        {"name": "optional", "inputSchema": closed},
        {"name": "nested", "inputSchema": {**nested, "additionalProperties": False}},
    ]
    schemas = {t.tool: t.model_schema for t in discover("qwen-code", tools, "probe").tools}
    assert schemas["all_required"]["additionalProperties"] is False
    assert "additionalProperties" not in schemas["optional"]
    assert schemas["nested"]["additionalProperties"] is False
    assert "additionalProperties" not in schemas["nested"]["properties"]["o"]
