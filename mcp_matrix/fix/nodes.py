"""Where an edit lands in a tool: JSON Pointer tokens, the node they name, and how a reader names it.

Every kind of edit (``roots``, ``shapes``, ``prose``) finds its node and words the same way.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import unescape


def tokens(pointer: str) -> list[str]:
    """A JSON Pointer's tokens, unescaped."""
    return [unescape(t) for t in pointer.split("/")[1:]] if pointer else []


def last_token(pointer: str) -> str:
    """The keyword a finding's pointer ends in (``minimum`` of ``.../price/minimum``)."""
    found = tokens(pointer)
    return found[-1] if found else ""


def node_path(pointer: str) -> list[str]:
    """The tokens of the node that holds the pointer's last keyword."""
    return tokens(pointer)[:-1]


def node_at(doc: Any, path: list[str]) -> JSON:
    """The value at ``path`` in ``doc`` (None when the path does not lead anywhere)."""
    for token in path:
        if isinstance(doc, list):
            doc = doc[int(token)] if token.isdigit() and int(token) < len(doc) else None
        elif isinstance(doc, Mapping):
            doc = doc.get(token)
        else:
            return None
    return doc


def edit_at(tool: Mapping[str, object], pointer: str, keyword: str) -> tuple[list[str], dict, Any]:
    """The node ``pointer`` names (less a last ``keyword`` token), in a copy of the tool: the
    path to it, the copy, and the node to change (None when it is not an object)."""
    found = tokens(pointer)
    path = found[:-1] if found and found[-1] == keyword else found
    after = copy.deepcopy(dict(tool))
    node = node_at(after, path)
    return path, after, node if isinstance(node, dict) else None


def node_name(path: list[str]) -> str:
    """A schema node as a reader names it: ``importance`` or ``items of tags`` or ``the arguments``."""
    inner = path[1:] if path[:1] == ["inputSchema"] else path
    names = [t for i, t in enumerate(inner) if i and inner[i - 1] == "properties"]
    if not inner:
        return "the arguments"
    where = ".".join(names) or "/".join(inner)
    return f"items of {where}" if inner[-1] == "items" else where


def nest(path: list[str], schema: dict) -> dict:
    """``schema`` placed at ``path`` (below ``inputSchema``) of an otherwise empty schema."""
    inner = path[1:] if path[:1] == ["inputSchema"] else path
    for token in reversed(inner):
        schema = {token: schema}
    return schema


def compact(value: object) -> str:
    """A keyword's value as a description says it: a string as it is, else compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def append_sentence(description: JSON, text: str) -> str:
    """``text`` appended to a description as a sentence of its own."""
    have = description.rstrip() if isinstance(description, str) else ""
    if not have:
        return text
    return f"{have}{'' if have.endswith(('.', '!', '?')) else '.'} {text}"


__all__ = [
    "append_sentence",
    "compact",
    "edit_at",
    "last_token",
    "nest",
    "node_at",
    "node_name",
    "node_path",
    "tokens",
]
