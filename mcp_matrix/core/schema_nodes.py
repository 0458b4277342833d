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


class SchemaReader:
    """Nodes put back whole, each once (a node named twice is one object); ``table`` may grow
    while it is read (a stream's nodes, line by line: ``add``). A bad number, or a node that
    contains itself, is a ValueError (``resolve``'s)."""

    def __init__(self, table: list, where: str) -> None:
        self.table, self.where = table, where
        self.done: dict[int, Any] = {}
        self._open: set[int] = set()  # the nodes being put back: one named again is a cycle

    def whole(self, ref: Any) -> Any:
        """One frame per level of nesting, as the writer's."""
        known = self.done.get(ref) if isinstance(ref, int) else None
        if known is not None:
            return known
        node = resolve(self.table, ref, self.where)
        if ref in self._open:
            raise ValueError(f"{self.where}: node {ref} contains itself")
        self._open.add(ref)
        try:
            value = self._put_back(node)
        finally:
            self._open.discard(ref)
        self.done[ref] = value
        return value

    def add(self, node: Any) -> int:
        """Append ``node``, the next entry of a stream: its sub-schemas must be nodes before it."""
        value = self._put_back(node)
        self.table.append(node)
        self.done[len(self.table) - 1] = value
        return len(self.table) - 1

    def _put_back(self, node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        value = {}
        for k, v in node.items():
            if k not in SCHEMA_KEYS:
                value[k] = v
            elif k in SCHEMA_MAPS and isinstance(v, dict):
                value[k] = {p: self.whole(s) for p, s in v.items()}
            elif k in SCHEMA_LISTS and isinstance(v, list):
                value[k] = [self.whole(s) for s in v]
            else:
                value[k] = self.whole(v)
        return value


__all__ = ["SCHEMA_KEYS", "SCHEMA_LISTS", "SCHEMA_MAPS", "SchemaNodes", "SchemaReader"]
