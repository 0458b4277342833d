"""Record schemas and tool definitions of the gateway server, as plain JSON data.

The schemas are written by hand so the exact JSON reaches the wire. Each rich write
tool's ``inputSchema`` *is* the record schema of the server's version, the same
object the gateway validates against; the raw twins all have the schema from
:func:`raw_input_schema`, which is identical in every version (nothing for a
client to cache wrongly, nothing to strip: docs/design.md#a-raw-twin-for-write-tools).

Version 2 adds exactly one optional field per record kind (:data:`ADDED_IN_V2`).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

SchemaVersion = Literal[1, 2]
SCHEMA_VERSIONS: tuple[SchemaVersion, ...] = (1, 2)
LATEST_VERSION: SchemaVersion = 2

# The three record kinds; each is also the name of its rich write tool.
MEMORY_WRITE = "memory_write"
DISPATCH_RECORD = "dispatch_record"
CONTEXT_FEEDBACK = "context_feedback"
KINDS: tuple[str, ...] = (MEMORY_WRITE, DISPATCH_RECORD, CONTEXT_FEEDBACK)

RAW_SUFFIX = "_raw"
GATEWAY_RECORDS = "gateway_records"

VIA_RICH = "rich"
VIA_RAW = "raw"


def raw_name(kind: str) -> str:
    """The raw twin of a rich write tool: ``memory_write`` -> ``memory_write_raw``."""
    return kind + RAW_SUFFIX


# --- record schemas, version 1


def _memory_write_v1() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "agent_id": {
                "type": "string",
                "minLength": 1,
                "description": 'The agent whose memory this is, e.g. "research-bot".',
            },
            "text": {
                "type": "string",
                "minLength": 1,
                "description": "The information to remember, in plain language.",
            },
            "importance": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "How important the memory is, from 0 to 1.",
            },
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'Labels used to find the memory again, e.g. ["prefs", "units"].',
            },
            "pinned": {
                "type": "boolean",
                "description": "true keeps the memory from ever being pruned.",
            },
        },
        "required": ["agent_id", "text"],
        "additionalProperties": False,
    }


def _dispatch_record_v1() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "dispatch_id": {
                "type": "string",
                "minLength": 1,
                "description": 'Caller-chosen identifier of the dispatch, e.g. "d-2026-11-04-1".',
            },
            "recipients": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "description": 'Who the dispatch went to, e.g. ["ops@example.com", "oncall"].',
            },
            "urgent": {
                "type": "boolean",
                "description": "true if the dispatch needed immediate attention.",
            },
            "details": {
                "type": "object",
                "description": "What was dispatched.",
                "properties": {
                    "subject": {"type": "string", "minLength": 1, "description": "Subject line."},
                    "body": {"type": "string", "description": "Message body."},
                    "attachments": {
                        "type": "array",
                        "description": "Files sent with the dispatch.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "minLength": 1},
                                "size_bytes": {"type": "integer", "minimum": 0},
                            },
                            "required": ["name"],
                            "additionalProperties": False,
                        },
                    },
                },
                "required": ["subject"],
                "additionalProperties": False,
            },
        },
        "required": ["dispatch_id", "recipients", "details"],
        "additionalProperties": False,
    }


def _context_feedback_v1() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "context_id": {
                "type": "string",
                "minLength": 1,
                "description": "Identifier of the context (retrieved document set) being rated.",
            },
            "rating": {
                "type": "integer",
                "minimum": 1,
                "maximum": 5,
                "description": "Overall quality of the context, 1 (useless) to 5 (exactly right).",
            },
            "helpful": {
                "type": "boolean",
                "description": "true if the context helped answer the request.",
            },
            "notes": {"type": "string", "description": "Free-text remarks."},
        },
        "required": ["context_id", "rating"],
        "additionalProperties": False,
    }


# --- version 2: one new optional field per kind, the one a stale client strips

ADDED_IN_V2: dict[str, tuple[str, dict[str, Any]]] = {
    MEMORY_WRITE: (
        "source",
        {
            "type": "string",
            "minLength": 1,
            "description": 'Where the information came from, e.g. "user" or a URL. Since v2.',
        },
    ),
    DISPATCH_RECORD: (
        "priority",
        {
            "type": "string",
            "enum": ["low", "normal", "high"],
            "description": "Delivery priority: low, normal or high. Since v2.",
        },
    ),
    CONTEXT_FEEDBACK: (
        "labels",
        {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": 'Short labels for the feedback, e.g. ["stale", "off-topic"]. Since v2.',
        },
    ),
}

_V1 = {
    MEMORY_WRITE: _memory_write_v1,
    DISPATCH_RECORD: _dispatch_record_v1,
    CONTEXT_FEEDBACK: _context_feedback_v1,
}


def record_schema(kind: str, version: SchemaVersion) -> dict[str, Any]:
    """The JSON Schema a ``kind`` record must satisfy in schema ``version`` (a fresh copy)."""
    if version not in SCHEMA_VERSIONS:
        raise ValueError(f"unknown schema version {version!r}")
    schema = _V1[kind]()
    if version >= 2:
        field, definition = ADDED_IN_V2[kind]
        schema["properties"][field] = copy.deepcopy(definition)
    return schema


# --- the raw twins' schema: one string, forever


def raw_input_schema(kind: str) -> dict[str, Any]:
    """The twin's ``inputSchema``: one payload string; depends on the kind, never the version."""
    return {
        "type": "object",
        "properties": {
            "payload": {
                "type": "string",
                "description": (
                    "The whole record as a JSON-serialised object; validated server-side "
                    f"against the current {kind} schema."
                ),
            }
        },
        "required": ["payload"],
        "additionalProperties": False,
    }


