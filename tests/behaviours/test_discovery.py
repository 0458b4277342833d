"""Discovery behaviours and the bundled profiles, on real payloads (docs/clients/)."""

from __future__ import annotations

import copy
import inspect
import json
import re

import pytest
from jsonschema import Draft202012Validator

from mcp_matrix.behaviours import registry
from mcp_matrix.behaviours.dialects import openai_strict, roo_normalize, zed_adapt
from mcp_matrix.behaviours.google import adk_gemini_schema, litellm_vertex, vercel_google_openapi
from mcp_matrix.behaviours.keywords import strip_keywords
from mcp_matrix.behaviours.metaschema import metaschema_validate
from mcp_matrix.behaviours.ref_rewrites import resolve_refs, strip_defs
from mcp_matrix.behaviours.rewrite import MISSING, Outcome
from mcp_matrix.behaviours.schemas import array_items_required, root_combinators
from mcp_matrix.core.model import DISCOVERY_VERDICTS, ListState
from mcp_matrix.simulate.discovery import initial_state, refused_by_api
from tests.behaviours.conftest import load

# ------------------------------------------------------------------------------ payloads

REFLECT_PROPERTIES = {
    "action": {
        "type": "string",
        "enum": ["summarize", "consolidate", "critique"],
        "description": "What to do with the agent's recent memories.",
    },
    "agent_id": {"type": "string", "description": "Identity of the agent (canonical)."},
    "agent": {
        "type": "string",
        "description": "Deprecated alias of agent_id. Do not use; pass agent_id.",
    },
    "text": {"type": "string", "description": "Optional focus text for the reflection."},
    "target": {"type": "string", "description": "Optional memory id to reflect on."},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
}

# memory_reflect's first schema: the identity rule as a root anyOf (docs/design.md#flatten-the-root).
REFLECT_ANYOF = {
    "name": "memory_reflect",
    "description": "Reflect on an agent's memories: summarize, consolidate or critique them.",
    "inputSchema": {
        "type": "object",
        "properties": REFLECT_PROPERTIES,
        "additionalProperties": False,
        "required": ["action"],
        "anyOf": [{"required": ["agent_id"]}, {"required": ["agent"]}],
    },
}
# The 2026-10-05 amendment: flat, identity checked at runtime.
REFLECT_FLAT = {
    "name": "memory_reflect",
    "description": REFLECT_ANYOF["description"],
    "inputSchema": {
        "type": "object",
        "properties": REFLECT_PROPERTIES,
        "additionalProperties": False,
        "required": ["action"],
    },
}
STORE = {
    "name": "memory_store",
    "description": "Save one piece of information to an agent's long-term memory.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "agent_id": {"type": "string"},
            "content": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["agent_id", "content"],
        "additionalProperties": False,
    },
}
RECALL_NULLABLE = {
    "name": "memory_recall",
    "inputSchema": {
        "type": "object",
        "properties": {
            "agent_id": {"type": "string"},
            "query": {"type": ["string", "null"], "description": "Text the memory must contain."},
            "limit": {"type": ["integer", "null"], "default": None},
        },
        "required": ["agent_id"],
    },
}
# A root anyOf with no root type: what a hand-written union of two call shapes looks like.
SEARCH_UNTYPED_ANYOF = {
    "name": "search",
    "inputSchema": {
        "anyOf": [
            {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
        ]
    },
}
TAG_NO_ITEMS = {
    "name": "memory_tag",
    "inputSchema": {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "tags": {"type": "array", "description": "Labels."},
        },
        "required": ["id", "tags"],
    },
}
ORDER_ONEOF = {
    "name": "place_order",
    "inputSchema": {
        "oneOf": [
            {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
            {
                "type": "object",
                "properties": {"bundle": {"type": "string"}},
                "required": ["bundle"],
            },
        ]
    },
}
NESTED_REFS = {
    "name": "create_ticket",
    "inputSchema": {
        "type": "object",
        "$defs": {
            "Person": {
                "type": "object",
                "properties": {"email": {"type": "string", "format": "email"}},
            }
        },
        "properties": {
            "owner": {"$ref": "#/$defs/Person"},
            "cc": {"type": "array", "items": {"$ref": "#/$defs/Person"}},
        },
        "required": ["owner"],
    },
}
NO_ARGS = {"name": "memory_stats", "inputSchema": {"type": "object"}}
LONG_TOOL = "consolidate_recent_memories_for_agent_and_store_the_summary_checkpoint"
assert len(LONG_TOOL) == 70


def tool(name: str, schema, **extra) -> dict:
    return {"name": name, "inputSchema": schema, **extra}


def many(n: int) -> list[dict]:
    return [tool(f"tool_{i:03d}", {"type": "object", "properties": {}}) for i in range(n)]


def deep(levels: int) -> dict:
    node: dict = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"child": node}}
    return node


