"""Tools added and removed between two lists, paired: a rename, a parallel tool, or a raw twin.

A removed and an added tool with alike schemas and descriptions are a **tool rename**; an added
tool whose name extends a kept one's (``update_account_v2``) or whose description names it is a
**parallel tool**, with whether the mapping between the two is total (a rename dressed as a new
tool); one string payload beside a kept tool is a **raw twin**
(docs/design.md#a-raw-twin-for-write-tools).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.evolution.model import Change
from mcp_matrix.evolution.schema import (
    compare_types,
    input_schema,
    is_raw_twin,
    properties,
    required,
    similarity,
    text_similarity,
    type_label,
)

_PARALLEL_SUFFIX = re.compile(r"^[_-]?(v\d+|new|next|\d+)$", re.IGNORECASE)
_RENAME_THRESHOLD = 0.6


def tool_change(
    kind: str,
    name: str,
    severity: str,
    message: str,
    old: JSON = None,
    new: JSON = None,
    **detail: JSON,
) -> Change:
    """A change of a whole tool: removed, renamed, added (no pointer into its schema)."""
    return Change(
        kind=kind,
        tool=name,
        severity=severity,
        pointer="",
        message=message,
        old=old,
        new=new,
        detail=detail,
    )


def tool_similarity(a: Any, b: Any) -> float:
    """How alike two tools are: their input schemas mostly, their descriptions a little."""
    desc = text_similarity(str(a.get("description") or ""), str(b.get("description") or ""))
    return 0.7 * similarity(input_schema(a), input_schema(b)) + 0.3 * desc


def pair_tools(removed: list[str], added: list[str], old: Mapping, new: Mapping) -> dict[str, str]:
    """Removed tool -> the added tool it was renamed to, most alike pairs first."""
    scored = sorted(
        ((tool_similarity(old[r], new[a]), r, a) for r in removed for a in added),
        key=lambda t: -t[0],
    )
    out: dict[str, str] = {}
    for score, r, a in scored:
        if score >= _RENAME_THRESHOLD and r not in out and a not in out.values():
            out[r] = a
    return out


def added_tool(name: str, tool: JSON, old: Mapping, new: Mapping) -> Change:
    """A tool new in this list: a raw twin, a parallel tool beside a kept one, or just added."""
    kept = [o for o in old if o in new]
    if is_raw_twin(tool):
        twin_of = next(
            (o for o in kept if _names_relate(o, name, tool) and not is_raw_twin(new[o])), None
        )
        if twin_of:
            return tool_change(
                "raw-twin-added",
                name,
                "safe",
                f"raw twin {name} added for {twin_of}: one JSON payload string, immune to schema evolution",
                new=name,
                twin_of=twin_of,
            )
    base = next(
        (o for o in kept if _PARALLEL_SUFFIX.match(name[len(o) :]) and name.startswith(o)), None
    )
    if base is None:
        base = next(
            (
                o
                for o in kept
                if _names_relate(o, name, tool)
                and similarity(input_schema(new[o]), input_schema(tool)) >= 0.3
            ),
            None,
        )
    if base is None:
        return tool_change(
            "tool-added",
            name,
            "safe",
            f"tool {name} is added",
            new=name,
            raw_twin=is_raw_twin(tool),
        )
    total, mapping, reasons = mapping_between(new[base], tool)
    if total:
        message = (
            f"{name} is added beside {base} and maps onto it one to one: a rename dressed as a new "
            "tool (an additive alias in the existing tool fits better)"
        )
    else:
        message = (
            f"{name} is added beside {base}, and the mapping between them is not total "
            "(a parallel tool fits here)"
        )
    return tool_change(
        "tool-parallel",
        name,
        "risky" if total else "safe",
        message,
        new=name,
        parallel_to=base,
        total=total,
        mapping=mapping,
        not_mapped=reasons,
    )


def _names_relate(existing: str, added: str, tool: JSON) -> bool:
    """``added`` extends ``existing``'s name, or its description names ``existing`` as a word.
    Called for every (kept, added) pair: the substring test rules most pairs out before a
    pattern is needed, and each name's pattern is compiled once."""
    if added.startswith(existing):
        return True
    text = str(tool.get("description") or "") if isinstance(tool, Mapping) else ""
    return existing in text and _name_as_word(existing).search(text) is not None


@functools.cache
def _name_as_word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")


def mapping_between(old_tool: Any, new_tool: Any) -> tuple[bool, dict[str, str], list[str]]:
    """Whether every parameter of ``old_tool`` maps onto one of ``new_tool`` (same type), and why not.

    Total means a frozen call can be rewritten key by key: a rename, which an alias covers.
    """
    po, pn = properties(input_schema(old_tool)), properties(input_schema(new_tool))
    mapping: dict[str, str] = {}
    for k in po:
        if k in pn and compare_types(po[k], pn[k]) in ("same", "widened"):
            mapping[k] = k
    free = [k for k in pn if k not in mapping.values()]
    for k in po:
        if k in mapping:
            continue
        match = next((x for x in free if type_label(pn[x]) == type_label(po[k])), None)
        if match is not None:
            mapping[k] = match
            free.remove(match)
    new_name = new_tool.get("name", "the new tool")
    old_name = old_tool.get("name", "the old tool")
    reasons = [
        f"{k} ({type_label(po[k])}) has no counterpart of the same type in {new_name}"
        for k in po
        if k not in mapping
    ]
    reasons += [
        f"{new_name} requires {k} ({type_label(pn[k])}), which {old_name} has nothing for"
        for k in sorted(required(input_schema(new_tool)))
        if k in pn and k not in mapping.values()
    ]
    return not reasons, mapping, reasons


__all__ = [
    "added_tool",
    "mapping_between",
    "pair_tools",
    "tool_change",
    "tool_similarity",
]
