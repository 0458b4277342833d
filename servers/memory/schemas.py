"""The seven tool definitions of the memory server, as plain JSON data.

The schemas are written by hand, not derived from Python signatures, because the
point of this server is to put an exact ``inputSchema`` on the wire. Decision
record 014 fixes the shape of ``memory_reflect``:

* ``flat`` (default, the 2026-10-05 amendment): a flat object, ``required:
  ["action"]``, no root ``anyOf``/``oneOf``/``allOf``, ``additionalProperties:
  false``; identity is enforced at runtime and taught by the descriptions.
* ``anyof`` (the original 2026-08-27 decision): the same properties plus a root
  ``anyOf: [{"required": ["agent_id"]}, {"required": ["agent"]}]``, the shape some
  clients drop during discovery.
"""

from __future__ import annotations

from typing import Any, Literal

SchemaVariant = Literal["flat", "anyof"]
SCHEMA_VARIANTS: tuple[SchemaVariant, ...] = ("flat", "anyof")

REFLECT_ACTIONS: list[str] = ["summarize", "consolidate", "critique"]

# Tool names, in the order tools/list returns them.
MEMORY_STORE = "memory_store"
MEMORY_RECALL = "memory_recall"
MEMORY_FORGET = "memory_forget"
MEMORY_REFLECT = "memory_reflect"
CHECKPOINT_SAVE = "checkpoint_save"
CHECKPOINT_RESUME = "checkpoint_resume"
MEMORY_STATS = "memory_stats"

AGENT_ID_DESCRIPTION = (
    'Identity of the agent whose memory namespace this call uses, e.g. "research-bot". '
    "A non-empty string with at least one non-whitespace character; it is used exactly as "
    'given (" project " and "project" are different agents).'
)


def _memory_item() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "content": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "importance": {"type": "number"},
            "created_at": {"type": "string"},
        },
        "required": ["id", "content", "tags", "importance", "created_at"],
    }


def _identity_property() -> dict[str, Any]:
    return {"type": "string", "description": AGENT_ID_DESCRIPTION}


def _memory_store() -> dict[str, Any]:
    return {
        "name": MEMORY_STORE,
        "title": "Store a memory",
        "description": (
            "Save one piece of information to an agent's long-term memory so it can be "
            "recalled in later sessions. Pass agent_id to choose the agent's namespace."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "agent_id": _identity_property(),
                "content": {
                    "type": "string",
                    "description": "The information to remember, in plain language.",
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": 'Optional labels used to filter recall, e.g. ["user-prefs"].',
                },
                "importance": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": "How important the memory is, from 0 to 1. Defaults to 0.5.",
                },
            },
            "required": ["agent_id", "content"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"agent_id": {"type": "string"}, "memory": _memory_item()},
            "required": ["agent_id", "memory"],
        },
        "annotations": {
            "title": "Store a memory",
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": False,
            "openWorldHint": False,
        },
    }


def _memory_recall() -> dict[str, Any]:
    return {
        "name": MEMORY_RECALL,
        "title": "Recall memories",
        "description": (
            "Search an agent's long-term memory and return the matching memories, most "
            "important and most recent first. Pass agent_id; optionally narrow with a text "
            "query or tags."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "agent_id": _identity_property(),
                "query": {
                    "type": "string",
                    "description": "Case-insensitive text that the memory content must contain.",
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Only return memories carrying all of these tags.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100,
                    "description": "Maximum number of memories to return. Defaults to 10.",
                },
            },
            "required": ["agent_id"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "agent_id": {"type": "string"},
                "count": {"type": "integer"},
                "memories": {"type": "array", "items": _memory_item()},
            },
            "required": ["agent_id", "count", "memories"],
        },
        "annotations": {
            "title": "Recall memories",
            "readOnlyHint": True,
            "openWorldHint": False,
        },
    }


def _memory_forget() -> dict[str, Any]:
    return {
        "name": MEMORY_FORGET,
        "title": "Forget a memory",
        "description": (
            "Permanently delete one memory from an agent's long-term memory. This cannot be "
            "undone. Pass agent_id and the id returned by memory_store or memory_recall."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "agent_id": _identity_property(),
                "memory_id": {
                    "type": "integer",
                    "description": "The id of the memory to delete.",
                },
            },
            "required": ["agent_id", "memory_id"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "agent_id": {"type": "string"},
                "memory_id": {"type": "integer"},
                "deleted": {"type": "boolean"},
            },
            "required": ["agent_id", "memory_id", "deleted"],
        },
        "annotations": {
            "title": "Forget a memory",
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    }


def _reflect_properties() -> dict[str, Any]:
    return {
        "action": {
            "type": "string",
            "enum": list(REFLECT_ACTIONS),
            "description": (
                'What to do: "summarize" digests the agent\'s memories, "consolidate" '
                'reports duplicate memories, "critique" records a critique of them.'
            ),
        },
        "agent_id": {
            "type": "string",
            "description": (
                AGENT_ID_DESCRIPTION + " Required at runtime: every call must carry agent_id "
                "(or the deprecated agent). A call with neither is rejected before anything is "
                "read or written. If both agent_id and agent are given, agent_id wins."
            ),
        },
        "agent": {
            "type": "string",
            "description": (
                "Deprecated alias for agent_id. Do not use; pass agent_id instead. Still "
                "accepted when agent_id is absent; ignored in favour of agent_id when both "
                "are given, but it must still be a non-empty string if present."
            ),
        },
        "text": {
            "type": "string",
            "description": "Optional note for the reflection, e.g. the critique itself.",
        },
        "target": {
            "type": "string",
            "description": (
                "Optional focus: only memories whose content or tags contain this text are "
                "considered."
            ),
        },
        "confidence": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "How confident the reflection is, from 0 to 1. Defaults to 0.5.",
        },
    }


