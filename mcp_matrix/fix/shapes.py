"""Edits of one schema node's shape: an open object said to be one, items given to an array,
a ``[X, null]`` type made ``X`` and optional.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import escape
from mcp_matrix.fix.model import Edit, ServerItem
from mcp_matrix.fix.nodes import edit_at, node_at, node_name


def open_object(tool: Mapping[str, JSON], pointer: str) -> Edit | None:
    """An object property without ``properties`` retyped by a client: say it takes any keys
    (``additionalProperties: true``), the one thing that keeps it an object in such a converter."""
    return _given(
        tool,
        pointer,
        "type",
        ("additionalProperties", True),
        lambda node: node.get("type") == "object" and not node.get("properties"),
        "open-object",
        "{} is an object without listed properties: additionalProperties: true says it takes "
        "any keys",
    )


def add_items(tool: Mapping[str, JSON], pointer: str) -> Edit | None:
    """``items: {}`` given to an array without one (any item: the server's meaning is unchanged)."""
    return _given(
        tool,
        pointer,
        "items",
        ("items", {}),
        lambda node: True,
        "add-items",
        "items: {{}} added to the array {}: clients reject or rewrite an array without items",
    )


def _given(
    tool: Mapping[str, JSON],
    pointer: str,
    keyword: str,
    entry: tuple[str, JSON],
    fits: Callable[[dict], bool],
    kind: str,
    reason: str,
) -> Edit | None:
    """The node at ``pointer`` given the key ``entry`` names when it lacks it and ``fits`` it;
    ``reason`` names the node with ``{}``."""
    path, after, node = edit_at(tool, pointer, keyword)
    key, value = entry
    if node is None or key in node or not fits(node):
        return None
    node[key] = value
    return Edit(kind, str(tool.get("name", "")), after, reason.format(node_name(path)))


def drop_null(tool: Mapping[str, object], pointer: str) -> Edit | None:
    """A ``[T, "null"]`` type made ``T``, the property optional: null and absent mean the same."""
    path, after, node = edit_at(tool, pointer, "type")
    if node is None:
        return None
    if null_union(node.get("anyOf")):  # [X, null] as anyOf (Pydantic's Optional[X])
        (branch,) = [b for b in node.pop("anyOf") if b != {"type": "null"}]
        for key, value in branch.items():
            node.setdefault(key, copy.deepcopy(value))
        if node.get("default", 0) is None:
            del node["default"]
        kept = [node.get("type")]
    elif isinstance(node.get("type"), list):
        kept = [t for t in node["type"] if t != "null"]
        if len(kept) != 1 or len(kept) == len(node["type"]):
            return None
        node["type"] = kept[0]
    else:
        return None
    parent = node_at(after, path[:-2]) if len(path) >= 2 and path[-2] == "properties" else None
    if isinstance(parent, dict) and isinstance(parent.get("required"), list):
        parent["required"] = [r for r in parent["required"] if r != path[-1]]
    where = node_name(path)
    return Edit(
        "drop-null",
        str(tool.get("name", "")),
        after,
        f'{where} typed {kept[0]} instead of [{kept[0]}, "null"] and optional: clients rewrite or '
        "reject type lists",
        items=(
            ServerItem(
                str(tool.get("name", "")),
                f"treat {where} given as null the same as left out",
                f'"null" in the type of {where}',
            ),
        ),
        cost=f"a caller that sends {where}: null is refused by clients that validate first",
    )


def null_unions(node: object, where: str) -> list[str]:
    """Pointers to every property below ``node`` typed ``[X, null]`` (as a list or an anyOf)."""
    out: list[str] = []
    if not isinstance(node, Mapping):
        return out
    for name, sub in (node.get("properties") or {}).items():
        at = f"{where}/properties/{escape(name)}"
        if isinstance(sub, Mapping) and (
            null_union(sub.get("anyOf"))
            or (isinstance(sub.get("type"), list) and "null" in sub["type"])
        ):
            out.append(at)
        out += null_unions(sub, at)
    return out


def null_union(variants: JSON) -> bool:
    """``anyOf: [{type: X, ...}, {type: null}]`` with one typed non-null branch."""
    if not isinstance(variants, list) or len(variants) != 2 or {"type": "null"} not in variants:
        return False
    (other,) = [v for v in variants if v != {"type": "null"}] or [None]
    return isinstance(other, Mapping) and isinstance(other.get("type"), str)


__all__ = ["add_items", "drop_null", "null_union", "null_unions", "open_object"]
