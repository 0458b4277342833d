"""The parameters of one object level of two input schemas: aliases, renames, removals, additions.

What it recognises, beyond added and removed:

- an **additive rename**: a parameter kept, now described as a deprecated alias of a new
  one ("Deprecated alias for account_id ... Do not use; pass account_id instead");
- an **in-place rename**: a parameter removed and one of the same type added in its place;
- a **retired alias**: a parameter that the old schema described as a deprecated alias of
  one that remains, now gone.

Each kept parameter is then compared node by node (``values``), its properties and items
walked here, level by level.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import pointer
from mcp_matrix.evolution import examples as ex
from mcp_matrix.evolution.schema import (
    Deprecation,
    additional_closed,
    deprecation,
    description,
    is_object,
    properties,
    required,
    text_similarity,
    type_label,
)
from mcp_matrix.evolution.tool_changes import ToolChanges, label, same
from mcp_matrix.evolution.values import compare_node


@dataclass
class _Level:
    """One object level being compared: both sides, and what an alias or rename has told already."""

    t: ToolChanges
    path: tuple[str, ...]
    ptr: str
    a: Mapping
    b: Mapping
    done_added: set[str] = field(default_factory=set)
    done_removed: set[str] = field(default_factory=set)
    quiet_desc: set[str] = field(default_factory=set)  # description changes told by an alias change
    quiet_req: set[str] = field(default_factory=set)  # required changes told by an alias change

    def __post_init__(self) -> None:
        self.pa, self.pb = properties(self.a), properties(self.b)
        self.ra, self.rb = required(self.a), required(self.b)
        self.dep_a = {k: d for k, v in self.pa.items() if (d := deprecation(k, v, self.pa))}
        self.dep_b = {k: d for k, v in self.pb.items() if (d := deprecation(k, v, self.pb))}
        self.removed = [k for k in self.pa if k not in self.pb]
        self.added = [k for k in self.pb if k not in self.pa]

    def at(self, k: str) -> tuple[str, ...]:
        return self.path + (k,)

    def where(self, k: str) -> str:
        return f"{self.ptr}/properties/{pointer(k)[1:]}"


def compare_object(t: ToolChanges, path: tuple[str, ...], ptr: str, a: Mapping, b: Mapping) -> None:
    """Parameters of one object level: aliases and renames first, then each kept parameter."""
    level = _Level(t, path, ptr, a, b)
    for k, d in level.dep_b.items():
        if k in level.pa:
            _deprecated(level, k, d)
    for k in level.removed:
        _retired_alias(level, k)
    _renamed_in_place(level)
    for k in level.removed:
        if k not in level.done_removed:
            t.add(
                "param-removed",
                "breaking",
                f"parameter {label(level.at(k))} is removed",
                level.where(k),
                level.at(k),
                old=level.pa[k],
                probes=t.old_call(
                    level.at(k), ex.sample(level.pa[k]), f"a frozen call that sends {k}"
                ),
                refused=additional_closed(b),
            )
    for k in level.added:
        if k not in level.done_added:
            _added(t, level.at(k), level.where(k), level.pb[k], k in level.rb)
    for k in level.pa:
        if k not in level.pb:
            continue
        compare_kept(
            t, level.at(k), level.where(k), level.pa[k], level.pb[k], k in level.quiet_desc
        )
        if k not in level.quiet_req:
            _required_change(t, level.at(k), level.where(k), k in level.ra, k in level.rb)
    _openness(t, path, ptr, a, b)


def compare_kept(
    t: ToolChanges,
    path: tuple[str, ...],
    ptr: str,
    a: JSON,
    b: JSON,
    quiet_description: bool = False,
) -> None:
    """One parameter kept on both sides (or the items of an array), and what is below it."""
    if not isinstance(a, Mapping) or not isinstance(b, Mapping) or same(a, b):
        return
    compare_node(t, path, ptr, a, b, quiet_description)
    if is_object(a) and is_object(b):
        compare_object(t, path, ptr, a, b)
    items_a, items_b = a.get("items"), b.get("items")
    if isinstance(items_a, Mapping) and isinstance(items_b, Mapping):
        compare_kept(t, path + (ex.ARRAY,), f"{ptr}/items", items_a, items_b)


def _deprecated(level: _Level, k: str, d: Deprecation) -> None:
    """A kept parameter the new schema describes as deprecated: an additive rename when its
    target is new, else a deprecation; and whether its description steers the model."""
    t, pa, pb, rb = level.t, level.pa, level.pb, level.rb
    text = description(pb[k])
    if k not in level.dep_a and d.target in level.added:
        target = d.target
        t.add(
            "alias-added",
            "safe",
            f"{label(level.at(k))} is kept as a deprecated alias of the new {label(level.at(target))} "
            "(an additive rename)",
            level.where(k),
            level.at(k),
            old=description(pa[k]),
            new=text,
            probes=t.old_call(level.at(k), ex.sample(pa[k]), f"a frozen call that sends {k}")
            + t.new_call(
                level.at(target), ex.sample(pb[target]), f"a new call that sends {target}"
            ),
            alias=k,
            of=target,
            steers=d.steers,
            neither_required=k not in rb and target not in rb,
            alias_required=k in rb,
            of_required=target in rb,
        )
        level.done_added.add(target)
        level.quiet_desc.add(k)
        level.quiet_req.add(k)
    elif k not in level.dep_a:
        t.add(
            "param-deprecated",
            "safe",
            f"{label(level.at(k))} is now described as deprecated"
            + (f" in favour of {d.target}" if d.target else ""),
            level.where(k),
            level.at(k),
            old=description(pa[k]),
            new=text,
            alias=k,
            of=d.target,
            steers=d.steers,
        )
        level.quiet_desc.add(k)
    elif description(pa[k]) == text:
        return
    if not d.steers:
        t.add(
            "alias-not-steering",
            "risky",
            f"the deprecated {label(level.at(k))}'s description does not tell the model what to do "
            "instead" + (f" (pass {d.target})" if d.target else ""),
            level.where(k) + "/description",
            level.at(k),
            old=description(pa[k]),
            new=text,
            alias=k,
            of=d.target,
        )
        level.quiet_desc.add(k)


def _retired_alias(level: _Level, k: str) -> None:
    """A removed parameter the old schema described as a deprecated alias of one that remains."""
    d = level.dep_a.get(k)
    if not d or d.target not in level.pb:
        return
    target = d.target
    now_required = target in level.rb and target not in level.ra
    level.t.add(
        "alias-removed",
        "breaking",
        f"the deprecated alias {label(level.at(k))} of {label(level.at(target))} is retired"
        + (f", and {target} is now required" if now_required else ""),
        level.where(k),
        level.at(k),
        old=level.pa[k],
        probes=level.t.old_call(
            level.at(k), ex.sample(level.pa[k]), f"a frozen call that still sends {k}"
        ),
        alias=k,
        of=target,
        target_now_required=now_required,
        refused=additional_closed(level.b),
    )
    level.done_removed.add(k)
    if now_required:
        level.quiet_req.add(target)


def _renamed_in_place(level: _Level) -> None:
    """Removed and added parameters of the same type paired as renames with no alias."""
    left_removed = [k for k in level.removed if k not in level.done_removed]
    left_added = [k for k in level.added if k not in level.done_added]
    pa, pb, rb = level.pa, level.pb, level.rb
    for r, x in _pair_params(left_removed, left_added, pa, pb, level.ra, rb):
        level.t.add(
            "param-renamed",
            "breaking",
            f"{label(level.at(r))} is renamed to {label(level.at(x))} in place: no alias keeps the old name",
            level.where(r),
            level.at(r),
            old=r,
            new=x,
            probes=level.t.old_call(level.at(r), ex.sample(pa[r]), f"a frozen call that sends {r}"),
            to=x,
            type=type_label(pb[x]),
            to_required=x in rb,
            refused=additional_closed(level.b),
        )
        level.done_removed.add(r)
        level.done_added.add(x)


def _added(t: ToolChanges, path: tuple[str, ...], where: str, schema: JSON, required: bool) -> None:
    """One parameter new in this version: breaking when required, risky when optional."""
    k = path[-1]
    if required:
        t.add(
            "param-added-required",
            "breaking",
            f"required parameter {label(path)} is added",
            where,
            path,
            new=schema,
            probes=t.old_call_without(path, f"a frozen call, made before {k} existed"),
        )
    else:
        t.add(
            "param-added-optional",
            "risky",
            f"optional parameter {label(path)} is added",
            where,
            path,
            new=schema,
            probes=t.new_call(path, ex.sample(schema), f"a new call that sends {k}"),
        )


def _required_change(
    t: ToolChanges, path: tuple[str, ...], where: str, was_required: bool, is_required: bool
) -> None:
    """A kept parameter that becomes required (breaking) or stops being required (safe)."""
    if is_required and not was_required:
        t.add(
            "required-added",
            "breaking",
            f"{label(path)} is now required",
            where,
            path,
            probes=t.old_call_without(path, f"a frozen call that leaves out {path[-1]}"),
        )
    elif was_required and not is_required:
        t.add("required-removed", "safe", f"{label(path)} is no longer required", where, path)


def _openness(t: ToolChanges, path: tuple[str, ...], ptr: str, a: Mapping, b: Mapping) -> None:
    """An object level that starts or stops refusing keys outside its properties."""
    if not additional_closed(a) and additional_closed(b):
        t.add(
            "additional-properties-tightened",
            "risky",
            f"{'the input' if not path else label(path)} now refuses keys outside its properties "
            "(additionalProperties: false)",
            f"{ptr}/additionalProperties",
            path,
            old=a.get("additionalProperties"),
            new=False,
        )
    elif additional_closed(a) and not additional_closed(b):
        t.add(
            "additional-properties-loosened",
            "risky",
            f"{'the input' if not path else label(path)} no longer refuses unknown keys: a misspelled or "
            "retired argument is now ignored silently",
            f"{ptr}/additionalProperties",
            path,
            old=False,
            new=b.get("additionalProperties"),
        )


def _pair_params(
    removed: list[str], added: list[str], pa: Mapping, pb: Mapping, ra: set[str], rb: set[str]
) -> list[tuple[str, str]]:
    """Pair a removed and an added parameter of the same type as an in-place rename."""
    scored = []
    for r in removed:
        for x in added:
            if type_label(pa[r]) != type_label(pb[x]):
                continue
            score = 1.0 + 0.5 * ((r in ra) == (x in rb))
            score += 0.5 * text_similarity(description(pa[r]), description(pb[x]))
            score += 0.2 * text_similarity(r, x)
            scored.append((score, r, x))
    out: list[tuple[str, str]] = []
    used_r: set[str] = set()
    used_x: set[str] = set()
    for _, r, x in sorted(scored, key=lambda s: -s[0]):
        if r not in used_r and x not in used_x:
            out.append((r, x))
            used_r.add(r)
            used_x.add(x)
    return sorted(out, key=lambda p: removed.index(p[0]))


__all__ = ["compare_kept", "compare_object"]