CYCLIC = {
    "type": "object",
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {"next": {"$ref": "#/$defs/Node"}, "value": {"type": "integer"}},
        },
        "A": {"$ref": "#/$defs/B"},
        "B": {"$ref": "#/$defs/A", "description": "mutual"},
    },
    "properties": {
        "head": {"$ref": "#/$defs/Node"},
        "loop": {"$ref": "#/$defs/A"},
        "self": {"$ref": "#"},
    },
}
HOSTILE_SCHEMAS = {
    "true": True,
    "false": False,
    "string": "object",
    "list": [{"type": "object"}],
    "null": None,
    "deep-5000": deep(5000),
    "ref-cycles": CYCLIC,
    "bool-properties": {"type": "object", "properties": {"a": True, "b": False, "c": 3}},
    "junk-keywords": {
        "type": 7,
        "properties": [],
        "required": "x",
        "anyOf": {},
        "items": True,
        "enum": 5,
        "$ref": 12,
        "additionalProperties": "no",
        "oneOf": [None, 1, "x"],
        "allOf": [],
    },
    "dangling-ref": {"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}},
    "exponential-refs": {
        "type": "object",
        "$defs": {
            f"d{i}": {
                "type": "object",
                "properties": {
                    "a": {"$ref": f"#/$defs/d{i + 1}"},
                    "b": {"$ref": f"#/$defs/d{i + 1}"},
                },
            }
            for i in range(40)
        },
        "properties": {"root": {"$ref": "#/$defs/d0"}},
    },
}


def views(view, profile: str, tools, server: str = "memory"):
    return view(profile, tools, server).by_tool()


# ---------------------------------------------------------------- the seed's cases


def test_the_original_memory_reflect_is_hidden_in_claude_code_278_and_the_flat_one_visible(
    view,
):
    original = views(view, "claude-code-278", [STORE, REFLECT_ANYOF])
    assert original["memory_reflect"].verdict == "hidden"
    assert original["memory_store"].verdict == "visible"
    reason = original["memory_reflect"].findings[-1]
    assert reason.code == "root-combinator" and "anyOf at the root" in reason.message
    assert (
        reason.behaviour == "root-combinators" and reason.evidence[0].level == "observed"
    )  # calibrated on 2.1.278

    flat = views(view, "claude-code-278", [STORE, REFLECT_FLAT])
    assert flat["memory_reflect"].verdict == "visible"
    assert flat["memory_reflect"].model_name == "mcp__memory__memory_reflect"
    assert flat["memory_reflect"].model_schema == REFLECT_FLAT["inputSchema"]


def test_todays_claude_code_shows_the_original_memory_reflect_with_its_anyof_restated_as_prose(
    view,
):
    # Calibrated on 2.1.332 (clients/calibrations/claude-code/2.1.332.json): the bare name is today's release.
    reflect = views(view, "claude-code", [STORE, REFLECT_ANYOF])["memory_reflect"]
    assert reflect.verdict == "degraded"
    assert "anyOf" not in reflect.model_schema
    assert reflect.model_description.startswith(
        "Input constraint: Provide parameters for at least one of:"
    )


def test_the_original_memory_reflect_schema_breaks_every_turn_in_legacy_claude_code(view):
    out = view("claude-code-legacy", [STORE, REFLECT_ANYOF], "memory")
    assert out.outcome == "session-broken"
    assert out.culprits == ("memory_reflect",)
    assert out.by_tool()["memory_reflect"].verdict == "session-broken"
    assert out.findings[-1].blast_radius == "session"
    assert out.by_tool()["memory_reflect"].findings[-1].code == out.findings[-1].code
    # the other tool keeps its own prediction: what the client does if the API accepted
    assert out.by_tool()["memory_store"].verdict in ("visible", "degraded")
    assert out.by_tool()["memory_store"].model_name


@pytest.mark.parametrize(
    "profile",
    [
        "claude-code",
        "claude-code-legacy",
        "claude-desktop",
        "cursor",
        "gemini-cli",
        "cline",
        "roo-code",
        "continue",
    ],
)
def test_a_root_anyof_without_type_object_drops_every_tool_of_the_server_in_ts_sdk_clients(
    view, profile
):
    out = view(profile, [STORE, SEARCH_UNTYPED_ANYOF, REFLECT_FLAT], "memory")
    assert out.outcome == "server-dropped"
    assert [t.verdict for t in out.tools] == ["server-dropped"] * 3
    culprit = out.by_tool()["search"].findings[-1]
    assert culprit.code == "list-rejected" and culprit.pointer == "/inputSchema/type"
    assert 'inputSchema.type is missing, expected "object"' in culprit.message
    assert culprit.blast_radius == "server"
    # the other tools carry the culprit as a field, not only in their message
    assert {f.culprit for t in out.tools if t.tool != "search" for f in t.findings[-1:]} == {
        "search"
    }


def test_clients_without_the_ts_sdk_keep_the_other_tools_of_a_server_with_an_untyped_root(view):
    codex = views(view, "codex", [STORE, SEARCH_UNTYPED_ANYOF])
    assert codex["memory_store"].verdict == "degraded"  # only its minimum/maximum are lost
    assert sorted(f.pointer for f in codex["memory_store"].findings if f.lost) == [
        "/inputSchema/properties/importance/maximum",
        "/inputSchema/properties/importance/minimum",
    ]
    assert codex["search"].verdict == "visible"  # anyOf is one of the eight keywords Codex keeps
    vercel = views(view, "vercel-ai-sdk", [STORE, SEARCH_UNTYPED_ANYOF])
    assert vercel["memory_store"].verdict == "visible"
    assert vercel["search"].verdict == "visible"
    assert vercel["search"].model_schema["additionalProperties"] is False


def test_an_array_without_items_breaks_the_vscode_copilot_session(view):
    out = view("vscode-copilot", [STORE, TAG_NO_ITEMS], "memory")
    assert out.outcome == "session-broken"
    assert out.culprits == ("memory_tag",)
    assert out.by_tool()["memory_tag"].verdict == "session-broken"
    assert out.by_tool()["memory_store"].verdict != "session-broken"  # its own prediction
    reason = out.by_tool()["memory_tag"].findings[-1]
    assert reason.code == "array-without-items" and reason.pointer == "/inputSchema/properties/tags"
    assert "array type must have items" in reason.message


def test_an_array_without_items_is_given_string_items_by_codex(view):
    tag = views(view, "codex", [TAG_NO_ITEMS])["memory_tag"]
    assert tag.verdict == "degraded"
    assert tag.model_schema["properties"]["tags"] == {
        "type": "array",
        "description": "Labels.",
        "items": {"type": "string"},
    }


def test_a_70_character_tool_name_is_hashed_by_codex_015_dropped_by_cursor_and_ellipsised_by_gemini_cli(
    view,
):
    long_tool = tool(LONG_TOOL, {"type": "object", "properties": {"agent_id": {"type": "string"}}})

    codex = views(view, "codex-015", [long_tool])[LONG_TOOL]
    assert codex.verdict == "degraded"
    assert codex.model_name == "mcp__memory__consolidate2b7cb058523bbd84dd0b2839a889fcca5836e369"
    assert len(codex.model_name) == 64
    assert any(f.code == "name-shortened" and "83 characters" in f.message for f in codex.findings)

    cursor = views(view, "cursor", [long_tool])[LONG_TOOL]
    assert cursor.verdict == "hidden" and cursor.model_name is None
    assert (
        "combined server and tool name length (76) exceeds 60 characters"
        in cursor.findings[-1].message
    )

    gemini = views(view, "gemini-cli", [long_tool])[LONG_TOOL]
    assert gemini.verdict == "degraded"
    assert gemini.model_name == "mcp_memory_consolidate_recent_...d_store_the_summary_checkpoint"
    assert len(gemini.model_name) == 63


def test_a_name_at_cursors_limit_of_60_is_already_filtered_and_59_is_kept(view):
    server = "s" * 10
    at = views(
        view,
        "cursor",
        [tool("t" * 50, {"type": "object"}), tool("u" * 49, {"type": "object"})],
        server,
    )
    assert at["t" * 50].verdict == "hidden"
    assert at["u" * 49].verdict == "visible"


def test_an_over_long_name_is_sent_by_claude_code_so_the_api_breaks_the_session_in_both_eras(
    view,
):
    # Calibrated on 2.1.100 and 2.1.278 with ToolSearch on: the client sends an over-long name as
    # it is, so the API's 64-character tool_reference rule fails every request (2.1.332 goes on
    # after that 400 and calls it: clients/calibrations/claude-code/2.1.332.json, limit-long-name).
    long_tool = tool(LONG_TOOL, {"type": "object"})
    current = view("claude-code-278", [STORE, long_tool], "memory")
    assert current.outcome == "session-broken"
    assert (
        "is 83 characters, over the limit of 64"
        in current.by_tool()[LONG_TOOL].findings[-1].message
    )
    assert view("claude-code-legacy", [STORE, long_tool], "memory").outcome == "session-broken"


def test_gemini_cli_turns_string_null_type_arrays_into_nullable(view):
    recall = views(view, "gemini-cli", [RECALL_NULLABLE])["memory_recall"]
    props = recall.model_schema["properties"]
    assert props["query"] == {
        "type": "string",
        "nullable": True,
        "description": "Text the memory must contain.",
    }
    assert props["limit"] == {"type": "integer", "nullable": True, "default": None}
    assert recall.verdict == "visible"  # nullability still reaches the model, as nullable
    assert recall.model_name == "mcp_memory_memory_recall"


def test_gemini_cli_leaves_three_name_type_arrays_alone():
    schema = {"type": "object", "properties": {"v": {"type": ["string", "null", "integer"]}}}
    state = initial_state([(0, tool("t", schema))], "s")
    out = registry.get("nullable-type-arrays").fn(state, walk="every", longer="keep")
    assert out.tools[0].schema == schema


def test_codex_015_turns_a_root_oneof_into_an_empty_object(view):
    order = views(view, "codex-015", [ORDER_ONEOF], "shop")["place_order"]
    assert order.model_schema == {"type": "object", "properties": {}}
    assert order.verdict == "degraded"
    assert any(f.pointer == "/inputSchema/oneOf" and f.lost for f in order.findings)


def test_codex_015_sanitises_refs_types_and_keywords_into_its_struct(view):
    ticket = views(view, "codex-015", [NESTED_REFS], "desk")["create_ticket"]
    assert ticket.verdict == "degraded"  # the inlined Person loses its format, nothing else
    assert [f.pointer for f in ticket.findings if f.lost] == [
        "/inputSchema/properties/cc/items/properties/email/format",
        "/inputSchema/properties/owner/properties/email/format",
    ]
    assert ticket.model_schema == {
        "type": "object",
        "properties": {
            "owner": {"type": "object", "properties": {"email": {"type": "string"}}},
            "cc": {
                "type": "array",
                "items": {"type": "object", "properties": {"email": {"type": "string"}}},
            },
        },
        "required": ["owner"],
    }
    multi = tool(
        "pick",
        {
            "type": "object",
            "properties": {
                "v": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "k": {"const": "fixed"},
            },
        },
    )
    picked = views(view, "codex-015", [multi])["pick"].model_schema
    assert picked["properties"]["v"] == {"type": "string"}  # openai/codex#13768
    assert picked["properties"]["k"] == {"type": "string", "enum": ["fixed"]}


def test_codex_015_replaces_a_circular_ref_with_a_typed_stand_in(view):
    linked = views(view, "codex-015", [tool("walk", CYCLIC)])["walk"].model_schema
    head = linked["properties"]["head"]
    assert head["properties"]["next"] == {"type": "object", "properties": {}}
    assert head["properties"]["value"] == {"type": "integer"}


def test_codex_015_skips_the_second_tool_whose_sanitised_name_collides(view):
    out = views(
        view,
        "codex-015",
        [tool("get.item", {"type": "object"}), tool("get_item", {"type": "object"})],
    )
    assert out["get.item"].model_name == "mcp__memory__get_item"
    assert out["get_item"].verdict == "hidden"
    assert "already taken by tool 'get.item'" in out["get_item"].findings[-1].message


def test_codex_0171_keeps_both_tools_whose_sanitised_names_collide_each_with_a_hash(view):
    """Observed (clients/calibrations/codex/0.171.0.json, probe set name-collision); the hash is
    Codex's: the first 12 hex digits of a SHA-1 of server and raw tool name (tools.rs@00a35b1b)."""
    out = views(
        view, "codex", [tool("get.item", {"type": "object"}), tool("get_item", {"type": "object"})]
    )
    assert out["get.item"].model_name == "mcp__memory__get_item_6c102235ac88"
    assert out["get_item"].model_name == "mcp__memory__get_item_2e0f85e405ed"
    assert "hidden" not in {out[n].verdict for n in ("get.item", "get_item")}


def test_codex_collision_hashes_are_the_ones_codex_0171_sent(view):
    """The names Codex 0.171.0 gave its model (clients/calibrations/codex/0.171.0.json)."""
    names = ("collide.a", "collide_a", "collide-b", "collide_b")
    out = views(view, "codex", [tool(n, {"type": "object"}) for n in names], "probe")
    assert {n: out[n].model_name for n in names} == {
        "collide.a": "mcp__probe__collide_a_ffed87105bbc",
        "collide_a": "mcp__probe__collide_a_5f7194c1df7c",
        "collide-b": "mcp__probe__collide_b_a21bc6990891",
        "collide_b": "mcp__probe__collide_b_edcb334caef7",
    }


def test_codex_0171_cuts_a_name_past_128_and_hashes_it_as_it_did(view):
    """clients/calibrations/codex/0.171.0.json, probe set very-long-name (129 characters)."""
    name = "probe_" + "very_long_tool_name_" * 6 + "end"
    out = views(view, "codex", [tool(name, {"type": "object"})], "probe")[name]
    assert out.model_name == "mcp__probe__" + name[:103] + "_69bd2fd08e18"
    assert len(out.model_name) == 128 and out.verdict != "hidden"


def test_codex_refuses_a_server_whose_name_has_a_dot(view):
    out = view("codex", [STORE], "memory.v2")
    assert out.outcome == "server-dropped"
    assert "server name 'memory.v2'" in out.findings[-1].message


def test_roo_flattens_a_root_anyof_to_its_first_object_variant(view):
    search = views(
        view,
        "roo-code",
        [
            tool(
                "search",
                {"type": "object", "anyOf": SEARCH_UNTYPED_ANYOF["inputSchema"]["anyOf"]},
            )
        ],
    )["search"]
    assert search.model_schema == {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
        "additionalProperties": False,
    }
    assert search.verdict == "degraded"
    assert search.model_name == "mcp--memory--search"


def test_roo_closes_every_object_and_turns_type_arrays_into_anyof(view):
    schema = {
        "type": "object",
        "properties": {
            "meta": {"type": "object", "additionalProperties": {"type": "string"}},
            "when": {"type": "string", "format": "date-time"},
            "site": {"type": "string", "format": "uri"},
            "ids": {"type": ["array", "null"], "items": {"type": "integer"}, "maxItems": 5},
        },
        "required": ["meta", "gone"],
    }
    out = views(view, "roo-code", [tool("put", schema)])["put"].model_schema
    assert out["additionalProperties"] is False and out["required"] == ["meta"]
    assert out["properties"]["meta"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert out["properties"]["when"]["format"] == "date-time"
    assert "format" not in out["properties"]["site"]
    assert out["properties"]["ids"] == {
        "anyOf": [{"type": "array", "items": {"type": "integer"}, "maxItems": 5}, {"type": "null"}]
    }


def test_roo_deletes_invalid_name_characters(view):
    out = views(view, "roo-code", [tool("get.current time", {"type": "object"})], "my server!")
    assert out["get.current time"].model_name == "mcp--my_server--getcurrent_time"


def test_vercel_forces_root_additional_properties_false_over_a_servers_true(view):
    open_tool = tool(
        "annotate",
        {
            "type": "object",
            "properties": {"note": {"type": "string"}},
            "additionalProperties": True,
        },
    )
    out = views(view, "vercel-ai-sdk", [open_tool, NO_ARGS])
    assert out["annotate"].model_schema["additionalProperties"] is False
    assert out["annotate"].verdict == "degraded"
    assert any(
        f.pointer == "/inputSchema/additionalProperties" and f.lost
        for f in out["annotate"].findings
    )
    assert out["memory_stats"].model_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert out["memory_stats"].verdict == "visible"


def test_the_ai_sdk_openapi_conversion_omits_parameters_of_a_no_argument_tool_and_drops_unsupported_keywords():
    """docs/clients/vercel.md#google-provider (vercel/ai ed857f50); @ai-sdk/google 4.0.121 no longer applies it (its calibration)."""
    convert = registry.get("vercel-google-openapi").fn
    out = convert(initial_state([(0, NO_ARGS), (0, STORE)], "m"))
    stats, store = out.tools
    assert stats.schema is None
    assert "minimum" not in store.schema["properties"]["importance"]
    assert "additionalProperties" not in store.schema


def test_the_ai_sdk_with_gemini_sends_the_schema_the_mcp_client_built(view):
    out = views(view, "vercel-ai-sdk-google", [NO_ARGS, STORE])
    assert (
        out["memory_stats"].model_schema
        == views(view, "vercel-ai-sdk", [NO_ARGS])["memory_stats"].model_schema
    )


def test_a_first_page_only_client_hides_the_tools_of_page_two(view):
    pages = [(0, STORE), (0, REFLECT_FLAT), (1, RECALL_NULLABLE)]
    legacy = views(view, "claude-code-legacy", pages)
    assert legacy["memory_recall"].verdict == "hidden"
    assert "page 2 of tools/list" in legacy["memory_recall"].findings[-1].message
    assert legacy["memory_store"].verdict == "visible"
    assert views(view, "claude-code", pages)["memory_recall"].verdict == "visible"


def test_a_bad_tool_on_an_unread_page_does_not_drop_the_server(view):
    out = view("gemini-cli", [(0, STORE), (1, SEARCH_UNTYPED_ANYOF)], "memory")
    assert out.outcome == "ok"
    assert out.by_tool()["search"].verdict == "hidden"


def test_max_tools_caps_the_list_and_windsurf_refuses_the_whole_server(view):
    cursor = view("cursor", many(45), "m")
    verdicts = [t.verdict for t in cursor.tools]
    assert verdicts[:40] == ["visible"] * 40 and verdicts[40:] == ["hidden"] * 5
    assert "the client sends only the first 40 tools" in cursor.tools[44].findings[-1].message
    assert view("windsurf", many(100), "m").outcome == "ok"
    refused = view("windsurf", many(101), "m")
    assert refused.outcome == "server-dropped"
    assert "exceed its limit of 100 tools" in refused.findings[-1].message


def test_copilot_deletes_root_combinators_and_keeps_the_siblings(view):
    reflect = views(view, "vscode-copilot", [REFLECT_ANYOF])["memory_reflect"]
    assert reflect.verdict == "degraded"
    assert "anyOf" not in reflect.model_schema
    assert set(reflect.model_schema["properties"]) == set(REFLECT_PROPERTIES)
    assert "minimum" not in reflect.model_schema["properties"]["confidence"]  # gpt-4* strip
    assert reflect.model_name == "mcp_memory_memory_reflect"


def test_vscode_omits_a_tool_whose_schema_fails_the_draft_07_metaschema(view):
    bad = tool("bad", {"type": "object", "properties": {"n": {"type": "integr"}}})
    out = views(view, "vscode-copilot", [STORE, bad])
    assert out["bad"].verdict == "hidden"
    assert out["bad"].findings[-1].code == "invalid-json-schema"
    assert out["memory_store"].verdict in ("visible", "degraded")


def test_vscode_ids_use_a_13_character_label_slug_and_replace_dots(view):
    out = views(
        view, "vscode-copilot", [tool("files.read", {"type": "object"})], "My Filesystem Server"
    )
    assert out["files.read"].model_name == "mcp_my_filesystem_files_read"


def test_the_ts_sdk_rejects_boolean_property_schemas_from_1_24_only():
    state = initial_state([(0, tool("t", {"type": "object", "properties": {"flag": True}}))], "s")
    gate = registry.get("ts-sdk-gate").fn
    assert gate(state, sdk_version="1.24.0").outcome == "server-dropped"
    assert gate(state, sdk_version="1.23.1").outcome == "ok"


def test_the_ts_sdk_rejects_the_list_for_an_output_schema_that_is_not_an_object(view):
    out = view("cline", [STORE, tool("t", {"type": "object"}, outputSchema={"type": "array"})], "m")
    assert out.outcome == "server-dropped"
    assert out.findings[-1].pointer == "/outputSchema/type"


def test_openai_strict_makes_every_property_required_and_closes_objects(view):
    out = views(view, "openai-agents-strict", [RECALL_NULLABLE])["memory_recall"]
    assert out.model_schema["required"] == ["agent_id", "query", "limit"]
    assert out.model_schema["additionalProperties"] is False
    assert "default" not in out.model_schema["properties"]["limit"]
    assert out.verdict == "degraded"
    assert any(f.code == "made-required" for f in out.findings)


def test_openai_strict_falls_back_to_the_original_schema_for_an_open_object(view):
    open_tool = tool(
        "annotate",
        {
            "type": "object",
            "properties": {"note": {"type": "string"}},
            "additionalProperties": True,
        },
    )
    out = views(view, "openai-agents-strict", [open_tool])["annotate"]
    assert out.model_schema == open_tool["inputSchema"]
    assert out.verdict == "visible"
    assert out.findings[-1].code == "strict-fallback"


def test_duplicate_tool_names_break_the_agents_sdk_and_goose_sessions(view):
    twice = [STORE, copy.deepcopy(STORE)]
    assert view("openai-agents-strict", twice, "m").outcome == "session-broken"
    assert view("goose", twice, "m").outcome == "session-broken"
    codex = view("codex", twice, "m").tools
    assert codex[0].verdict != "hidden" and codex[1].verdict == "hidden"


def test_cline_flattens_to_properties_and_declares_untyped_ones_as_strings(view):
    schema = {
        "type": "object",
        "$defs": {"Id": {"type": "string"}},
        "properties": {
            "id": {"$ref": "#/$defs/Id"},
            "value": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        },
        "required": ["id"],
        "anyOf": [{"required": ["id"]}],
    }
    out = views(view, "cline", [tool("set", schema)])["set"]
    assert out.verdict == "degraded"
    assert out.model_schema["properties"]["value"]["type"] == "string"
    assert "$defs" not in out.model_schema and "anyOf" not in out.model_schema
    codes = {f.code for f in out.findings}
    assert {"type-defaulted", "dangling-ref"} <= codes
    assert (
        out.model_name.startswith("c")
        and out.model_name.endswith("0mcp0set")
        and len(out.model_name) == 14
    )


def test_cline_skips_a_tool_whose_prefixed_name_exceeds_64(view):
    out = views(view, "cline", [tool("x" * 60, {"type": "object"})])
    assert out["x" * 60].verdict == "hidden"


def test_continue_prefixes_the_lowercased_server_unless_the_tool_already_carries_it(view):
    out = views(
        view,
        "continue",
        [tool("github_search", {"type": "object"}), tool("list", {"type": "object"})],
        "GitHub",
    )
    assert out["github_search"].model_name == "github_search"
    assert out["list"].model_name == "github_list"


def test_zed_adds_a_closed_root_and_strips_schema_and_title(view):
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Args",
        "type": "object",
        "properties": {"q": {"type": "string"}},
    }
    out = views(view, "zed", [tool("find", schema)])["find"]
    assert out.model_schema == {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "additionalProperties": False,
    }
    # $schema and title constrain nothing, and the closed root is stricter, not a loss: the
    # model loses nothing it could use, so the tool stays visible (issue 11, materiality).
    assert out.verdict == "visible"
    assert out.findings and {f.materiality for f in out.findings} == {"none"}


def test_zed_gemini_format_makes_a_conditional_schema_unusable():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "if": {"required": ["a"]},
        "then": {},
    }
    assert zed_adapt.rewrite(schema, format="json-schema-subset").drop.code == "schema-incompatible"
    ok = zed_adapt.rewrite(
        {
            "type": "object",
            "properties": {"a": {"type": ["string", "null"], "format": "uuid"}},
            "additionalProperties": False,
        },
        format="json-schema-subset",
    )
    assert ok.schema == {
        "type": "object",
        "properties": {"a": {"type": "string", "nullable": True}},
    }


