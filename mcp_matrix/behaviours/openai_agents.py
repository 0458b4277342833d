"""The OpenAI Agents SDK's strict-schema conversion of MCP tools, as of openai-agents 0.24.

``MCPUtil.to_function_tool`` (``agents/mcp/util.py`` 0.24.0) adds ``properties: {}`` when
absent, then, with ``convert_schemas_to_strict``, runs ``ensure_strict_json_schema`` on a
copy with ``_reject_open_objects`` set unless the server's schema was ``{}``; any exception
leaves the tool non-strict with the unconverted schema. 0.24's converter
(``agents/strict_schema.py`` 0.24.0) refuses far more than the version (@ 014750b8, docs/clients/openai.md#agents-sdk) the
``openai-strict`` behaviour models: an object with no declared properties that is not
closed, any ``additionalProperties`` other than ``false``, a ``$ref`` left standing or with
constraining siblings, a root ``anyOf``, a nullable root, nesting deeper than 100. So a
typical MCP schema is sent *unchanged*, non-strict, far more often than that version predicts.

This is a fresh implementation of the rules read there, not the SDK's code.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from mcp_matrix.behaviours.outcomes import diff_findings, note
from mcp_matrix.behaviours.rewrite import Outcome, schema_rewrite
from mcp_matrix.behaviours.walk import json_copy
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import unescape

MAX_DEPTH = 100
# Keywords beside a ``$ref`` that constrain nothing (strict_schema.py 0.24.0).
QUIET_SIBLINGS = frozenset(
    {
        "$anchor",
        "$comment",
        "$defs",
        "$schema",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "default",
        "definitions",
        "deprecated",
        "description",
        "examples",
        "readOnly",
        "title",
        "writeOnly",
    }
)


class NotStrict(Exception):
    """The SDK's converter would raise (UserError, TypeError, ValueError, KeyError)."""


