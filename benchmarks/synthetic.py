"""Synthetic but realistic MCP tool lists for the benchmarks (deterministic: seeded)."""

from __future__ import annotations

import random

WORDS = [
    "account",
    "agent",
    "memory",
    "record",
    "query",
    "limit",
    "tags",
    "status",
    "owner",
    "region",
    "since",
    "until",
    "cursor",
    "format",
    "priority",
    "labels",
    "notes",
    "path",
    "content",
    "id",
]


def _prop(rng: random.Random, depth: int) -> dict:
    kind = rng.choice(
        [
            "string",
            "string",
            "integer",
            "number",
            "boolean",
            "array",
            "object",
            "enum",
            "nullable",
            "ref",
        ]
    )
    desc = {"description": f"The {rng.choice(WORDS)} to use."}
    if kind == "string":
        return {"type": "string", **desc, **({"format": "date-time"} if rng.random() < 0.2 else {})}
    if kind == "integer":
        return {"type": "integer", "minimum": 1, "maximum": 100, **desc}
    if kind == "number":
        return {"type": "number", **desc}
    if kind == "boolean":
        return {"type": "boolean", "default": False, **desc}
    if kind == "array":
        return {"type": "array", "items": {"type": "string"}, **desc}
    if kind == "enum":
        return {"type": "string", "enum": ["a", "b", "c"], **desc}
    if kind == "nullable":
        return {"type": ["string", "null"], **desc}
    if kind == "ref":
        return {"$ref": "#/$defs/item"}
    if depth < 2:
        return {
            "type": "object",
            "properties": {w: _prop(rng, depth + 1) for w in rng.sample(WORDS, 3)},
            **desc,
        }
    return {"type": "object", **desc}


def tool(rng: random.Random, i: int) -> dict:
    props = {w: _prop(rng, 0) for w in rng.sample(WORDS, rng.randint(1, 8))}
    schema: dict = {"type": "object", "properties": props, "required": [next(iter(props))]}
    if any("$ref" in p for p in props.values()):
        schema["$defs"] = {"item": {"type": "object", "properties": {"id": {"type": "string"}}}}
    roll = rng.random()
    if roll < 0.05:
        schema["anyOf"] = [{"required": [k]} for k in list(props)[:2]]
    elif roll < 0.35:
        schema["additionalProperties"] = False
    name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{i}"
    if rng.random() < 0.02:
        name = name + "_" + "x" * 60
    t = {
        "name": name,
        "description": f"Does {name.replace('_', ' ')}.",
        "inputSchema": schema,
        "annotations": {"readOnlyHint": rng.random() < 0.5},
    }
    return t


def tool_list(n: int, seed: int = 7, distinct: int | None = None) -> list[dict]:
    """``n`` tools; with ``distinct``, only that many distinct schemas (real servers repeat shapes)."""
    rng = random.Random(seed)
    tools = [tool(rng, i) for i in range(distinct or n)]
    if distinct:
        tools = [
            {**tools[i % distinct], "name": f"{tools[i % distinct]['name']}_{i}"} for i in range(n)
        ]
    return tools


def snapshot_doc(tools: list[dict], page_size: int = 1000) -> dict:
    return {
        "format": "mcp-matrix.snapshot",
        "version": 1,
        "target": {"kind": "server", "server": "bench"},
        "serverInfo": {"name": "bench", "version": "1"},
        "protocolVersion": "2025-11-25",
        "tools": [{"page": i // page_size, "tool": t} for i, t in enumerate(tools)],
    }
