"""Notable schema features of a tool: what a reader of a snapshot wants flagged."""

from __future__ import annotations

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import COMBINATORS

WALK_LIMIT = 20000


def tool_features(tool: object) -> list[str]:
    """Short labels, e.g. ``root anyOf``, ``$ref``, ``array without items`` (iterative walk)."""
    if not isinstance(tool, dict):
        return ["not an object"]
    out: list[str] = []
    schema = tool.get("inputSchema")
    if "inputSchema" not in tool:
        out.append("no inputSchema")
    elif not isinstance(schema, dict):
        out.append(f"inputSchema is {type(schema).__name__}")
    else:
        if schema.get("type") != "object":
            out.append(f"root type {schema.get('type')!r}")
        out += [f"root {k}" for k in COMBINATORS + ("not", "if") if k in schema]
        if schema.get("additionalProperties") is False:
            out.append("additionalProperties false")
        out += sorted(_walk_features(schema))
    if "outputSchema" in tool:
        out.append("outputSchema")
    name = tool.get("name")
    if isinstance(name, str) and len(name) > 40:
        out.append(f"name {len(name)} chars")
    return out


def _walk_features(schema: dict) -> set[str]:
    found: set[str] = set()
    stack: list[tuple[JSON, int]] = [(schema, 0)]
    seen = 0
    while stack and seen < WALK_LIMIT:
        node, depth = stack.pop()
        seen += 1
        if isinstance(node, list):
            stack.extend((x, depth + 1) for x in node)
            continue
        if not isinstance(node, dict):
            continue
        if depth > 64:
            found.add("nested > 64 levels")
            continue
        if "$ref" in node:
            found.add("$ref")
        if "$defs" in node or "definitions" in node:
            found.add("$defs")
        if node.get("type") == "array" and "items" not in node:
            found.add("array without items")
        if isinstance(node.get("type"), list):
            found.add("type array")
        if depth > 0 and any(k in node for k in COMBINATORS):
            found.add("nested combinator")
        for value in node.values():
            if isinstance(value, (dict, list)):
                stack.append((value, depth + 1))
    return found


def annotations_label(tool: object) -> str:
    ann = tool.get("annotations") if isinstance(tool, dict) else None
    if not isinstance(ann, dict):
        return "-"
    parts = []
    if ann.get("readOnlyHint") is True:
        parts.append("read-only")
    if ann.get("destructiveHint") is True:
        parts.append("destructive")
    if ann.get("idempotentHint") is True:
        parts.append("idempotent")
    if ann.get("openWorldHint") is True:
        parts.append("open-world")
    return ", ".join(parts) or "-"