def test_goose_inserts_properties_required_and_type(view):
    out = views(
        view,
        "goose",
        [
            tool("ping", {}),
            tool("nest", {"type": "object", "properties": {"o": {"type": "object"}}}),
        ],
        "ext",
    )
    assert out["ping"].model_schema == {"properties": {}, "required": [], "type": "object"}
    assert out["nest"].model_schema["properties"]["o"] == {
        "type": "object",
        "properties": {},
        "required": [],
    }
    assert out["ping"].model_name == "ext__ping"


# ----------------------------------------------------------- single behaviours, directly


def test_strip_defs_reports_every_ref_left_dangling():
    out = strip_defs.rewrite(NESTED_REFS["inputSchema"])
    assert "$defs" not in out.schema
    assert sorted(f.pointer for f in out.findings) == [
        "/inputSchema/properties/cc/items/$ref",
        "/inputSchema/properties/owner/$ref",
    ]


def test_resolve_refs_inlines_local_refs_and_describes_cycles_like_adk():
    out = resolve_refs.rewrite(
        CYCLIC,
        forms="last-segment",
        on_cycle="circular-description",
        remove_defs=True,
        walk="every",
    )
    head = out.schema["properties"]["head"]
    assert head["properties"]["next"] == {"type": "object", "description": "Circular ref to Node"}
    assert "$defs" not in out.schema
    refused = resolve_refs.rewrite(CYCLIC, on_cycle="session-broken")
    assert refused.fail[0] == "session-broken"


