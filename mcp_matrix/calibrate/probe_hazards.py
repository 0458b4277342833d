"""The probe tools of the sets that hold one hazard each: names a client must clean or that
clean to one name, an outputSchema answered with text, schema details, and schemas that end a
session or a library's run (``mcp_matrix.calibrate.probe`` makes the sets).
"""

from __future__ import annotations

from mcp_matrix.calibrate.fake_model import ScriptedCall
from mcp_matrix.calibrate.probe_tools import CLOSED_Q, CONTROL, CONTROL_CALL, LONG_NAME, probe_tool

# -- names: invalid characters, and pairs that become one name once cleaned or cut ------------


def _named(name: str, marker: str, key: str) -> dict:
    """A tool whose description and only property tell it apart from its look-alike."""
    return probe_tool(
        name,
        {"type": "object", "properties": {key: {"type": "string"}}},
        f"Name probe {marker}.",
    )


NAME_CHARS = (
    ("dash-name", "dash", "d"),
    ("space name", "space", "s"),
    ("slash/name", "slash", "sl"),
    ("colon:name", "colon", "c"),
    ("caf\u00e9", "accent", "a"),
)
LONG_PAIR = (LONG_NAME + "_one", LONG_NAME + "_two")  # 73 characters, the same first 69
COLLISIONS = (
    ("collide.a", "dot form of collide a", "dot_a"),
    ("collide_a", "underscore form of collide a", "under_a"),
    ("collide-b", "dash form of collide b", "dash_b"),
    ("collide_b", "underscore form of collide b", "under_b"),
    (LONG_PAIR[0], "long one", "long_one"),
    (LONG_PAIR[1], "long two", "long_two"),
)

CLASHES = (  # pairs other cleaners join: '.' and '-' (Copilot), space, ':' (Gemini keeps it), case
    ("clash.c", "dot form of clash c", "dot_c"),
    ("clash-c", "dash form of clash c", "dash_c"),
    ("clash d", "space form of clash d", "space_d"),
    ("clash_d", "underscore form of clash d", "under_d"),
    ("clash:e", "colon form of clash e", "colon_e"),
    ("clash_e", "underscore form of clash e", "under_e"),
    ("Clash_F", "upper-case form of clash f", "upper_f"),
    ("clash_f", "lower-case form of clash f", "lower_f"),
)


def name_set(entries: tuple[tuple[str, str, str], ...]) -> tuple[tuple, tuple]:
    tools = (CONTROL,) + tuple(_named(n, m, k) for n, m, k in entries)
    calls = (CONTROL_CALL,) + tuple(ScriptedCall(n, {k: "x"}) for n, _, k in entries)
    return tools, calls


# -- results: a tool with an outputSchema that answers text only --------------------------------

OUTPUT_TEXT_TOOL = probe_tool(
    "text_result",
    {"type": "object", "properties": {"q": {"type": "string"}}},
    "Declares an outputSchema; the probe server answers with text content only.",
    outputSchema={
        "type": "object",
        "properties": {"received": {"type": "string"}},
        "required": ["received"],
    },
)

# -- schema details: unused $defs, const, an empty property schema, minItems --------------------

DETAILS_TOOLS = (
    CONTROL,
    probe_tool(
        "unused_defs",
        {
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "$defs": {"Unused": {"type": "object", "properties": {"z": {"type": "string"}}}},
        },
        "A $defs entry no $ref uses.",
    ),
    probe_tool(
        "const_only",
        {"type": "object", "properties": {"mode": {"type": "string", "const": "fixed"}}},
        "A const without enum.",
    ),
    probe_tool(
        "loose_parts",
        {
            "type": "object",
            "properties": {
                "anything": {},
                "list": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            },
        },
        "An empty property schema and minItems.",
    ),
)
DETAILS_CALLS = (
    CONTROL_CALL,
    ScriptedCall("unused_defs", {"q": "x"}),
    ScriptedCall("const_only", {"mode": "fixed"}),
    ScriptedCall("loose_parts", {"anything": {"k": 1}, "list": ["a"]}),
)


# -- per-tool vs whole-session failure, and schemas that end a library's run ----------------------

DESCRIPTION_5K = (
    "Reads one probe value. " + "This sentence pads a description past 4,096 characters. " * 88
)
BAD_KEY_SCHEMA = {  # the Anthropic API's property keys match ^[a-zA-Z0-9_.-]{1,64}$
    "type": "object",
    "properties": {"ok": {"type": "string"}, "bad key!": {"type": "string"}},
}
ROOT_IF_SCHEMA = {
    "type": "object",
    "properties": {"kind": {"type": "string"}, "id": {"type": "string"}},
    "if": {"properties": {"kind": {"const": "id"}}},
    "then": {"required": ["id"]},
    "else": {"required": ["kind"]},
}
BOOL_SUB_SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}, "anything": True, "never": False},
}
NULLABLE_SCHEMA = {"type": "object", "properties": {"maybe": {"type": ["string", "null"]}}}
DOTTED_KEY_SCHEMA = {"type": "object", "properties": {"user.name": {"type": "string"}}}


LONG_NAME_TOOL = probe_tool(LONG_NAME, {"type": "object", "properties": {"q": {"type": "string"}}})
DOTTED_TOOL = probe_tool(
    "probe.dotted", {"type": "object", "properties": {"q": {"type": "string"}}}
)
STRICT_TOOL = probe_tool(
    "strict",
    {**CLOSED_Q, "required": ["q"]},
    "Strict probe tool: q is required and nothing else is allowed.",
)
# Three turns whose one call the server's schema refuses (q missing), then the control.
STREAK_CALLS = tuple(ScriptedCall("strict", {}, turn=t) for t in range(3)) + (
    ScriptedCall("control", {"q": "hello"}, turn=3),
)
