"""Repairs of a tool's root: a root combinator flattened, an object root given, references inlined.

Clients reject or rewrite a root ``anyOf``/``oneOf``/``allOf``, a root that is not an object,
and ``$ref``/``$defs`` they do not resolve; each repair keeps what the server means (a rule
moves into the description and a server check).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import unescape
from mcp_matrix.fix.model import Edit, ServerItem
from mcp_matrix.fix.nodes import append_sentence, compact
from mcp_matrix.fix.shapes import drop_null, null_unions

COMBINATORS = ("anyOf", "oneOf", "allOf")


def _variant_text(variant: object) -> str:
    if isinstance(variant, Mapping) and set(variant) <= {"required", "properties", "type"}:
        names = variant.get("required") or list((variant.get("properties") or {}).keys())
        if names and all(isinstance(n, str) for n in names):
            return "(" + " and ".join(names) + ")"
    return compact(variant)


def flatten_root(tool: Mapping[str, Any]) -> Edit | None:
    """A root anyOf/oneOf/allOf made a plain object: the variants' properties kept optional at the
    root, the rule stated in the tool description and checked by the handler."""
    schema = tool.get("inputSchema")
    if not isinstance(schema, Mapping):
        return None
    found = [k for k in COMBINATORS if isinstance(schema.get(k), list)]
    if not found:
        return None
    after = copy.deepcopy(dict(tool))
    flat = after["inputSchema"]
    flat.setdefault("type", "object")
    props = flat.setdefault("properties", {})
    rules = []
    check: dict[str, JSON] = {}
    for keyword in found:
        variants = flat.pop(keyword)
        check[keyword] = copy.deepcopy(variants)
        for variant in variants:
            for key, sub in ((variant or {}).get("properties") or {}).items():
                props.setdefault(key, copy.deepcopy(sub))
        if keyword == "allOf" and all(_plain_required(v) for v in variants):
            required = list(flat.get("required") or [])
            for v in variants:
                required += [n for n in v.get("required") or [] if n not in required]
            flat["required"] = required
            del check[keyword]
            continue
        words = {"anyOf": "at least one of", "oneOf": "exactly one of", "allOf": "all of"}[keyword]
        rules.append(f"{words}: " + " or ".join(_variant_text(v) for v in variants))
    name = str(tool.get("name", ""))
    items: tuple[ServerItem, ...] = ()
    if rules:
        rule = "; ".join(rules)
        after["description"] = append_sentence(
            after.get("description"), f"Input rule (checked by the server): give {rule}."
        )
        items = (
            ServerItem(
                name,
                f"refuse a call unless it gives {rule}, with a tool error (isError: true) that "
                "names the parameters",
                f"root {'/'.join(found)} of inputSchema",
                check,
            ),
        )
    return Edit(
        "flatten-root",
        name,
        after,
        f"root {'/'.join(found)} removed: clients that reject or rewrite root combinators get a "
        "plain object; the rule moves to the description and the handler",
        items=items,
        cost="clients that checked the root rule before sending now read it as prose; the "
        "handler's check replaces theirs",
    )


def _plain_required(variant: JSON) -> bool:
    return isinstance(variant, Mapping) and set(variant) <= {"required"}


def object_root(tool: Mapping[str, Any]) -> Edit | None:
    """``type: object`` (and ``properties: {}``) added to a root that has neither."""
    schema = tool.get("inputSchema")
    after = copy.deepcopy(dict(tool))
    if not isinstance(schema, Mapping):
        after["inputSchema"] = {"type": "object", "properties": {}}
    elif schema.get("type") in (None, "object") and not any(k in schema for k in COMBINATORS):
        root = after["inputSchema"]
        if root.get("type") == "object" and "properties" in root:
            return None
        root.setdefault("type", "object")
        root.setdefault("properties", {})
    else:
        return None
    return Edit(
        "object-root",
        str(tool.get("name", "")),
        after,
        "inputSchema given an object root (type: object, properties): clients replace or drop "
        "anything else",
    )


def refers(tool: Mapping[str, JSON]) -> bool:
    """Whether the tool's input schema holds a local ``$ref``."""
    schema = tool.get("inputSchema")
    return isinstance(schema, Mapping) and '"$ref": "#/' in json.dumps(schema)


def inline_refs(tool: Mapping[str, object], nullable: bool = False) -> Edit | None:
    """Every local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) replaced by what it points to,
    and the definitions dropped: clients that drop ``$defs`` or do not resolve references see
    the whole schema. A recursive reference cannot be inlined: no edit then."""
    schema = tool.get("inputSchema")
    if not isinstance(schema, Mapping):
        return None
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}

    def resolve(node: JSON, seen: tuple[str, ...]) -> JSON:
        if isinstance(node, list):
            return [resolve(v, seen) for v in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            key = unescape(ref.rsplit("/", 1)[-1])
            if key in seen or key not in defs:
                raise ValueError(ref)
            merged = {**defs[key], **{k: v for k, v in node.items() if k != "$ref"}}
            return resolve(merged, seen + (key,))
        return {k: resolve(v, seen) for k, v in node.items() if k not in ("$defs", "definitions")}

    try:
        flat = resolve(schema, ())
    except ValueError:
        return None
    if flat == schema:
        return None
    after = copy.deepcopy(dict(tool))
    after["inputSchema"] = flat
    reason = (
        "every $ref inlined and $defs dropped: clients that drop $defs or do not resolve "
        "references saw a reference they could not follow"
    )
    items: tuple[ServerItem, ...] = ()
    if nullable:  # what the references hid comes out too: its [X, null] unions made X, optional
        for pointer in null_unions(flat, "/inputSchema"):
            step = drop_null(after, pointer)
            if step is not None:
                after, items = step.after, items + step.items
        if not items:
            return None
        reason += "; the [X, null] unions they held made X and optional"
    return Edit("inline-refs", str(tool.get("name", "")), after, reason, items=items)


__all__ = ["COMBINATORS", "flatten_root", "inline_refs", "object_root", "refers"]