def test_strip_keywords_never_touches_property_names():
    schema = {
        "type": "object",
        "properties": {
            "format": {"type": "string", "format": "email"},
            "default": {"type": "integer", "default": 1},
        },
    }
    out = strip_keywords.rewrite(schema, keywords=["format", "default"], where="all").schema
    assert out == {
        "type": "object",
        "properties": {"format": {"type": "string"}, "default": {"type": "integer"}},
    }


def test_root_combinators_policies_on_one_schema():
    schema = REFLECT_ANYOF["inputSchema"]
    assert root_combinators.rewrite(schema, policy="drop-tool").drop.code == "root-combinator"
    assert root_combinators.rewrite(schema, policy="session-broken").fail[0] == "session-broken"
    assert "anyOf" not in root_combinators.rewrite(schema, policy="delete-keyword").schema
    collapsed = root_combinators.rewrite(
        ORDER_ONEOF["inputSchema"], policy="collapse-empty-object"
    ).schema
    assert collapsed == {"type": "object", "properties": {}}
    assert root_combinators.rewrite(schema, policy="pass") == Outcome()


def test_metaschema_validate_accepts_true_and_checks_regex_patterns_when_asked():
    assert metaschema_validate.rewrite(True).drop is None
    bad_regex = {"type": "object", "properties": {"s": {"type": "string", "pattern": "(unclosed"}}}
    assert metaschema_validate.rewrite(bad_regex, formats=["regex"]).drop is not None
    assert metaschema_validate.rewrite(bad_regex).drop is None


