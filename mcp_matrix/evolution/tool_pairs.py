"""Tools added and removed between two lists, paired: a rename, a parallel tool, or a raw twin.

A removed and an added tool with alike schemas and descriptions are a **tool rename**; an added
tool whose name extends a kept one's (``update_account_v2``) or whose description names it is a
**parallel tool**, with whether the mapping between the two is total (a rename dressed as a new
tool); one string payload beside a kept tool is a **raw twin**
(docs/design.md#a-raw-twin-for-write-tools).
"""

from __future__ import annotations

import difflib
import functools
import heapq
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.evolution.model import Change
from mcp_matrix.evolution.schema import (
    compare_types,
    input_schema,
    is_raw_twin,
    param_types,
    params_similarity,
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
    return _score(similarity(input_schema(a), input_schema(b)), desc)


def _score(schemas: float, descriptions: float) -> float:
    """The one formula: with an upper bound of either part, an upper bound of the score."""
    return 0.7 * schemas + 0.3 * descriptions


def pair_tools(removed: list[str], added: list[str], old: Mapping, new: Mapping) -> dict[str, str]:
    """Removed tool -> the added tool it was renamed to, most alike pairs first.

    The pairs are those of sorting every (removed, added) pair by score (ties in list order) and
    taking each pair at or above the threshold whose two tools are both still free; but a score
    is computed only as far as it can still matter. Pairs that share no parameter name (unless
    neither has one) score at most 0.3 and are never met (an index by parameter name); the
    others wait in a heap under an upper bound of their score (difflib's length bound, then its
    ``quick_ratio``), refined only when they reach its top, and dropped unscored once one of
    their tools is taken or the bound falls below the threshold. A pair popped with its exact
    score beats every pair left, ties broken by list order as the sort does.
    """
    before = [_Shape.of(old[r]) for r in removed]
    after = [_Shape.of(new[a]) for a in added]
    texts = _Texts()
    heap = [
        (-bound, i, j, stage)
        for i, j, schemas in _sharing_a_name(before, after)
        for bound, stage in [_first_bound(schemas, before[i].text, after[j].text)]
        if bound >= _RENAME_THRESHOLD
    ]
    heapq.heapify(heap)
    out: dict[str, str] = {}
    taken: set[int] = set()
    while heap:
        _, i, j, stage = heapq.heappop(heap)
        if removed[i] in out or j in taken:
            continue
        if stage == _EXACT:
            out[removed[i]] = added[j]
            taken.add(j)
            continue
        a, b = before[i].text, after[j].text
        part = texts.quick(a, b) if stage == _LENGTHS else texts.ratio(a, b)
        score = _score(params_similarity(before[i].params, after[j].params), part)
        if score >= _RENAME_THRESHOLD:
            heapq.heappush(heap, (-score, i, j, _QUICK if stage == _LENGTHS else _EXACT))
    return out


_LENGTHS, _QUICK, _EXACT = 0, 1, 2  # what a heap entry's score is: two upper bounds, the score


@dataclass(frozen=True, slots=True)
class _Shape:
    """What the score reads of one tool, read once: its (name, type) parameters, description."""

    params: frozenset[tuple[str, str]]
    names: frozenset[str]
    text: str

    @classmethod
    def of(cls, tool: Any) -> _Shape:
        params = param_types(input_schema(tool))
        return cls(params, frozenset(k for k, _ in params), str(tool.get("description") or ""))


def _sharing_a_name(before: list[_Shape], after: list[_Shape]) -> Iterator[tuple[int, int, float]]:
    """(removed, added, schema similarity) for the pairs that share a parameter name or both
    have none: every other pair's schema similarity is 0.0 (schema.params_similarity)."""
    by_name: dict[str, list[int]] = {}
    bare: list[int] = []
    for j, shape in enumerate(after):
        for name in shape.names:
            by_name.setdefault(name, []).append(j)
        if not shape.names:
            bare.append(j)
    for i, shape in enumerate(before):
        found = {j for name in shape.names for j in by_name.get(name, ())}
        for j in sorted(found) if shape.names else bare:
            yield i, j, params_similarity(shape.params, after[j].params)


def _first_bound(schemas: float, a: str, b: str) -> tuple[float, int]:
    """The score exactly when a description is empty (text_similarity is 0.0), else its bound
    from the lengths (difflib's real_quick_ratio: matches cannot outnumber the shorter text)."""
    if not a or not b:
        return _score(schemas, 0.0), _EXACT
    return _score(schemas, 2.0 * min(len(a), len(b)) / (len(a) + len(b))), _LENGTHS


class _Texts:
    """difflib over description pairs: each added tool's text indexed once (``set_seq2``, as
    difflib advises for one text against many), each pair's ratios computed once."""

    def __init__(self) -> None:
        self._matchers: dict[str, difflib.SequenceMatcher[str]] = {}
        self._known: dict[tuple[str, str, bool], float] = {}

    def quick(self, a: str, b: str) -> float:
        return self._get(a, b, quick=True)

    def ratio(self, a: str, b: str) -> float:
        """``text_similarity(a, b)`` for two non-empty texts (the same SequenceMatcher ratio)."""
        return self._get(a, b, quick=False)

    def _get(self, a: str, b: str, quick: bool) -> float:
        known = self._known.get((a, b, quick))
        if known is None:
            matcher = self._matchers.get(b)
            if matcher is None:
                matcher = self._matchers[b] = difflib.SequenceMatcher(None, "", b)
            matcher.set_seq1(a)
            known = self._known[a, b, quick] = matcher.quick_ratio() if quick else matcher.ratio()
        return known


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
