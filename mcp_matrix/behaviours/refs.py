"""Inlining local ``$ref``s the way clients do, cycle- and blow-up-safe.

Clients differ in which references they resolve (any ``#/...`` pointer, only
``#/$defs/<name>``, or ADK's "last path segment" lookup), in how siblings of ``$ref``
merge with the target, and in what a cycle becomes. ``inline`` takes those as arguments
and reports every cycle and unresolved reference as an event for the behaviour to judge.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.behaviours import walk as W
from mcp_matrix.core.jsontypes import JSON

FORMS = ("any-pointer", "defs-only", "last-segment")


@dataclass
class Inlined:
    schema: Any
    complete: bool = True
    cycle_nodes: list[tuple[W.Node, str]] = field(default_factory=list)
    missing_nodes: list[tuple[W.Node, str]] = field(default_factory=list)

    # Pointers are built lazily: a blown-up schema can have tens of thousands of events.
    @property
    def cycles(self) -> list[tuple[str, str]]:
        """(pointer, ref) of the first 20 references met again while being expanded."""
        return [(node.pointer, ref) for node, ref in self.cycle_nodes[:20]]

    @property
    def missing(self) -> list[tuple[str, str]]:
        """(pointer, ref) of the first 20 references that do not resolve."""
        return [(node.pointer, ref) for node, ref in self.missing_nodes[:20]]


def lookup(root: JSON, ref: JSON, form: str) -> tuple[bool, JSON]:
    """Find what ``ref`` points at in ``root`` under a client's resolution ``form``."""
    if not isinstance(ref, str):
        return False, None
    if form == "any-pointer":
        return W.resolve_pointer(root, ref)
    if form == "defs-only":
        name = W.defs_ref_name(ref)
        if name is None or not isinstance(root, dict):
            return False, None
        for key in ("$defs", "definitions"):
            defs = root.get(key)
            prefix = f"#/{key}/"
            if ref.startswith(prefix) and isinstance(defs, dict) and name in defs:
                return True, defs[name]
        return False, None
    # last-segment (Google ADK, docs/clients/google.md#google-adk): definitions and $defs merged, key = ref.split("/")[-1]
    merged: dict = {}
    if isinstance(root, dict):
        for key in ("definitions", "$defs"):
            if isinstance(root.get(key), dict):
                merged.update(root[key])
    name = ref.split("/")[-1]
    return (True, merged[name]) if name in merged else (False, None)


def siblings_win(target: JSON, siblings: dict) -> JSON:
    """``{...target, ...siblings}`` (Vercel docs/clients/vercel.md#google-provider, ADK docs/clients/google.md#google-adk, Agents SDK docs/clients/openai.md#agents-sdk)."""
    if not siblings:
        return target
    if isinstance(target, dict):
        return {**target, **siblings}
    return dict(siblings)


def inline(
    schema: JSON,
    form: str = "any-pointer",
    walk: W.Walk = W.ALL,
    on_cycle: Callable[[dict, JSON, str], JSON] | None = None,
    merge: Callable[[JSON, dict], JSON] = siblings_win,
    only_with_siblings: bool = False,
) -> Inlined:
    """Replace resolvable ``$ref`` nodes by their targets (merged with their siblings).

    ``on_cycle(node, target, ref)`` gives what a reference already being expanded on this
    path becomes (default: the node is left as it is). Unresolved references stay.
    ``only_with_siblings``: resolve only ``$ref`` nodes that have other keys (docs/clients/openai.md#agents-sdk).
    """
    out = Inlined(schema)

    def fn(value: JSON, node: W.Node) -> JSON:
        chain = node.carry or ()
        while isinstance(value, dict) and isinstance(value.get("$ref"), str):
            ref = value["$ref"]
            if only_with_siblings and len(value) == 1:
                return value
            found, target = lookup(schema, ref, form)
            if not found:
                out.missing_nodes.append((node, ref))
                return value
            if ref in chain:
                out.cycle_nodes.append((node, ref))
                return value if on_cycle is None else on_cycle(value, target, ref)
            chain = chain + (ref,)
            node.carry = chain
            value = merge(target, {k: v for k, v in value.items() if k != "$ref"})
        return value

    result = W.rewrite(schema, fn, walk, carry=())
    out.schema = result.schema
    out.complete = result.complete
    return out
