"""The probe tool lists: tools built to make every modelled client behaviour visible.

Each **probe set** is one server run. A set holds at most one list-level hazard (a tool that
may make a client drop, break or refuse the whole list), next to a ``control`` tool, so one
hazard never hides the other observations. ``core`` holds everything that acts per tool or
per argument. ``probe_coverage.PROBE_COVERAGE`` says which set exposes which registry behaviour; a test keeps
it complete against ``mcp_matrix.behaviours.registry``. The sets' tools are ``probe_tools``' and
``probe_hazards``'.

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
``limit-long-name``, ``limit-dotted-name``, ``limit-root-anyof`` and ``limit-bad-key`` are those
sets with the fake endpoint enforcing the provider's documented limits (``provider_limits``): what
does the client do when its model API answers 400?
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mcp_matrix.calibrate.fake_model import ScriptedCall
from mcp_matrix.calibrate.probe_hazards import (
    BAD_KEY_SCHEMA,
    BOOL_SUB_SCHEMA,
    CLASHES,
    COLLISIONS,
    DESCRIPTION_5K,
    DETAILS_CALLS,
    DETAILS_TOOLS,
    DOTTED_KEY_SCHEMA,
    DOTTED_TOOL,
    LONG_NAME_TOOL,
    NAME_CHARS,
    NULLABLE_SCHEMA,
    OUTPUT_TEXT_TOOL,
    ROOT_IF_SCHEMA,
    STREAK_CALLS,
    STRICT_TOOL,
    name_set,
)
from mcp_matrix.calibrate.probe_tools import (
    BIG_INT_CALLS,
    BIG_INT_TOOLS,
    COERCION_CALLS,
    COERCION_TOOLS,
    CONTROL,
    CONTROL_CALL,
    CORE_CALLS,
    CORE_TOOLS,
    LONG_NAME,
    VALIDATION_CALLS,
    VALIDATION_TOOLS,
    VERY_LONG_NAME,
    probe_tool,
)


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
                probe_tool(
                    "root_anyof",
                    {
                        "type": "object",
                        "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                        "anyOf": [{"required": ["id"]}, {"required": ["name"]}],
                    },
                    "Find by id or name.",
                ),
                probe_tool(
                    "root_oneof",
                    {
                        "type": "object",
                        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                        "required": ["a"],
                        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                    },
                ),
                probe_tool(
                    "root_allof",
                    {
                        "type": "object",
                        "properties": {"a": {"type": "string"}},
                        "allOf": [{"required": ["a"]}],
                    },
                ),
                probe_tool(
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
            probe_tool("root_string", {"type": "string"}),
        ),
        _hazard(
            "no-type",
            "an inputSchema without type (Python SDK gate)",
            probe_tool("no_type", {"properties": {"q": {"type": "string"}}}),
            ScriptedCall("no_type", {"q": "x"}),
        ),
        _hazard(
            "output-schema",
            "an outputSchema that is not an object",
            probe_tool(
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
            probe_tool(VERY_LONG_NAME, {"type": "object", "properties": {"q": {"type": "string"}}}),
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
            probe_tool(
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
                probe_tool("page_two", {"type": "object", "properties": {}}),
                probe_tool("page_three", {"type": "object", "properties": {}}),
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
            *name_set(NAME_CHARS),
        ),
        ProbeSet(
            "name-collision",
            "pairs that become one name once cleaned (. - _) or cut (the same first 69 characters)",
            *name_set(COLLISIONS),
        ),
        ProbeSet(
            "name-clash",
            "more pairs that become one name once cleaned: . and -, space and _, : and _, case",
            *name_set(CLASHES),
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
            probe_tool("bad_key", BAD_KEY_SCHEMA, "Has a property key with a space and a '!'."),
            ScriptedCall("bad_key", {"ok": "x"}),
        ),
        _hazard(
            "root-if",
            "a root if/then/else (shown, dropped or refused)",
            probe_tool("root_if", ROOT_IF_SCHEMA, "Requires id when kind is id."),
            ScriptedCall("root_if", {"kind": "id", "id": "7"}),
        ),
        _hazard(
            "long-description",
            "a 5,000-character description (cuts at 2,048 or 4,096)",
            probe_tool(
                "long_text",
                {"type": "object", "properties": {"q": {"type": "string"}}},
                DESCRIPTION_5K,
            ),
            ScriptedCall("long_text", {"q": "x"}),
        ),
        _hazard(
            "bool-subschema",
            "boolean subschemas (true, false) as property schemas",
            probe_tool(
                "bool_sub", BOOL_SUB_SCHEMA, "Two properties whose schemas are true and false."
            ),
            ScriptedCall("bool_sub", {"q": "x"}),
        ),
        _hazard(
            "nullable-type",
            "a property typed [string, null] alone beside the control",
            probe_tool("nullable_only", NULLABLE_SCHEMA, "A property typed string or null."),
            ScriptedCall("nullable_only", {"maybe": "x"}),
        ),
        _hazard(
            "dotted-key",
            "a property key with a dot",
            probe_tool("dotted_key", DOTTED_KEY_SCHEMA, "A property key with a dot."),
            ScriptedCall("dotted_key", {"user.name": "x"}),
        ),
        ProbeSet(
            "many",
            "130 tools (tool-count caps)",
            (CONTROL,)
            + tuple(
                probe_tool(f"many_{i:03d}", {"type": "object", "properties": {}})
                for i in range(129)
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
PROBE_SETS["limit-bad-key"] = replace(
    PROBE_SETS["bad-key"],
    id="limit-bad-key",
    summary="bad-key with the provider's limits enforced (the Anthropic API's 400 for the key)",
    provider_limits=True,
)


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
