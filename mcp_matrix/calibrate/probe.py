"""The probe tool lists: tools built to make every modelled client behaviour visible.

Each **probe set** is one server run. A set holds at most one list-level hazard (a tool that
may make a client drop, break or refuse the whole list), next to a ``control`` tool, so one
hazard never hides the other observations. ``core`` holds everything that acts per tool or
per argument. ``PROBE_COVERAGE`` says which set exposes which registry behaviour; a test keeps
it complete against ``mcp_matrix.behaviours.registry``.

Scripted calls carry arguments chosen to expose mangling: arrays, objects, booleans, nulls,
``1.0``, unknown keys, and a stringified array (does the client parse it back?). ``coercion``
sends the string form of every JSON type where the schema asks for the type (and a number where
it asks for a string); ``big-int`` sends integers beyond 2^53, where a double cannot hold them.
``validation`` sends calls the server's schema refuses (does the client refuse them first?);
``name-chars``, ``name-collision`` and ``name-clash`` list names a client must clean, and pairs
that clean or cut to one name, each tool told apart by its description and property;
``output-text`` has a tool with an ``outputSchema`` answer with text only (what is the model told?);
``schema-details`` holds an unused ``$defs`` entry, ``const``, ``{}`` and ``minItems``;
``bad-key``, ``root-if`` and ``long-description`` ask whether a client skips one tool or the
whole session (a property key the Anthropic API refuses, a root ``if``, a 5,000-character
description); ``bool-subschema``, ``nullable-type`` and ``dotted-key`` hold schemas that end some
libraries' whole run. ``error-streak`` spans four model turns: three calls the server's schema
refuses, then the control (does the client stop calling tools after failures in a row?).
``limit-long-name``, ``limit-dotted-name`` and ``limit-root-anyof`` are those sets with the
fake endpoint enforcing the provider's documented limits (``provider_limits``): what does the
client do when its model API answers 400?
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mcp_matrix.calibrate.fake_model import ScriptedCall
from mcp_matrix.core.jsontypes import JSON

READ_ONLY = {"readOnlyHint": True}
LONG_DESCRIPTION = (
    "Reads one probe value. " + "This sentence pads the description. " * 60
)  # ~2.2k chars
LONG_NAME = "probe_" + "very_long_tool_name_" * 3 + "end"  # 69 characters
VERY_LONG_NAME = "probe_" + "very_long_tool_name_" * 6 + "end"  # 129: over the 128 limits too


def _tool(name: str, schema: object, description: str = "Probe tool.", **extra: JSON) -> dict:
    return {
        "name": name,
        "description": description,
        "inputSchema": schema,
        "annotations": READ_ONLY,
        **extra,
    }


CONTROL = _tool(
    "control",
    {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    "Control tool: a plain schema every client shows as it is.",
)
CONTROL_CALL = ScriptedCall("control", {"q": "hello"})


@dataclass(frozen=True)
class ProbeSet:
    """One server run: the tools to serve and the calls the fake model makes."""

    id: str
    summary: str
    tools: tuple[dict, ...]
    calls: tuple[ScriptedCall, ...]
    page_size: int = 0
    provider_limits: bool = False  # the fake endpoint refuses what the real provider refuses

    def snapshot_doc(self) -> dict:
        """The set as a snapshot document (``mcp_matrix.targets.snapshot``), for the discovery simulation."""
        pages = (
            [list(self.tools)]
            if not self.page_size
            else [
                list(self.tools[i : i + self.page_size])
                for i in range(0, len(self.tools), self.page_size)
            ]
        )
        return {
            "format": "mcp-matrix-snapshot",
            "target": {"kind": "probe", "probe_set": self.id},
            "initialize": {
                "protocolVersion": "2025-11-25",
                "serverInfo": {"name": "mcp-matrix-probe", "version": "1"},
                "capabilities": {"tools": {"listChanged": False}},
            },
            "pages": [{"tools": p} for p in pages],
        }


ARGS_SCHEMA = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {"type": "integer"},
            "description": "A list of integers.",
        },
        "options": {
            "type": "object",
            "properties": {"mode": {"type": "string"}},
            "description": "An object.",
        },
        "flag": {"type": "boolean"},
        "note": {"type": "string", "description": "Optional note; the call sends null."},
        "ratio": {"type": "number"},
        "count": {"type": "integer"},
    },
    "required": ["items"],
}
ARGS_CALL = {
    "items": [1, 2, 3],
    "options": {"mode": "fast"},
    "flag": True,
    "note": None,
    "ratio": 1.0,
    "count": 3,
    "unknown_key": "kept?",
}

CORE_TOOLS = (
    CONTROL,
    _tool("args", ARGS_SCHEMA, "Takes every JSON type; the call adds a null and an unknown key."),
    _tool(
        "stringified",
        {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "meta": {"type": "object", "properties": {"k": {"type": "string"}}},
            },
            "required": ["tags"],
        },
        "The call sends the array and the object as JSON strings.",
    ),
    _tool("nullable", {"type": "object", "properties": {"maybe": {"type": ["string", "null"]}}}),
    _tool("no_items", {"type": "object", "properties": {"list": {"type": "array"}}}),
    _tool(
        "refs",
        {
            "type": "object",
            "properties": {"point": {"$ref": "#/$defs/Point"}},
            "$defs": {
                "Point": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                }
            },
        },
    ),
    _tool(
        "keywords",
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "title": "KeywordsInput",
            "additionalProperties": False,
            "properties": {
                "email": {
                    "type": "string",
                    "format": "email",
                    "minLength": 3,
                    "maxLength": 80,
                    "pattern": "^.+@.+$",
                },
                "size": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 10,
                    "default": 5,
                    "examples": [3],
                },
                "kind": {"type": "string", "enum": ["a", "b"], "const": "a"},
            },
        },
    ),
    _tool(
        "tuple",
        {
            "type": "object",
            "properties": {
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}
            },
        },
    ),
    _tool(
        "long_description",
        {"type": "object", "properties": {"q": {"type": "string", "description": "x" * 1500}}},
        LONG_DESCRIPTION,
    ),
    _tool(
        "required_missing",
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost"]},
    ),
    _tool("no_properties", {"type": "object"}, "No properties key at all."),
    _tool(
        "nested_anyof",
        {
            "type": "object",
            "properties": {
                "v": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "w": {"oneOf": [{"type": "string"}, {"type": "boolean"}]},
            },
        },
    ),
    _tool(
        "additional",
        {
            "type": "object",
            "properties": {"o": {"type": "object", "additionalProperties": {"type": "string"}}},
        },
    ),
)
CORE_CALLS = (
    CONTROL_CALL,
    ScriptedCall("args", ARGS_CALL),
    ScriptedCall("stringified", {"tags": '["a", "b"]', "meta": '{"k": "v"}'}),
    ScriptedCall("nullable", {"maybe": None}),
    ScriptedCall("no_items", {"list": [1, "two"]}),
    ScriptedCall("refs", {"point": {"x": 1.0, "y": 2}}),
    ScriptedCall("keywords", {"email": "a@b.c", "size": 3, "kind": "a"}),
    ScriptedCall("no_properties", {}),
)


# -- argument coercion: the schema asks for a type, the model sends its string form -----------

COERCION_TOOLS = (
    CONTROL,
    _tool(
        "coerce_scalars",
        {
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "on": {"type": "boolean"},
                "off": {"type": "boolean"},
                "label": {"type": "string", "description": "A string that looks like a number."},
            },
        },
        "The call sends every scalar as its string form; label is a string already.",
    ),
    _tool(
        "coerce_json",
        {
            "type": "object",
            "properties": {
                "obj": {"type": "object", "properties": {"a": {"type": "integer"}}},
                "arr": {"type": "array", "items": {"type": "integer"}},
            },
        },
        "The call sends the object and the array as JSON strings.",
    ),
    _tool(
        "coerce_odd",
        {
            "type": "object",
            "properties": {
                "word": {"type": "integer", "description": "The call sends a non-number."},
                "frac": {"type": "integer", "description": "The call sends 2.5 as a string."},
                "yes": {"type": "boolean", "description": "The call sends 'yes'."},
                "spaced": {"type": "number", "description": "The call sends ' 3 '."},
                "big": {"type": "integer", "description": "The call sends 2^53 + 1 as a string."},
                "point_zero": {"type": "integer", "description": "The call sends '5.0'."},
                "sci": {"type": "number", "description": "The call sends '1e3'."},
                "negative": {"type": "integer", "description": "The call sends '-7'."},
                "caps": {"type": "boolean", "description": "The call sends 'True'."},
            },
        },
        "Strings a coercion may or may not accept.",
    ),
    _tool(
        "coerce_nested",
        {
            "type": "object",
            "properties": {
                "outer": {"type": "object", "properties": {"n": {"type": "integer"}}},
                "ids": {"type": "array", "items": {"type": "integer"}},
            },
        },
        "String forms inside an object and an array.",
    ),
    _tool(
        "coerce_union",
        {
            "type": "object",
            "properties": {
                "either": {"type": ["integer", "string"]},
                "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "nullable": {"type": ["integer", "null"]},
            },
        },
        "A type list and an anyOf that both allow a number.",
    ),
    _tool(
        "coerce_reverse",
        {
            "type": "object",
            "properties": {"text": {"type": "string"}, "flag_text": {"type": "string"}},
        },
        "String properties; the call sends a number and a boolean.",
    ),
)
COERCION_CALLS = (
    CONTROL_CALL,
    ScriptedCall(
        "coerce_scalars",
        {"count": "5", "ratio": "2.5", "on": "true", "off": "false", "label": "7"},
    ),
    ScriptedCall("coerce_json", {"obj": '{"a": 1}', "arr": "[1, 2]"}),
    ScriptedCall(
        "coerce_odd",
        {
            "word": "abc",
            "frac": "2.5",
            "yes": "yes",
            "spaced": " 3 ",
            "big": "9007199254740993",
            "point_zero": "5.0",
            "sci": "1e3",
            "negative": "-7",
            "caps": "True",
        },
    ),
    ScriptedCall("coerce_nested", {"outer": {"n": "5"}, "ids": ["1", "2"]}),
    ScriptedCall("coerce_union", {"either": "5", "maybe": "5", "nullable": "5"}),
    ScriptedCall("coerce_reverse", {"text": 5, "flag_text": True}),
)

# -- integers beyond 2^53: what a client holding JSON numbers as doubles sends ----------------

BIG = 2**53 + 1  # 9007199254740993: the first integer a double cannot hold
INT_SCHEMA = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
BIG_INT_TOOLS = (
    CONTROL,
    _tool("big_id", INT_SCHEMA, "The call sends 2^53 + 1."),
    _tool("big_negative", INT_SCHEMA, "The call sends -(2^53 + 1)."),
    _tool("big_int64", INT_SCHEMA, "The call sends 2^63 - 1 (the largest signed 64-bit id)."),
    _tool("big_safe", INT_SCHEMA, "The call sends 2^53 - 1, the largest exact one (a control)."),
    _tool(
        "big_nested",
        {
            "type": "object",
            "properties": {
                "ids": {"type": "array", "items": {"type": "integer"}},
                "ref": {"type": "object", "properties": {"id": {"type": "integer"}}},
            },
        },
        "The call sends 2^53 + 1 inside an array and an object.",
    ),
    _tool(
        "big_string",
        {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
        "The call sends 2^53 + 1 as a string, as a string schema asks (a control).",
    ),
)
BIG_INT_CALLS = (
    CONTROL_CALL,
    ScriptedCall("big_id", {"id": BIG}),
    ScriptedCall("big_negative", {"id": -BIG}),
    ScriptedCall("big_int64", {"id": 2**63 - 1}),
    ScriptedCall("big_safe", {"id": 2**53 - 1}),
    ScriptedCall("big_nested", {"ids": [BIG], "ref": {"id": BIG}}),
    ScriptedCall("big_string", {"id": str(BIG)}),
)

# -- client-side validation: calls the server's schema refuses (format, required, unknown keys) --

CLOSED_Q = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "additionalProperties": False,
}
VALIDATION_TOOLS = (
    CONTROL,
    *(
        _tool(
            f"v_{fmt.replace('-', '')}",
            {"type": "object", "properties": {"value": {"type": "string", "format": fmt}}},
            f"The call sends a value that is not a {fmt}.",
        )
        for fmt in ("email", "date-time", "uri")
    ),
    _tool(
        "v_required",
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a", "b"],
        },
        "The call leaves out the required key b.",
    ),
    _tool("v_unknown", CLOSED_Q, "A closed schema; the call adds the unknown key extra."),
    _tool(
        "v_wait",
        {**CLOSED_Q, "properties": {"w": {"type": "string"}}},
        "A closed schema; the call adds wait_for_previous (the key Gemini CLI adds to every tool).",
    ),
    _tool(
        "v_bounds",
        {
            "type": "object",
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "kind": {"type": "string", "enum": ["a", "b"]},
                "code": {"type": "string", "pattern": "^[a-z]+$"},
            },
        },
        "The call breaks a maximum, an enum and a pattern.",
    ),
    _tool(
        "v_type",
        {"type": "object", "properties": {"flag": {"type": "boolean"}}},
        "The call sends a number where the schema asks for a boolean.",
    ),
)
VALIDATION_CALLS = (
    CONTROL_CALL,
    ScriptedCall("v_email", {"value": "not-an-email"}),
    ScriptedCall("v_datetime", {"value": "yesterday"}),
    ScriptedCall("v_uri", {"value": "no uri"}),
    ScriptedCall("v_required", {"a": "x"}),
    ScriptedCall("v_unknown", {"q": "x", "extra": 1}),
    ScriptedCall("v_wait", {"w": "x", "wait_for_previous": False}),
    ScriptedCall("v_bounds", {"size": 50, "kind": "c", "code": "ABC"}),
    ScriptedCall("v_type", {"flag": 7}),
)

# -- names: invalid characters, and pairs that become one name once cleaned or cut ------------


def _named(name: str, marker: str, key: str) -> dict:
    """A tool whose description and only property tell it apart from its look-alike."""
    return _tool(
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


def _name_set(entries: tuple[tuple[str, str, str], ...]) -> tuple[tuple, tuple]:
    tools = (CONTROL,) + tuple(_named(n, m, k) for n, m, k in entries)
    calls = (CONTROL_CALL,) + tuple(ScriptedCall(n, {k: "x"}) for n, _, k in entries)
    return tools, calls


# -- results: a tool with an outputSchema that answers text only --------------------------------

OUTPUT_TEXT_TOOL = _tool(
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
    _tool(
        "unused_defs",
        {
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "$defs": {"Unused": {"type": "object", "properties": {"z": {"type": "string"}}}},
        },
        "A $defs entry no $ref uses.",
    ),
    _tool(
        "const_only",
        {"type": "object", "properties": {"mode": {"type": "string", "const": "fixed"}}},
        "A const without enum.",
    ),
    _tool(
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


def _hazard(
    id: str,
    summary: str,
    tool: dict,
    call: ScriptedCall | None = None,
    page_size: int = 0,
    provider_limits: bool = False,
) -> ProbeSet:
    calls = (CONTROL_CALL,) + ((call,) if call else ())
    return ProbeSet(id, summary, (CONTROL, tool), calls, page_size, provider_limits)


LONG_NAME_TOOL = _tool(LONG_NAME, {"type": "object", "properties": {"q": {"type": "string"}}})
DOTTED_TOOL = _tool("probe.dotted", {"type": "object", "properties": {"q": {"type": "string"}}})
STRICT_TOOL = _tool(
    "strict",
    {**CLOSED_Q, "required": ["q"]},
    "Strict probe tool: q is required and nothing else is allowed.",
)
# Three turns whose one call the server's schema refuses (q missing), then the control.
STREAK_CALLS = tuple(ScriptedCall("strict", {}, turn=t) for t in range(3)) + (
    ScriptedCall("control", {"q": "hello"}, turn=3),
)


PROBE_SETS: dict[str, ProbeSet] = {
    s.id: s
    for s in (
        ProbeSet(
            "core",
            "per-tool schema rewrites and per-argument call behaviours",
            CORE_TOOLS,
            CORE_CALLS,
        ),
        ProbeSet(
            "root-anyof",
            "root anyOf/oneOf/allOf (Anthropic API 400, Claude Code drop or rewrite)",
            (
                CONTROL,
                _tool(
                    "root_anyof",
                    {
                        "type": "object",
                        "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                        "anyOf": [{"required": ["id"]}, {"required": ["name"]}],
                    },
                    "Find by id or name.",
                ),
                _tool(
                    "root_oneof",
                    {
                        "type": "object",
                        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                        "required": ["a"],
                        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                    },
                ),
                _tool(
                    "root_allof",
                    {
                        "type": "object",
                        "properties": {"a": {"type": "string"}},
                        "allOf": [{"required": ["a"]}],
                    },
                ),
                _tool(
                    "root_anyof_shapes",
                    {
                        "type": "object",
                        "anyOf": [
                            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                            {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
                        ],
                    },
                ),
            ),
            (
                CONTROL_CALL,
                ScriptedCall("root_anyof", {"id": "42"}),
                ScriptedCall("root_oneof", {"a": "x"}),
                ScriptedCall("root_allof", {"a": "x"}),
                ScriptedCall("root_anyof_shapes", {"b": 2}),
            ),
        ),
        _hazard(
            "root-not-object",
            "a root that is not type object (TS SDK gate)",
            _tool("root_string", {"type": "string"}),
        ),
        _hazard(
            "no-type",
            "an inputSchema without type (Python SDK gate)",
            _tool("no_type", {"properties": {"q": {"type": "string"}}}),
            ScriptedCall("no_type", {"q": "x"}),
        ),
        _hazard(
            "output-schema",
            "an outputSchema that is not an object",
            _tool(
                "array_output", {"type": "object", "properties": {}}, outputSchema={"type": "array"}
            ),
        ),
        _hazard(
            "long-name",
            "a 69-character tool name (64-character API limits, hashing, ellipsis)",
            LONG_NAME_TOOL,
            ScriptedCall(LONG_NAME, {"q": "x"}),
        ),
        _hazard(
            "dotted-name",
            "a name with a dot (API name patterns)",
            DOTTED_TOOL,
            ScriptedCall("probe.dotted", {"q": "x"}),
        ),
        _hazard(
            "very-long-name",
            "a 129-character tool name (128-character limits: Anthropic definitions, Responses)",
            _tool(VERY_LONG_NAME, {"type": "object", "properties": {"q": {"type": "string"}}}),
            ScriptedCall(VERY_LONG_NAME, {"q": "x"}),
        ),
        _hazard(
            "limit-long-name",
            "long-name with the provider's limits enforced (the 400 a 64-character limit gives)",
            LONG_NAME_TOOL,
            ScriptedCall(LONG_NAME, {"q": "x"}),
            provider_limits=True,
        ),
        _hazard(
            "limit-dotted-name",
            "dotted-name with the provider's limits enforced (the 400 a name pattern gives)",
            DOTTED_TOOL,
            ScriptedCall("probe.dotted", {"q": "x"}),
            provider_limits=True,
        ),
        ProbeSet(
            "error-streak",
            "three turns of calls the schema refuses, then the control (stops after errors?)",
            (CONTROL, STRICT_TOOL),
            STREAK_CALLS,
        ),
        _hazard(
            "ref-cycle",
            "a recursive $ref (inliners, depth limits)",
            _tool(
                "ref_cycle",
                {
                    "type": "object",
                    "properties": {"node": {"$ref": "#/$defs/Node"}},
                    "$defs": {
                        "Node": {
                            "type": "object",
                            "properties": {"child": {"$ref": "#/$defs/Node"}},
                        }
                    },
                },
            ),
            ScriptedCall("ref_cycle", {"node": {"child": {}}}),
        ),
        ProbeSet(
            "paged",
            "three tools on three tools/list pages (clients that read only the first)",
            (
                CONTROL,
                _tool("page_two", {"type": "object", "properties": {}}),
                _tool("page_three", {"type": "object", "properties": {}}),
            ),
            (CONTROL_CALL,),
            page_size=1,
        ),
        ProbeSet(
            "coercion",
            "string forms of integers, numbers, booleans, objects and arrays (type coercion)",
            COERCION_TOOLS,
            COERCION_CALLS,
        ),
        ProbeSet(
            "big-int",
            "integers beyond 2^53 (JSON numbers held as doubles round them)",
            BIG_INT_TOOLS,
            BIG_INT_CALLS,
        ),
        ProbeSet(
            "validation",
            "calls the server's schema refuses: formats, a missing required key, unknown keys, bounds",
            VALIDATION_TOOLS,
            VALIDATION_CALLS,
        ),
        ProbeSet(
            "name-chars",
            "names with a dash, a space, a slash, a colon and a non-ASCII letter",
            *_name_set(NAME_CHARS),
        ),
        ProbeSet(
            "name-collision",
            "pairs that become one name once cleaned (. - _) or cut (the same first 69 characters)",
            *_name_set(COLLISIONS),
        ),
        ProbeSet(
            "name-clash",
            "more pairs that become one name once cleaned: . and -, space and _, : and _, case",
            *_name_set(CLASHES),
        ),
        _hazard(
            "output-text",
            "a tool with an outputSchema answering text only (no structuredContent)",
            OUTPUT_TEXT_TOOL,
            ScriptedCall("text_result", {"q": "x"}),
        ),
        ProbeSet(
            "schema-details",
            "an unused $defs entry, const, an empty property schema, minItems",
            DETAILS_TOOLS,
            DETAILS_CALLS,
        ),
        _hazard(
            "bad-key",
            "a property key the Anthropic API refuses (per-tool skip or whole session)",
            _tool("bad_key", BAD_KEY_SCHEMA, "Has a property key with a space and a '!'."),
            ScriptedCall("bad_key", {"ok": "x"}),
        ),
        _hazard(
            "root-if",
            "a root if/then/else (shown, dropped or refused)",
            _tool("root_if", ROOT_IF_SCHEMA, "Requires id when kind is id."),
            ScriptedCall("root_if", {"kind": "id", "id": "7"}),
        ),
        _hazard(
            "long-description",
            "a 5,000-character description (cuts at 2,048 or 4,096)",
            _tool(
                "long_text",
                {"type": "object", "properties": {"q": {"type": "string"}}},
                DESCRIPTION_5K,
            ),
            ScriptedCall("long_text", {"q": "x"}),
        ),
        _hazard(
            "bool-subschema",
            "boolean subschemas (true, false) as property schemas",
            _tool("bool_sub", BOOL_SUB_SCHEMA, "Two properties whose schemas are true and false."),
            ScriptedCall("bool_sub", {"q": "x"}),
        ),
        _hazard(
            "nullable-type",
            "a property typed [string, null] alone beside the control",
            _tool("nullable_only", NULLABLE_SCHEMA, "A property typed string or null."),
            ScriptedCall("nullable_only", {"maybe": "x"}),
        ),
        _hazard(
            "dotted-key",
            "a property key with a dot",
            _tool("dotted_key", DOTTED_KEY_SCHEMA, "A property key with a dot."),
            ScriptedCall("dotted_key", {"user.name": "x"}),
        ),
        ProbeSet(
            "many",
            "130 tools (tool-count caps)",
            (CONTROL,)
            + tuple(
                _tool(f"many_{i:03d}", {"type": "object", "properties": {}}) for i in range(129)
            ),
            (CONTROL_CALL,),
        ),
    )
}

PROBE_SETS["limit-root-anyof"] = replace(
    PROBE_SETS["root-anyof"],
    id="limit-root-anyof",
    summary="root-anyof with the provider's limits enforced (the Anthropic API's 400)",
    provider_limits=True,
)

# Which probe set makes each registry behaviour visible (a test keeps this complete).
PROBE_COVERAGE: dict[str, tuple[str, ...]] = {
    "pagination": ("paged",),
    "max-tools": ("many",),
    "combined-name-limit": ("long-name",),
    "root-combinators": ("root-anyof", "root-if"),
    "ts-sdk-gate": ("root-not-object", "output-schema"),
    "lenient-sdk-gate": ("root-not-object", "output-schema"),
    "tool-name": (
        "long-name",
        "very-long-name",
        "dotted-name",
        "core",
        "name-chars",
        "name-collision",
        "name-clash",
    ),
    "server-name": ("core",),
    "ref-cycles": ("ref-cycle",),
    "resolve-refs": ("core", "ref-cycle"),
    "strip-defs": ("core",),
    "metaschema-validate": ("core",),
    "coerce-object-root": ("root-not-object",),
    "insert-properties": ("core", "no-type"),
    "array-items-required": ("core",),
    "nullable-type-arrays": ("core",),
    "tuple-items-to-anyof": ("core",),
    "truncate-descriptions": ("core",),
    "prune-required": ("core",),
    "strip-keywords": ("core",),
    "open-objects-with-optional-properties": ("core", "validation", "error-streak"),
    "keep-keywords": ("core",),
    "forbid-keywords": ("core",),
    "force-additional-properties-false": ("core",),
    "codex-sanitize": ("core", "schema-details"),
    "openai-strict": ("core",),
    "adk-gemini-schema": ("core",),
    "litellm-vertex": ("core",),
    "vercel-google-openapi": ("core",),
    "cline-native-flatten": ("core",),
    "roo-normalize": ("core",),
    "zed-adapt": ("core",),
    "pass-through": ("core",),
    "cache-tools": (),
    "stringify-arguments": ("core",),
    "strip-unknown-arguments": ("core",),
    "drop-nulls": ("core",),
    "client-validate": ("core", "validation"),
    "default-arguments": ("core",),
    "add-meta": ("core",),
    "new-session-per-call": ("core",),
    "require-structured-content": ("output-schema", "output-text"),
    "result-size-cap": (),
    "describe-root-combinators": ("root-anyof",),
    "truncate-tool-description": ("core", "long-description"),
    "forbid-tuple-items": ("core",),
    "parse-stringified-arguments": ("core",),
    "add-property": ("core",),
    "omit-empty-parameters": ("paged", "many"),
    "python-sdk-gate": ("root-not-object", "no-type", "output-schema"),
    "openai-agents-strict": ("core",),
    "adk-fence-descriptions": ("core",),
    "pydantic-ai-openai-schema": ("core",),
    "langchain-genai-schema": ("core", "root-anyof", "many"),
    "coerce-arguments": ("coercion",),
    "round-big-integers": ("big-int",),
    "copilot-tool-name": ("core", "long-name", "dotted-name"),
    "qwen-tool-name": ("core", "long-name", "dotted-name"),
    "copilot-schema": ("core", "root-anyof", "root-not-object", "no-type"),
    "cline-tool-description": ("core",),
    "default-root-type": ("no-type",),
    "agents-js-tool-name": ("name-chars", "dotted-name", "name-collision"),
    "agents-js-schema": ("core", "root-anyof", "schema-details"),
    "smolagents-gate": ("core", "root-anyof", "root-not-object", "ref-cycle"),
    "smolagents-tool-name": ("name-chars", "dotted-name", "name-collision", "name-clash"),
    "smolagents-schema": ("coercion", "validation", "schema-details", "no-type"),
    "smolagents-validate": ("validation", "coercion"),
    "keep-last-of-a-name": ("name-collision",),
    "require-present": ("validation",),
    "forbid-property-keys": ("bad-key",),
    "llm-tools-mcp-description": ("core",),
    "llamaindex-schema": ("root-anyof", "core", "ref-cycle", "bool-subschema", "validation"),
    "llamaindex-call-name": ("dotted-name", "name-chars"),
    "mcp-use-schema": (
        "core",
        "root-anyof",
        "ref-cycle",
        "bool-subschema",
        "dotted-key",
        "bad-key",
    ),
    "mcp-use-validate": ("coercion", "validation", "root-anyof", "bad-key"),
    "semantic-kernel-tools": ("name-chars", "dotted-name", "nullable-type", "dotted-key", "paged"),
    "semantic-kernel-arguments": ("validation", "root-anyof"),
    "amp-tool-name": ("name-chars", "dotted-name", "long-name", "name-collision", "name-clash"),
    "agent-framework-validate": ("validation", "coercion", "core"),
    "send-as-written": ("core",),  # arguments unchanged: what every observed call shows
}
# Behaviours a probe run cannot show, and why (they need a second session or a large result).
NOT_PROBED = {
    "cache-tools": "needs a tools/list_changed notification mid-session and a second list; not scripted yet",
    "result-size-cap": "needs a result over the client's cap; the probe server's results are small",
}


def digest(probe: ProbeSet) -> str:
    """A short fingerprint of a set's tools and calls: a record taken on other tools is not compared."""
    import hashlib
    import json

    doc: dict = {
        "tools": list(probe.tools),
        "calls": [[c.tool, c.arguments] + ([c.turn] if c.turn else []) for c in probe.calls],
        "page": probe.page_size,
    }
    if probe.provider_limits:  # only when set: the older sets keep their fingerprints
        doc["provider_limits"] = True
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def get_set(set_id: str) -> ProbeSet:
    from mcp_matrix.core.errors import InputError, did_you_mean

    try:
        return PROBE_SETS[set_id]
    except KeyError:
        raise InputError(
            f"unknown probe set {set_id!r}{did_you_mean(set_id, PROBE_SETS)}; "
            f"known: {', '.join(PROBE_SETS)}",
            where="--probe",
        ) from None
