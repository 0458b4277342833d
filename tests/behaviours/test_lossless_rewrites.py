"""Rewrites that keep what the model may do are not losses (no false alarms): a tool name whose
words all survive, calls mapped back to the server's name; an ``anyOf`` of bare types said as a
type and ``nullable``. A rename that changes letters, or whose calls are not mapped back, and a
restatement that drops a keyword stay losses."""

from __future__ import annotations

from tests.behaviours.conftest import discover

OBJ = {"type": "object", "properties": {"x": {"type": "string"}}}


def cells(profile: str, tools: list, server: str = "srv") -> dict:
    view = discover(profile, tools, server)
    return {
        t.tool: (t.verdict, sorted((f.code, f.materiality) for f in t.findings)) for t in view.tools
    }


def test_a_rename_keeping_every_word_leaves_the_tool_visible_with_its_note():
    tools = [{"name": "get-env", "inputSchema": OBJ}]
    for profile in ("codex", "openai-agents-js", "smolagents"):
        verdict, findings = cells(profile, tools, "my-srv")["get-env"]
        assert verdict == "visible", (profile, findings)
        assert ("name-sanitised", "none") in findings, profile
    verdict, findings = cells("copilot-cli", [{"name": "a.b", "inputSchema": OBJ}])["a.b"]
    assert (verdict, ("name-sanitised", "none") in findings) == ("visible", True)


def test_a_rename_that_changes_letters_is_still_guidance():
    assert cells("openai-agents-js", [{"name": "café", "inputSchema": OBJ}])["café"][0] == (
        "degraded"
    )
    # smolagents deletes the dot: two words run together
    verdict, findings = cells("smolagents", [{"name": "a.b", "inputSchema": OBJ}])["a.b"]
    assert verdict == "degraded" and ("name-sanitised", "guidance") in findings


def test_a_rename_whose_calls_are_not_mapped_back_is_still_guidance():
    # LlamaIndex looks the model's call up by the raw name: the renamed tool cannot be called
    verdict, findings = cells("llamaindex", [{"name": "get.env", "inputSchema": OBJ}])["get.env"]
    assert ("name-sanitised", "guidance") in findings and verdict == "degraded"


def test_smolagents_nullable_restatement_of_bare_types_is_not_a_loss():
    schema = {
        "type": "object",
        "properties": {
            "tag": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
        },
    }
    view = discover("smolagents", [{"name": "t", "inputSchema": schema}])
    lost = {f.pointer for f in view.tools[0].findings if f.materiality == "constraint"}
    assert "/inputSchema/properties/tag/anyOf" not in lost
    assert "/inputSchema/properties/tags/anyOf" in lost  # the array's items are gone