def test_array_items_required_ignores_nullable_arrays_as_copilot_does():
    schema = {"type": "object", "properties": {"xs": {"type": ["array", "null"]}}}
    assert array_items_required.rewrite(schema, where="copilot").fail is None
    assert array_items_required.rewrite(schema, match="contains").fail[0] == "session-broken"


def test_adk_keeps_gemini_fields_only_and_types_arrays_of_strings():
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "xs": {"type": "array"},
            "n": {"type": ["integer", "null"], "format": "int64"},
            "u": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
    }
    out = adk_gemini_schema.rewrite(schema).schema
    assert out == {
        "type": "object",
        "properties": {
            "xs": {"type": "array", "items": {"type": "string"}},
            "n": {"type": ["integer", "null"]},
            "u": {"type": "object"},
        },
    }


def test_litellm_unpacks_property_refs_only_and_turns_null_arms_into_nullable():
    schema = {
        "type": "object",
        "$defs": {"Tag": {"type": "string"}},
        "properties": {
            "tag": {"$ref": "#/$defs/Tag"},
            "maybe": {
                "anyOf": [{"type": "integer"}, {"type": "null"}],
                "title": "Maybe",
                "default": None,
            },
            "deep": {"type": "object", "properties": {"t": {"$ref": "#/$defs/Tag"}}},
        },
    }
    out = registry.get("litellm-vertex").fn(initial_state([(0, tool("t", schema))], "s")).tools[0]
    assert out.schema["properties"]["tag"] == {"type": "string"}
    assert out.schema["properties"]["maybe"] == {
        "anyOf": [{"type": "integer", "nullable": True, "title": "Maybe"}]
    }
    assert out.schema["properties"]["deep"] == {"type": "object", "properties": {"t": {}}}
    assert {f.pointer for f in out.findings if f.lost} == {
        "/inputSchema/properties/deep/properties/t/type",  # the ref is not unpacked there
        "/inputSchema/properties/maybe/default",  # siblings of anyOf are dropped
    }
    cyclic = litellm_vertex.rewrite(
        {
            "type": "object",
            "$defs": {"N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}}},
            "properties": {"n": {"$ref": "#/$defs/N"}},
        }
    )
    assert cyclic.fail[0] == "session-broken"


def test_vercel_google_converts_enums_and_type_arrays_the_gemini_way():
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "enum": [1, 2]},
            "s": {"type": ["string", "null"]},
            "o": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
        },
    }
    out = vercel_google_openapi.rewrite(schema).schema["properties"]
    assert out["n"] == {"type": "integer", "format": "enum", "enum": ["1", "2"]}
    assert out["s"] == {"anyOf": [{"type": "string"}], "nullable": True}
    assert out["o"] == {"type": "string", "minLength": 2, "nullable": True}
    mixed = vercel_google_openapi.rewrite(
        {"type": "object", "properties": {"m": {"enum": ["a", 1]}}}
    )
    assert mixed.fail[0] == "session-broken"


