"""Compare two tool lists schema by schema: one ``Change`` per difference, with its base severity.

This stage looks only at the JSON the two servers sent. The clients' view of each change
(discovery, caches, call behaviours) and the frozen callers' fate are added afterwards by
``effects``, ``discovery_effects`` and ``populations``; they can only make a severity worse.

Here: the tool list (tools removed, added and paired by ``tool_pairs``: renames, parallel
tools, raw twins) and each kept tool's root combinators, texts and behaviour hints; its
parameters are compared by ``params`` and ``values``, its outputSchema by ``outputs``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import tools_by_name
from mcp_matrix.evolution.model import Change
from mcp_matrix.evolution.outputs import compare_output
from mcp_matrix.evolution.params import compare_object
from mcp_matrix.evolution.schema import input_schema, root_combinators
from mcp_matrix.evolution.tool_changes import ToolChanges, same
from mcp_matrix.evolution.tool_pairs import added_tool, pair_tools, tool_change, tool_similarity

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


# -- the tool list ------------------------------------------------------------------------------


def compare_lists(old_tools: list[object], new_tools: list[Any]) -> list[Change]:
    """Every change between two tool lists (as the servers sent them), old list order first."""
    old = tools_by_name(old_tools)
    new = tools_by_name(new_tools)
    removed = [n for n in old if n not in new]
    added = [n for n in new if n not in old]
    renamed = pair_tools(removed, added, old, new)
    out: list[Change] = []
    for name in new:
        if name in old:
            out += compare_tool(name, old[name], new[name])
    for name in removed:
        if name in renamed:
            to = renamed[name]
            message = (
                f"tool {name} is gone and {to} looks like it under a new name (a rename in place)"
            )
            score = round(tool_similarity(old[name], new[to]), 2)
            out.append(
                tool_change(
                    "tool-renamed", name, "breaking", message, name, to, to=to, similarity=score
                )
            )
        else:
            out.append(
                tool_change("tool-removed", name, "breaking", f"tool {name} is removed", name)
            )
    taken = set(renamed.values())
    for name in added:
        if name not in taken:
            out.append(added_tool(name, new[name], old, new))
    return out


# -- one tool -----------------------------------------------------------------------------------


def compare_tool(name: str, a: Any, b: Any) -> list[Change]:
    """Every change between two versions of one tool: input schema, texts, hints, output."""
    sa, sb = input_schema(a), input_schema(b)
    t = ToolChanges(name, sa, sb)
    _root(t, sa, sb)
    if isinstance(sa, Mapping) and isinstance(sb, Mapping):
        compare_object(t, (), "/inputSchema", sa, sb)
    if not same(sa, sb) and not any(c.pointer.startswith("/inputSchema") for c in t.out):
        t.add("schema-changed", "risky", "the input schema changed", "/inputSchema", old=sa, new=sb)
    _texts(t, a, b)
    _annotations(t, a, b)
    compare_output(t, a, b)
    return t.out


def _root(t: ToolChanges, sa: Any, sb: Any) -> None:
    """Root combinators (anyOf/oneOf/allOf/...) added, changed or removed."""
    ka, kb = root_combinators(sa), root_combinators(sb)
    for k in kb:
        ptr = f"/inputSchema/{k}"
        if k not in ka:
            t.add(
                "root-combinator-added",
                "risky",
                f"root {k} added to the input schema",
                ptr,
                new=sb[k],
                keyword=k,
            )
        elif not same(sa[k], sb[k]):
            t.add("schema-changed", "risky", f"root {k} changed", ptr, old=sa[k], new=sb[k])
    for k in ka:
        if k not in kb:
            t.add(
                "root-combinator-removed",
                "safe",
                f"root {k} removed: the input schema is flat",
                f"/inputSchema/{k}",
                old=sa[k],
                keyword=k,
            )


# -- texts, hints, results ----------------------------------------------------------------------


def _texts(t: ToolChanges, a: Mapping, b: Mapping) -> None:
    for key in ("description", "title"):
        x, y = a.get(key), b.get(key)
        if x != y:
            t.add(
                "description-changed",
                "safe",
                f"the tool's {key} changed",
                f"/{key}",
                old=x,
                new=y,
                field=key,
            )


def _annotations(t: ToolChanges, a: Mapping, b: Mapping) -> None:
    ha = before if isinstance(before := a.get("annotations"), Mapping) else {}
    hb = after if isinstance(after := b.get("annotations"), Mapping) else {}
    for hint in HINTS:
        x, y = ha.get(hint), hb.get(hint)
        if x == y:
            continue
        severity, message = _hint_change(hint, x, y)
        t.add(
            "annotation-changed", severity, message, f"/annotations/{hint}", old=x, new=y, hint=hint
        )
    if ha.get("title") != hb.get("title"):
        t.add(
            "description-changed",
            "safe",
            "the tool's annotation title changed",
            "/annotations/title",
            old=ha.get("title"),
            new=hb.get("title"),
            field="annotations.title",
        )


def _hint_change(hint: str, old: JSON, new: JSON) -> tuple[str, str]:
    """How much a flipped behaviour hint matters to callers that gate on it."""
    shown = f"{hint} {json.dumps(old) if old is not None else 'absent'} -> {json.dumps(new) if new is not None else 'absent'}"
    if hint == "readOnlyHint" and old is True:
        return "breaking", f"{shown}: the tool no longer promises to be read-only"
    if hint == "readOnlyHint" and new is True:
        return "risky", f"{shown}: clients may now run it without approval; it must never write"
    if hint == "destructiveHint" and new is True:
        return "breaking", f"{shown}: the tool now declares it may destroy data"
    if hint == "idempotentHint" and old is True:
        return "risky", f"{shown}: repeating a call (a retry) may no longer be harmless"
    if hint == "openWorldHint" and old is False:
        return "risky", f"{shown}: the tool may now reach systems outside the server"
    return "safe", shown


__all__ = ["compare_lists", "compare_tool"]
