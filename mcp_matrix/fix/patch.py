"""RFC 6902 patches between two versions of a tool, and applying them (add, remove, replace).

The operations are the structural difference, smallest first: a changed leaf is one
``replace``, a new key one ``add``, a dropped key one ``remove``; lists are replaced whole
(a tool's lists are short: ``required``, ``enum``)."""

from __future__ import annotations

import copy
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import escape, unescape
from mcp_matrix.fix.model import Op


def diff(old: JSON, new: JSON, reason: str, path: str = "") -> list[Op]:
    """The operations that turn ``old`` into ``new``, each carrying ``reason``."""
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[Op] = []
        for key in old:
            if key not in new:
                ops.append(Op("remove", f"{path}/{escape(key)}", reason=reason))
        for key, value in new.items():
            where = f"{path}/{escape(key)}"
            if key not in old:
                ops.append(Op("add", where, copy.deepcopy(value), reason))
            else:
                ops += diff(old[key], value, reason, where)
        return ops
    if old == new and type(old) is type(new):
        return []
    return [Op("replace", path, copy.deepcopy(new), reason)]


def apply(doc: Any, ops: list[Op] | tuple[Op, ...]) -> JSON:
    """``doc`` with ``ops`` applied in order (a copy; ``doc`` is unchanged)."""
    doc = copy.deepcopy(doc)
    for op in ops:
        if op.path == "":
            doc = copy.deepcopy(op.value)
            continue
        *parents, last = [unescape(t) for t in op.path.split("/")[1:]]
        node = doc
        for token in parents:
            node = node[int(token)] if isinstance(node, list) else node[token]
        if op.op == "remove":
            del node[int(last) if isinstance(node, list) else last]
        elif isinstance(node, list):
            index = len(node) if last == "-" else int(last)
            if op.op == "add":
                node.insert(index, copy.deepcopy(op.value))
            else:
                node[index] = copy.deepcopy(op.value)
        else:
            if op.op == "replace" and last not in node:
                raise KeyError(f"replace of a missing member: {op.path}")
            node[last] = copy.deepcopy(op.value)
    return doc