def test_roo_sends_a_schema_its_parser_rejects_unchanged():
    schema = {"type": "object", "properties": {"flag": True}}
    out = roo_normalize.rewrite(schema)
    assert out.schema is MISSING  # sent as it is
    assert out.findings[0].code == "not-normalised"


def test_openai_strict_inlines_a_ref_with_siblings():
    schema = {
        "type": "object",
        "$defs": {"P": {"type": "object", "properties": {"a": {"type": "string"}}}},
        "properties": {"p": {"$ref": "#/$defs/P", "description": "A P."}},
    }
    out = openai_strict.rewrite(schema).schema
    assert out["properties"]["p"] == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "description": "A P.",
        "additionalProperties": False,
        "required": ["a"],
    }


def test_tool_name_numbers_a_colliding_name_when_told_to_suffix():
    state = initial_state([(0, tool("a.b", {})), (0, tool("a_b", {})), (0, tool("a-b", {}))], "s")
    out = registry.get("tool-name").fn(
        state, template="{tool}", invalid_chars="[^a-z_]", on_collision="suffix"
    )
    assert [t.name for t in out.tools] == ["a_b", "a_b_2", "a_b_3"]


def test_resolve_refs_can_stand_in_a_typed_object_for_a_cycle_like_codex():
    out = resolve_refs.rewrite(CYCLIC, on_cycle="typed-stand-in")
    assert out.schema["properties"]["head"]["properties"]["next"] == {
        "type": "object",
        "properties": {},
    }
    assert any(f.code == "ref-cycle" and f.lost for f in out.findings)


