"""Schemas stored node by node: every schema and sub-schema once, its sub-schemas by number.

A 5,000-tool server through 36 profiles has about 57,000 distinct model-facing schemas, most of
them one rewrite away from another: a variant that changed one property shares its other
properties, its ``$defs`` and their parts. ``discover --json`` (version 4,
mcp_matrix.report.discovery_doc) and the results stream (version 3, mcp_matrix.run.results) both
store schemas so: a table of nodes, each a schema whose sub-schemas (``SCHEMA_KEYS``) are numbers
of earlier nodes. ``SchemaNodes`` numbers them as a writer meets them, ``SchemaReader`` puts them
back whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp_matrix.core.content_table import ContentTable, canonical, resolve

# Where a schema holds schemas (JSON Schema 2020-12 and draft-07): each is a number into the node
# table. Part of the published formats (docs/reports.md, docs/results.md), so its own list: a
# behaviour's walk (mcp_matrix.behaviours.walk) may change without changing what a written
# document means. A map's values and a list's items when the value is an object or a list (as a
# schema keyword wants it); any other value of these keys (a malformed schema) is one number.
SCHEMA_MAPS = frozenset(
    ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
)
SCHEMA_LISTS = frozenset(("anyOf", "oneOf", "allOf", "prefixItems", "items"))
SCHEMA_KEYS = (
    SCHEMA_MAPS
    | SCHEMA_LISTS
    | frozenset(
        (
            "additionalProperties",
            "additionalItems",
            "unevaluatedProperties",
            "unevaluatedItems",
            "not",
            "if",
            "then",
            "else",
            "contains",
            "propertyNames",
        )
    )
)


class SchemaNodes:
    """Schemas and every sub-schema in them stored once, by number: ``table.texts[n]`` is node
    ``n`` as JSON text, its sub-schemas numbers of earlier nodes. ``added(n, text)``, when given,
    hears each new node as it is made (children before their parent: a stream can write it)."""

    def __init__(self, added: Callable[[int, str], None] | None = None) -> None:
        self.table = ContentTable()
        self.added = added
        self._refs: dict[int, int] = {}  # by identity: the rewrites are copy-on-write
        self._held: list[Any] = []  # keeps those objects alive, so their ids stay unique

    def ref(self, schema: Any) -> int:
        """The number of ``schema``; one frame per level of nesting, as the JSON reader's."""
        known = self._refs.get(id(schema))
        if known is not None:
            return known
        written = schema
        if isinstance(schema, dict):
            ref = self.ref
            written = {}
            for k, v in schema.items():
                if k not in SCHEMA_KEYS:
                    written[k] = v
                elif k in SCHEMA_MAPS and isinstance(v, dict):
                    written[k] = {p: ref(s) for p, s in v.items()}
                elif k in SCHEMA_LISTS and isinstance(v, list):
                    written[k] = [ref(s) for s in v]
                else:
                    written[k] = ref(v)
        size = len(self.table)
        known = self._refs[id(schema)] = self.table.number(canonical(written))  # made afresh
        self._held.append(schema)
        if known == size and self.added is not None:
            self.added(known, self.table.texts[known])
        return known


# The levels of JSON a schema put back from nodes may reach: about what Python's JSON reader
# reads in one line (it stops near 1,000), so version 3 holds no schema versions 1 and 2 could not.
MAX_DEPTH = 900


def _json_depth(value: Any) -> int:
    """Levels of JSON objects and arrays in ``value`` (0 for a scalar), without recursion."""
    if type(value) is not dict and type(value) is not list:
        return 0
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        deepest = max(deepest, level)
        for child in item.values() if type(item) is dict else item:
            if type(child) is dict or type(child) is list:
                todo.append((child, level + 1))
    return deepest


class SchemaReader:
    """Nodes put back whole, each once (a node named twice is one object); ``table`` may grow
    while it is read (a stream's nodes, line by line: ``add``). A bad number, or a node that
    contains itself, is a ValueError (``resolve``'s)."""

    def __init__(self, table: list, where: str) -> None:
        self.table, self.where = table, where
        self.depths: list[int] = []  # each added node's levels of JSON, put back whole
        self.done: dict[int, Any] = {}
        self._open: set[int] = set()  # the nodes being put back: one named again is a cycle

    def whole(self, ref: Any) -> Any:
        """One frame per level of nesting, as the writer's."""
        known = self.done.get(ref) if type(ref) is int else None  # not True: node 1
        if known is not None:
            return known
        node = resolve(self.table, ref, self.where)
        if ref in self._open:
            raise ValueError(f"{self.where}: node {ref} contains itself")
        self._open.add(ref)
        try:
            value = self._put_back(node)[0]
        finally:
            self._open.discard(ref)
        self.done[ref] = value
        return value

    def add(self, node: Any) -> int:
        """Append ``node``, the next entry of a stream: its sub-schemas must be nodes before it,
        and the whole no deeper than ``MAX_DEPTH`` levels of JSON (each line is shallow, but
        naming the line before, lines nest without end: a writer or a report then overflows)."""
        value, depth = self._put_back(node, self.depths)
        if depth > MAX_DEPTH:
            raise ValueError(
                f"{self.where} {len(self.table)}: nested {depth} levels of JSON deep with the "
                f"nodes it names; expected at most {MAX_DEPTH}, as one line of JSON can hold"
            )
        self.table.append(node)
        self.depths.append(depth)
        self.done[len(self.table) - 1] = value
        return len(self.table) - 1

    def _put_back(self, node: Any, depths: list[int] | None = None) -> tuple[Any, int]:
        """``node`` whole, and with ``depths`` (each earlier node's) the levels of JSON it is."""
        if type(node) is not dict:
            return node, 0 if depths is None else _json_depth(node)
        value, deepest, whole, done = {}, 0, self.whole, self.done
        for k, v in node.items():
            kind = type(v)
            if k not in SCHEMA_KEYS:
                value[k] = v
                if (kind is dict or kind is list) and depths is not None:
                    deepest = max(deepest, _json_depth(v))
                continue
            if kind is dict and k in SCHEMA_MAPS:
                value[k] = {  # a node put back before is taken as it is, without a call
                    p: done[s] if type(s) is int and s in done else whole(s) for p, s in v.items()
                }
                refs = v.values()
            elif kind is list and k in SCHEMA_LISTS:
                value[k] = [done[s] if type(s) is int and s in done else whole(s) for s in v]
                refs = v
            else:
                value[k] = whole(v)
                refs = None
            if depths is not None:
                level = (
                    depths[v] if refs is None else 1 + max(map(depths.__getitem__, refs), default=0)
                )
                deepest = max(deepest, level)
        return value, 1 + deepest


__all__ = ["MAX_DEPTH", "SCHEMA_KEYS", "SCHEMA_LISTS", "SCHEMA_MAPS", "SchemaNodes", "SchemaReader"]