def nested_deeper_than(schema: JSON, limit: int = MAX_DEPTH) -> bool:
    """Whether dicts and lists nest deeper than ``limit`` (iterative: safe on any depth)."""
    stack = [(schema, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = (
            value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        )
        stack += [(c, depth + 1) for c in children if isinstance(c, (dict, list))]
    return False


def _resolve(root: dict, ref: JSON) -> dict:
    if not isinstance(ref, str) or not ref.startswith("#/"):
        raise NotStrict(f"$ref {ref!r} is not a local #/ pointer")
    node: Any = root
    for raw in unquote(ref[2:]).split("/"):
        key = unescape(raw)
        if not isinstance(node, dict) or key not in node or not isinstance(node[key], dict):
            raise NotStrict(f"$ref {ref!r} does not resolve to an object")
        node = node[key]
        if isinstance(node.get("$id"), str):
            raise NotStrict(f"$ref {ref!r} crosses a nested $id resource")
    return node


def _ref_chain(root: dict, schema: dict) -> dict:
    """A ``$ref`` with only quiet siblings, followed to its target (siblings carried)."""
    seen: set = set()
    carried: dict = {}
    node = schema
    while "$ref" in node and not (set(node) - {"$ref"} - QUIET_SIBLINGS):
        ref = node["$ref"]
        if ref in seen:
            raise NotStrict("circular $ref chain")
        seen.add(ref)
        carried = {**{k: v for k, v in node.items() if k != "$ref"}, **carried}
        node = _resolve(root, ref)
    return {**node, **carried}


def _merge_all_of(entry: dict, parent: dict) -> dict:
    clash = []
    if (
        parent.get("additionalProperties") is False
        and parent.get("properties", {}) == {}
        and isinstance(entry.get("properties"), dict)
        and entry["properties"] != {}
    ):
        clash.append("properties")
    merged = dict(entry)
    for key, value in parent.items():
        if key not in merged or key in QUIET_SIBLINGS:
            merged[key] = value
        elif (
            merged[key] == value
            or (key == "properties" and value == {})
            or (key == "required" and value == [])
        ):
            continue
        else:
            clash.append(key)
    if clash:
        raise NotStrict(f"single allOf clashes with its parent on {', '.join(sorted(clash))}")
    return merged


# complexity: the SDK's strict-schema rules read top to bottom, one branch per keyword it rejects or rewrites
def _walk(
    node: JSON, root: dict, reject_open: bool, depth: int, nested: bool, at: str, forced: list
) -> dict:
    if depth > MAX_DEPTH:
        raise NotStrict("schema too deeply nested")
    if not isinstance(node, dict):
        raise NotStrict(f"{at or '/'} is not a JSON object")
    closed = node.get("additionalProperties") is False
    nested = nested or (node is not root and isinstance(node.get("$id"), str))
    if "$ref" in node:
        if nested:
            raise NotStrict(f"$ref at {at or '/'} inside a nested $id resource")
        quiet = QUIET_SIBLINGS | ({"$id"} if node is root else set())
        if set(node) - {"$ref"} - quiet:
            raise NotStrict(f"$ref at {at or '/'} has constraining siblings")

    def sub(value: JSON, where: str) -> dict:
        return _walk(value, root, reject_open, depth + 1, nested, f"{at}/{where}", forced)

    for defs in ("$defs", "definitions"):
        if isinstance(node.get(defs), dict):
            for name, value in node[defs].items():
                sub(value, f"{defs}/{name}")  # converted in place, as the SDK does
    typ, props = node.get("type"), node.get("properties")
    if typ is None and isinstance(props, dict):
        typ = node["type"] = "object"
    elif typ is None and node.get("additionalProperties", False) is not False:
        raise NotStrict(f"additionalProperties at {at or '/'} on an untyped schema")
    is_object = typ == "object" or (isinstance(typ, list) and "object" in typ)
    if reject_open and is_object and node.get("properties", {}) == {} and not closed:
        raise NotStrict(f"object at {at or '/'} declares no properties and is not closed")
    if is_object and "additionalProperties" not in node:
        node["additionalProperties"] = False
    elif is_object and node["additionalProperties"] is not False:
        raise NotStrict(f"additionalProperties at {at or '/'} is not false")
    if isinstance(props, dict):
        before = given if isinstance(given := node.get("required"), list) else []
        newly = [k for k in props if k not in before]
        if newly and len(forced) < 20:
            forced.append((at, newly))
        node["required"] = list(props)
        node["properties"] = {k: sub(v, f"properties/{k}") for k, v in props.items()}
    if isinstance(node.get("items"), dict):
        node["items"] = sub(node["items"], "items")
    if isinstance(node.get("anyOf"), list):
        node["anyOf"] = [sub(v, f"anyOf/{i}") for i, v in enumerate(node["anyOf"])]
    if isinstance(node.get("oneOf"), list):
        before = node["anyOf"] if isinstance(node.get("anyOf"), list) else []
        node["anyOf"] = before + [sub(v, f"oneOf/{i}") for i, v in enumerate(node.pop("oneOf"))]
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        entry = all_of[0]
        if (
            isinstance(entry, dict)
            and "$ref" in entry
            and not (set(entry) - {"$ref"} - QUIET_SIBLINGS)
        ):
            if nested:
                raise NotStrict(f"$ref at {at}/allOf/0 inside a nested $id resource")
            strict_entry = _ref_chain(root, entry)
        else:
            strict_entry = sub(entry, "allOf/0")
        node.pop("allOf")
        if not closed:
            node.pop("additionalProperties", None)
        merged = _merge_all_of(strict_entry, node)
        node.clear()
        node.update(merged)
        return _walk(node, root, reject_open, depth + 1, nested, at, forced)
    if isinstance(all_of, list):
        node["allOf"] = [sub(v, f"allOf/{i}") for i, v in enumerate(all_of)]
    if "default" in node and node["default"] is None:
        del node["default"]
    if node.get("$ref") and len(node) > 1:
        target = _resolve(root, node.pop("$ref"))
        node.update({**target, **node})
        return _walk(node, root, reject_open, depth + 1, nested, at, forced)
    if reject_open and "$ref" in node:
        raise NotStrict(f"$ref at {at or '/'} is left unconverted")
    return node


def agents_strict(schema: JSON, reject_open: bool, forced: list | None = None) -> dict:
    """0.24 ``ensure_strict_json_schema`` on a copy of ``schema``; raises NotStrict.

    ``forced`` collects (pointer, names) of properties the conversion made required."""
    if nested_deeper_than(schema):
        raise NotStrict("schema too deeply nested")
    if schema == {}:
        return {"additionalProperties": False, "type": "object", "properties": {}, "required": []}
    work = json_copy(schema)
    out = _walk(work, work, reject_open, 1, False, "", forced if forced is not None else [])
    if isinstance(out.get("anyOf"), list):
        raise NotStrict("the root uses anyOf")
    typ = out.get("type")
    if isinstance(typ, list) and "object" in typ:
        if typ != ["object"]:
            raise NotStrict(f"the root type is {typ}, not a plain object")
        out["type"] = "object"
    return out


@schema_rewrite("openai-agents-strict", report_losses=False)
def openai_agents_strict(schema: JSON) -> Outcome:
    """openai-agents 0.24 MCP tool schema: ``properties`` added, strict conversion or the original.

    The successor of ``openai-strict`` (the version @ 014750b8, docs/clients/openai.md#agents-sdk). Put this in place of ``insert-properties`` + ``openai-strict`` for 0.24: it does both.
    """
    if not isinstance(schema, dict):
        return Outcome()
    base = schema if "properties" in schema else {**schema, "properties": {}}
    forced: list = []
    try:
        out = agents_strict(base, reject_open=schema != {}, forced=forced)
    except (NotStrict, RecursionError) as exc:
        return Outcome(
            schema=base,
            findings=(
                note(
                    "strict-fallback",
                    f"strict conversion fails ({exc}); the tool is sent non-strict with its "
                    "original schema",
                ),
            ),
        )
    made_required = tuple(
        note(
            "made-required",
            f"properties {', '.join(map(repr, names[:6]))} at {ptr or '/'} were optional; strict "
            "mode makes every property required, so the model must always send them",
            ptr + "/required",
            True,
        )
        for ptr, names in forced
    )
    return Outcome(
        schema=out, findings=made_required + diff_findings(schema, out, "openai-agents-strict")
    )