def test_a_verdict_resting_on_an_inference_says_its_evidence_is_assumed(view):
    out = view("gemini-cli", [STORE, tool("walk", CYCLIC)], "memory")
    assert out.outcome == "session-broken"
    assert out.by_tool()["walk"].weakest_evidence == "assumed"


# ------------------------------------------------------------ the registry and the profiles


DISCOVERY = sorted(n for n, s in registry.load_all().items() if s.phase == "discovery")
REQUIRED_SAMPLES = {"keywords": ["anyOf", "format"]}
# Evidence a reader can open: a page of docs/clients (tests/test_citations.py checks the anchor
# exists), a calibration record, or a URL.
EVIDENCE = re.compile(
    r"docs/clients/[\w-]+\.md|clients/calibrations/[\w.-]+/[\w.-]+\.json|https?://\S"
)


@pytest.mark.parametrize("name", DISCOVERY)
def test_every_discovery_behaviour_declares_typed_documented_params_and_cites_its_evidence(name):
    spec = registry.get(name)
    Draft202012Validator.check_schema(spec.params_schema)
    for param, schema in spec.params.items():
        assert schema.get("description"), f"{name}.{param} has no description"
        assert "type" in schema or "enum" in schema, f"{name}.{param} has no type"
        assert "default" in schema or param in spec.required, f"{name}.{param} has no default"
    doc = spec.fn.__doc__ or ""
    assert spec.summary and (EVIDENCE.search(doc) or name == "pass-through"), (
        f"{name} cites no evidence in the repository (a docs/clients page, a calibration record, a URL)"
    )


