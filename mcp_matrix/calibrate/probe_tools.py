"""The probe tools: the builder every probe set uses, the control tool, and the per-tool and
per-argument families (``core``, ``coercion``, ``big-int``, ``validation``) with their scripted calls.

The probe sets themselves are ``mcp_matrix.calibrate.probe``'s.
"""

from __future__ import annotations

from mcp_matrix.calibrate.fake_model import ScriptedCall
from mcp_matrix.core.jsontypes import JSON

READ_ONLY = {"readOnlyHint": True}
LONG_DESCRIPTION = (
    "Reads one probe value. " + "This sentence pads the description. " * 60
)  # ~2.2k chars
LONG_NAME = "probe_" + "very_long_tool_name_" * 3 + "end"  # 69 characters
VERY_LONG_NAME = "probe_" + "very_long_tool_name_" * 6 + "end"  # 129: over the 128 limits too


def probe_tool(name: str, schema: object, description: str = "Probe tool.", **extra: JSON) -> dict:
    return {
        "name": name,
        "description": description,
        "inputSchema": schema,
        "annotations": READ_ONLY,
        **extra,
    }


CONTROL = probe_tool(
    "control",
    {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    "Control tool: a plain schema every client shows as it is.",
)
CONTROL_CALL = ScriptedCall("control", {"q": "hello"})


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
    probe_tool(
        "args", ARGS_SCHEMA, "Takes every JSON type; the call adds a null and an unknown key."
    ),
    probe_tool(
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
    probe_tool(
        "nullable", {"type": "object", "properties": {"maybe": {"type": ["string", "null"]}}}
    ),
    probe_tool("no_items", {"type": "object", "properties": {"list": {"type": "array"}}}),
    probe_tool(
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
    probe_tool(
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
    probe_tool(
        "tuple",
        {
            "type": "object",
            "properties": {
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}
            },
        },
    ),
    probe_tool(
        "long_description",
        {"type": "object", "properties": {"q": {"type": "string", "description": "x" * 1500}}},
        LONG_DESCRIPTION,
    ),
    probe_tool(
        "required_missing",
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost"]},
    ),
    probe_tool("no_properties", {"type": "object"}, "No properties key at all."),
    probe_tool(
        "nested_anyof",
        {
            "type": "object",
            "properties": {
                "v": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "w": {"oneOf": [{"type": "string"}, {"type": "boolean"}]},
            },
        },
    ),
    probe_tool(
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
    probe_tool(
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
    probe_tool(
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
    probe_tool(
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
    probe_tool(
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
    probe_tool(
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
    probe_tool(
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
    probe_tool("big_id", INT_SCHEMA, "The call sends 2^53 + 1."),
    probe_tool("big_negative", INT_SCHEMA, "The call sends -(2^53 + 1)."),
    probe_tool("big_int64", INT_SCHEMA, "The call sends 2^63 - 1 (the largest signed 64-bit id)."),
    probe_tool(
        "big_safe", INT_SCHEMA, "The call sends 2^53 - 1, the largest exact one (a control)."
    ),
    probe_tool(
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
    probe_tool(
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
        probe_tool(
            f"v_{fmt.replace('-', '')}",
            {"type": "object", "properties": {"value": {"type": "string", "format": fmt}}},
            f"The call sends a value that is not a {fmt}.",
        )
        for fmt in ("email", "date-time", "uri")
    ),
    probe_tool(
        "v_required",
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a", "b"],
        },
        "The call leaves out the required key b.",
    ),
    probe_tool("v_unknown", CLOSED_Q, "A closed schema; the call adds the unknown key extra."),
    probe_tool(
        "v_wait",
        {**CLOSED_Q, "properties": {"w": {"type": "string"}}},
        "A closed schema; the call adds wait_for_previous (the key Gemini CLI adds to every tool).",
    ),
    probe_tool(
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
    probe_tool(
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
