"""Pydantic AI's OpenAI JSON-schema transformer, as it treats an MCP tool's input schema.

pydantic-ai-slim 2.66.0 passes each MCP tool's ``inputSchema`` through
``OpenAIJsonSchemaTransformer`` (``pydantic_ai/profiles/openai.py``; the walk in
``pydantic_ai/_json_schema.py``) with ``strict=None`` for an OpenAI model. In that mode it only
*adds*: every ``type: object`` node gets ``properties: {}`` when it has none and
``additionalProperties: false`` when it has none (or null); ``title``, ``$schema`` and
``discriminator`` go everywhere; a ``$ref`` with siblings moves into ``anyOf: [{$ref}]``; a
single-member ``allOf``/``anyOf``/``oneOf`` on an untyped node is merged into it. ``$defs``
are walked the same way and put back at the end. A fresh implementation of those rules.
"""

from __future__ import annotations

from typing import Any

from mcp_matrix.behaviours.openai_agents import nested_deeper_than
from mcp_matrix.behaviours.outcomes import diff_findings
from mcp_matrix.behaviours.rewrite import Outcome, schema_rewrite
from mcp_matrix.behaviours.walk import json_copy
from mcp_matrix.core.jsontypes import JSON

UNIONS = ("allOf", "anyOf", "oneOf")
DROPPED = ("title", "$schema", "discriminator")
MAX_DEPTH = 150  # a schema nested deeper is left as it is (the SDK itself recurses without a bound)


class _TooDeep(Exception):
    pass


def _handle(node: object, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise _TooDeep
    if not isinstance(node, dict):
        return node
    typ = node.get("type")
    if typ == "object":
        if node.get("properties") and isinstance(node["properties"], dict):
            node["properties"] = {k: _handle(v, depth + 1) for k, v in node["properties"].items()}
        if isinstance(node.get("additionalProperties"), dict):
            node["additionalProperties"] = _handle(node["additionalProperties"], depth + 1)
        if isinstance(node.get("patternProperties"), dict):
            node["patternProperties"] = {
                k: _handle(v, depth + 1) for k, v in node["patternProperties"].items()
            }
    elif typ == "array":
        if isinstance(node.get("prefixItems"), list):
            node["prefixItems"] = [_handle(x, depth + 1) for x in node["prefixItems"]]
        items = node.get("items")
        if isinstance(items, list):
            node["items"] = [_handle(x, depth + 1) for x in items]
        elif isinstance(items, dict):
            node["items"] = _handle(items, depth + 1)
    elif typ is None:
        for kind in UNIONS:
            if kind not in node or not isinstance(node[kind], list):
                continue
            members = [_handle(m, depth + 1) for m in node.pop(kind)]
            if len(members) == 1 and isinstance(members[0], dict) and members[0].get("not") != {}:
                node = members[0] | node
            else:
                node = {**node, kind: members}
    if typ is not None:
        for kind in UNIONS:
            if isinstance(node.get(kind), list) and node[kind]:
                node[kind] = [_handle(m, depth + 1) for m in node[kind]]
    return _transform(node)


def _transform(node: dict) -> dict:
    for key in DROPPED:
        node.pop(key, None)
    ref = node.get("$ref")
    if ref and len(node) > 1:
        node["anyOf"] = [{"$ref": node.pop("$ref")}]
    if node.get("type") == "object":
        node.setdefault("properties", {})
        if node.get("additionalProperties") in (None, False):
            node["additionalProperties"] = False
    return node


def openai_transform(schema: JSON) -> JSON:
    """The transformer's walk on a copy of ``schema`` (root ``$ref`` schemas not modelled)."""
    if not isinstance(schema, dict):
        return schema
    if nested_deeper_than(schema, MAX_DEPTH):
        raise _TooDeep
    work = json_copy(schema)
    defs = work.pop("$defs", None)
    out = _handle(work, 0)
    if isinstance(defs, dict) and defs:
        out["$defs"] = {k: _handle(v, 1) for k, v in defs.items()}
    if isinstance(out.get("definitions"), dict):
        out["definitions"] = {k: _handle(v, 1) for k, v in out["definitions"].items()}
    return out


@schema_rewrite("pydantic-ai-openai-schema", report_losses=False)
def pydantic_ai_openai_schema(schema: JSON) -> Outcome:
    """Pydantic AI's OpenAI schema transformer, non-strict (docs/clients/pydantic-ai.md).

    Closes every object that does not say otherwise, adds empty ``properties``, drops titles.
    """
    try:
        out = openai_transform(schema)
    except _TooDeep:
        return Outcome()
    return Outcome(schema=out, findings=diff_findings(schema, out, "pydantic-ai-openai-schema"))