@pytest.mark.parametrize("name", DISCOVERY)
def test_every_discovery_behaviour_defaults_the_same_in_code_and_in_its_params_schema(name):
    spec = registry.get(name)
    signature = inspect.signature(getattr(spec.fn, "rewrite", spec.fn))
    for param, schema in spec.params.items():
        if param in signature.parameters and "default" in schema:
            default = signature.parameters[param].default
            assert (list(default) if isinstance(default, tuple) else default) == schema["default"]


@pytest.mark.parametrize("schema_name", sorted(HOSTILE_SCHEMAS))
@pytest.mark.parametrize("name", DISCOVERY)
def test_no_discovery_behaviour_raises_on_a_hostile_schema(name, schema_name):
    spec = registry.get(name)
    params = {**spec.defaults(), **{k: REQUIRED_SAMPLES[k] for k in spec.required}}
    hostile = HOSTILE_SCHEMAS[schema_name]
    state = initial_state([(0, tool("hostile", hostile)), (0, STORE)], "srv")
    out = spec.fn(state, **params)
    assert isinstance(out, ListState)
    assert len(out.tools) == 2


@pytest.mark.parametrize("schema_name", sorted(HOSTILE_SCHEMAS))
def test_every_concrete_profile_survives_every_hostile_schema(view, schema_name):
    hostile = HOSTILE_SCHEMAS[schema_name]
    for name in _concrete():
        out = view(name, [tool("hostile", hostile), STORE], "srv")
        assert next(t.verdict for t in out.tools) in DISCOVERY_VERDICTS


def _concrete() -> list[str]:
    from pathlib import Path

    import yaml

    clients = Path(__file__).resolve().parents[2] / "clients"
    return [
        p.stem
        for p in sorted(clients.glob("*.yaml"))
        if not yaml.safe_load(p.read_text()).get("abstract")
    ]


VARIED_SNAPSHOT = [
    (0, STORE),
    (0, REFLECT_ANYOF),
    (0, {**REFLECT_FLAT, "name": "memory_reflect_flat"}),
    (0, RECALL_NULLABLE),
    (0, NESTED_REFS),
    (0, NO_ARGS),
    (0, TAG_NO_ITEMS),
    (0, tool(LONG_TOOL, {"type": "object"})),
    (0, tool("files.read", {"type": "object", "properties": {"path": {"type": "string"}}})),
    (0, tool("walk", CYCLIC)),
    (1, tool("page_two", {"type": "object", "properties": {"x": {"type": "integer"}}})),
    (
        1,
        {
            **STORE,
            "name": "store_again",
            "outputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}},
        },
    ),
]


def test_every_concrete_profile_gives_each_tool_of_a_varied_snapshot_a_verdict(
    view, concrete_profile
):
    out = view(concrete_profile, VARIED_SNAPSHOT, "memory")
    assert len(out.tools) == len(VARIED_SNAPSHOT)
    assert out.outcome in ("ok", "server-dropped", "session-broken")
    profile = load(concrete_profile)
    for t in out.tools:
        assert t.verdict in DISCOVERY_VERDICTS
        # shown: what the model sees, and what the client sends to an API that refuses it
        sent = t.verdict in ("visible", "degraded") or (
            t.tool in out.culprits and refused_by_api(profile, t.findings[-1])
        )
        assert (t.model_name is not None) == sent, t
        for f in t.findings:
            assert f.behaviour and f.evidence, (
                f"{concrete_profile}: finding {f.code} has no behaviour/evidence"
            )
        json.dumps(t.to_json())


def test_every_bundled_profile_entry_has_evidence_and_every_concrete_profile_an_identity(
    profile, concrete_profile
):
    loaded = profile(concrete_profile)
    assert loaded.identity is not None and loaded.identity.client_info["name"]
    assert loaded.discovery, "a concrete profile has at least one discovery entry"
    for use in loaded.discovery:
        assert use.evidence and all(
            e.level in ("observed", "code", "issue", "doc", "assumed") for e in use.evidence
        )
        assert all(e.note for e in use.evidence), (
            f"{concrete_profile}: {use.id} evidence without a note"
        )
