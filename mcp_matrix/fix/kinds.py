"""Candidate edits for one finding: the smallest schema changes that could remove it.

Each candidate is only a proposal: ``mcp_matrix.fix.search`` keeps it when the re-run shows the
loss gone in the required clients and no cell anywhere worse. Which finding gets which kind of
edit follows the finding codes the behaviours emit (and the advice the project gives for them,
``mcp_matrix.report.advice``); nothing here knows a client. The edits themselves are in
``roots`` (the root), ``shapes`` (one node's shape), ``prose`` (keywords said in words,
descriptions cut) and ``names`` (tool names).
"""

from __future__ import annotations

from collections.abc import Mapping

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.fix.model import Edit
from mcp_matrix.fix.names import renames
from mcp_matrix.fix.nodes import last_token, node_path
from mcp_matrix.fix.prose import PROSE, describe_keyword, describe_node, shorter_descriptions
from mcp_matrix.fix.roots import COMBINATORS, flatten_root, inline_refs, object_root, refers
from mcp_matrix.fix.shapes import add_items, drop_null, open_object

ROOT_CODES = frozenset(
    {
        "root-combinator",
        "root-combinator-described",
        "root-combinator-deleted",
        "root-combinator-collapsed",
        "root-combinator-flattened",
    }
)
OBJECT_ROOT_CODES = frozenset(
    {"root-type-added", "root-replaced", "no-parameters", "schema-unparsable", "parameters-dropped"}
)
NAME_CODES = frozenset(
    {
        "name-too-long",
        "name-invalid",
        "name-shortened",
        "name-sanitised",
        "name-collision",
        "name-collision-renamed",
    }
)
KEYWORD_CODES = frozenset(
    {"removed-by-client", "changed-by-client", "keyword-refused", "schema-incompatible"}
)
ITEMS_CODES = frozenset({"array-without-items", "items-added"})
NULLABLE_CODES = frozenset({"nullable-rewritten", "type-changed", "type-defaulted"})
DESCRIPTION_CODES = frozenset({"description-truncated"})
LIST_CODES = frozenset({"list-rejected", "invalid-json-schema", "converter-error"})
REF_CODES = frozenset({"dangling-ref", "ref-unresolved", "type-defaulted"})


def candidates(
    tool: Mapping[str, JSON], code: str, pointer: str, message: str, tools: list[JSON]
) -> list[Edit]:
    """The edits that could remove the finding ``code`` at ``pointer`` of ``tool``, smallest first."""
    keyword = last_token(pointer)
    if code in ROOT_CODES or (
        code in KEYWORD_CODES and keyword in COMBINATORS and node_path(pointer) == ["inputSchema"]
    ):
        return [e for e in [flatten_root(tool)] if e]
    if code in LIST_CODES:  # the culprit's own schema took the list down: any root repair
        found = [object_root(tool), flatten_root(tool), inline_refs(tool)]
        return [e for e in found if e]
    if code in OBJECT_ROOT_CODES:
        return [e for e in [object_root(tool)] if e]
    if code in NAME_CODES:
        return renames(tool, tools, message)
    if code in REF_CODES and refers(tool):
        return [e for e in [inline_refs(tool), inline_refs(tool, nullable=True)] if e]
    if code in ITEMS_CODES:
        return [e for e in [add_items(tool, pointer)] if e]
    if code in NULLABLE_CODES:
        return [e for e in [drop_null(tool, pointer)] if e]
    if code in DESCRIPTION_CODES:
        return shorter_descriptions(tool, message)
    nullable = drop_null(tool, pointer.rsplit("/", 1)[0]) if code in KEYWORD_CODES else None
    if nullable is not None and keyword in ("default", "anyOf", "oneOf", "type"):
        return [nullable]  # Optional[X]'s null branch and null default: one edit for both
    if code in KEYWORD_CODES and keyword in PROSE:
        one, node = describe_keyword(tool, pointer, keyword), describe_node(tool, pointer)
        return [e for e in [one, node if node and one and node.after != one.after else None] if e]
    if code in KEYWORD_CODES and keyword == "description":  # moved keywords appended to it
        return [e for e in [describe_node(tool, pointer, default=False)] if e]
    if code in KEYWORD_CODES and keyword == "type":
        return [e for e in [open_object(tool, pointer)] if e]
    return []


__all__ = ["NAME_CODES", "candidates"]