# --- descriptions

_PURPOSE = {
    MEMORY_WRITE: "Write one memory for an agent to the memory gateway",
    DISPATCH_RECORD: "Record one dispatch (a message sent to recipients) in the gateway's log",
    CONTEXT_FEEDBACK: "Record feedback on one retrieved context",
}
_TITLES = {
    MEMORY_WRITE: "Write a memory",
    DISPATCH_RECORD: "Record a dispatch",
    CONTEXT_FEEDBACK: "Give context feedback",
}
_EXAMPLES = {
    MEMORY_WRITE: (
        '{"agent_id": "research-bot", "text": "The user prefers metric units", '
        '"importance": 0.8, "tags": ["prefs"], "pinned": false}'
    ),
    DISPATCH_RECORD: (
        '{"dispatch_id": "d-1", "recipients": ["ops@example.com"], "urgent": true, '
        '"details": {"subject": "Disk full on db-1"}}'
    ),
    CONTEXT_FEEDBACK: '{"context_id": "ctx-42", "rating": 4, "helpful": true}',
}

_PLURALS = {
    "string": "strings",
    "integer": "integers",
    "number": "numbers",
    "boolean": "booleans",
    "object": "objects",
    "array": "arrays",
}


def _type_label(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + "|".join(str(v) for v in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        items = schema.get("items", {})
        return f"array of {_PLURALS.get(items.get('type'), 'values')}"
    return str(kind)


def field_summary(schema: dict[str, Any]) -> str:
    """``agent_id (string, required), tags (array of strings), ...`` for a description."""
    required = set(schema.get("required", []))
    parts = []
    for name, prop in schema["properties"].items():
        label = _type_label(prop)
        if name in required:
            label += ", required"
        parts.append(f"{name} ({label})")
    return ", ".join(parts)


_ANNOTATIONS_WRITE: dict[str, Any] = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": False,
    "openWorldHint": False,
}

STORED_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "kind": {"type": "string", "enum": list(KINDS)},
        "schema_version": {"type": "integer"},
        "via": {"type": "string", "enum": [VIA_RICH, VIA_RAW]},
        "stored_at": {"type": "string"},
        "stored": {"type": "object"},
    },
    "required": ["id", "kind", "schema_version", "via", "stored_at", "stored"],
}


def _rich_tool(kind: str, version: SchemaVersion) -> dict[str, Any]:
    title = _TITLES[kind]
    return {
        "name": kind,
        "title": title,
        "description": (
            f"{_PURPOSE[kind]}, passing each field as a tool argument. Kept for backwards "
            f"compatibility: prefer {raw_name(kind)}, whose single payload string cannot be "
            "stripped by a client holding an outdated copy of this schema. The record is "
            "validated server-side; a wrong type is rejected with an error naming the field, "
            "never coerced."
        ),
        "inputSchema": record_schema(kind, version),
        "outputSchema": copy.deepcopy(STORED_ITEM),
        "annotations": {"title": title, **_ANNOTATIONS_WRITE},
    }


def _raw_tool(kind: str, version: SchemaVersion) -> dict[str, Any]:
    title = f"{_TITLES[kind]} (raw payload, preferred)"
    return {
        "name": raw_name(kind),
        "title": title,
        "description": (
            f"Preferred write path. {_PURPOSE[kind]}: put the whole record in one JSON object, "
            f"serialise it, and pass that string as payload, for example "
            f'{{"payload": {json.dumps(_EXAMPLES[kind])}}}. The gateway validates the record '
            f"against the current {kind} schema (version {version}) and stores it exactly as "
            "sent; anything missing, unknown or of the wrong type is rejected with an error "
            f"naming the field. Current fields: {field_summary(record_schema(kind, version))}."
        ),
        "inputSchema": raw_input_schema(kind),
        "outputSchema": copy.deepcopy(STORED_ITEM),
        "annotations": {"title": title, **_ANNOTATIONS_WRITE},
    }


def _gateway_records() -> dict[str, Any]:
    title = "List stored records"
    return {
        "name": GATEWAY_RECORDS,
        "title": title,
        "description": (
            "Read back the records the gateway has stored, oldest first, exactly as they "
            "arrived, with the path each came by (rich tool or raw twin). Optionally filter "
            "by kind."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "kind": {
                    "type": "string",
                    "enum": list(KINDS),
                    "description": "Only records of this kind.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 1000,
                    "description": "At most this many records (default 100).",
                },
            },
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "records": {"type": "array", "items": copy.deepcopy(STORED_ITEM)},
            },
            "required": ["count", "records"],
        },
        "annotations": {
            "title": title,
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    }


def tool_definitions(version: SchemaVersion = LATEST_VERSION) -> list[dict[str, Any]]:
    """Every tool, in tools/list order: each rich tool followed by its twin, then the reader."""
    tools: list[dict[str, Any]] = []
    for kind in KINDS:
        tools.append(_rich_tool(kind, version))
        tools.append(_raw_tool(kind, version))
    tools.append(_gateway_records())
    return tools