def _memory_reflect(variant: SchemaVariant) -> dict[str, Any]:
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": _reflect_properties(),
        "required": ["action"],
        "additionalProperties": False,
    }
    if variant == "anyof":
        input_schema["anyOf"] = [{"required": ["agent_id"]}, {"required": ["agent"]}]
    elif variant != "flat":
        raise ValueError(f"unknown schema variant {variant!r}; expected one of {SCHEMA_VARIANTS}")
    return {
        "name": MEMORY_REFLECT,
        "title": "Reflect on memories",
        "description": (
            "Reflect on an agent's stored memories: summarize them, find duplicates to "
            "consolidate, or record a critique; the reflection itself is saved. Identity is "
            "required at runtime: pass agent_id (a non-empty string). The parameter agent is a "
            "deprecated alias for agent_id; do not use it. When both are given, agent_id wins. "
            "A call without agent_id or agent returns an error and changes nothing."
        ),
        "inputSchema": input_schema,
        "outputSchema": {
            "type": "object",
            "properties": {
                "reflection_id": {"type": "integer"},
                "agent_id": {"type": "string"},
                "action": {"type": "string", "enum": list(REFLECT_ACTIONS)},
                "summary": {"type": "string"},
                "memories_considered": {"type": "integer"},
                "confidence": {"type": "number"},
            },
            "required": [
                "reflection_id",
                "agent_id",
                "action",
                "summary",
                "memories_considered",
                "confidence",
            ],
        },
        "annotations": {
            "title": "Reflect on memories",
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": False,
            "openWorldHint": False,
        },
    }


def _checkpoint_save() -> dict[str, Any]:
    return {
        "name": CHECKPOINT_SAVE,
        "title": "Save a checkpoint",
        "description": (
            "Save the agent's working state under a checkpoint name so a later session can "
            "resume from it with checkpoint_resume. Saving again under the same name adds a "
            "newer version; older versions are kept."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "agent_id": _identity_property(),
                "name": {
                    "type": "string",
                    "description": 'Checkpoint name, e.g. "refactor-step-3". Defaults to "default".',
                },
                "state": {
                    "type": "object",
                    "description": "Any JSON object describing where the work stands.",
                },
            },
            "required": ["agent_id", "state"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "agent_id": {"type": "string"},
                "name": {"type": "string"},
                "version": {"type": "integer"},
                "saved_at": {"type": "string"},
            },
            "required": ["agent_id", "name", "version", "saved_at"],
        },
        "annotations": {
            "title": "Save a checkpoint",
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": False,
            "openWorldHint": False,
        },
    }


def _checkpoint_resume() -> dict[str, Any]:
    found = {
        "type": "object",
        "properties": {
            "found": {"const": True},
            "agent_id": {"type": "string"},
            "name": {"type": "string"},
            "version": {"type": "integer"},
            "saved_at": {"type": "string"},
            "state": {"type": "object"},
        },
        "required": ["found", "agent_id", "name", "version", "saved_at", "state"],
    }
    not_found = {
        "type": "object",
        "properties": {
            "found": {"const": False},
            "agent_id": {"type": "string"},
            "name": {"type": "string"},
            "reason": {"type": "string"},
        },
        "required": ["found", "agent_id", "name", "reason"],
    }
    return {
        "name": CHECKPOINT_RESUME,
        "title": "Resume from a checkpoint",
        "description": (
            "Load the latest saved state of a checkpoint so the agent can continue where it "
            "left off. Returns found: false with a reason when there is nothing to resume."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "agent_id": _identity_property(),
                "name": {
                    "type": "string",
                    "description": 'Checkpoint name to resume. Defaults to "default".',
                },
            },
            "required": ["agent_id"],
            "additionalProperties": False,
        },
        # A union: root type object with a root anyOf of the found / not-found shapes.
        "outputSchema": {"type": "object", "anyOf": [found, not_found]},
        "annotations": {
            "title": "Resume from a checkpoint",
            "readOnlyHint": True,
            "openWorldHint": False,
        },
    }


def _memory_stats() -> dict[str, Any]:
    return {
        "name": MEMORY_STATS,
        "title": "Memory statistics",
        "description": (
            "Report how much the memory server holds across all agents: number of agents, "
            "memories, checkpoints and reflections. Takes no arguments."
        ),
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "outputSchema": {
            "type": "object",
            "properties": {
                "agents": {"type": "integer"},
                "memories": {"type": "integer"},
                "checkpoints": {"type": "integer"},
                "reflections": {"type": "integer"},
            },
            "required": ["agents", "memories", "checkpoints", "reflections"],
        },
        "annotations": {
            "title": "Memory statistics",
            "readOnlyHint": True,
            "openWorldHint": False,
        },
    }


def tool_definitions(variant: SchemaVariant = "flat") -> list[dict[str, Any]]:
    """The seven tools as wire JSON (camelCase keys), in tools/list order.

    Every call builds them anew (no object shared with another call or the module), so callers
    may mutate the result; no copy is made: a forked server builds them once per session.
    """
    return [
        _memory_store(),
        _memory_recall(),
        _memory_forget(),
        _memory_reflect(variant),
        _checkpoint_save(),
        _checkpoint_resume(),
        _memory_stats(),
    ]


# Tools whose handlers require an identity, and whether the deprecated alias is accepted.
IDENTITY_TOOLS: dict[str, bool] = {
    MEMORY_STORE: False,
    MEMORY_RECALL: False,
    MEMORY_FORGET: False,
    MEMORY_REFLECT: True,
    CHECKPOINT_SAVE: False,
    CHECKPOINT_RESUME: False,
}
