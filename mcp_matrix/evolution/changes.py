"""Compare two tool lists schema by schema: one ``Change`` per difference, with its base severity.

This stage looks only at the JSON the two servers sent. The clients' view of each change
(discovery, caches, call behaviours) and the frozen callers' fate are added afterwards by
``mcp_matrix.evolution.effects``; they can only make a severity worse.

What it recognises, beyond added/removed/changed:

- an **additive rename**: a parameter kept, now described as a deprecated alias of a new
  one ("Deprecated alias for account_id ... Do not use; pass account_id instead");
- an **in-place rename**: a parameter removed and one of the same type added in its place;
- a **retired alias**: a parameter that the old schema described as a deprecated alias of
  one that remains, now gone;
- a **tool rename** (a removed and an added tool with alike schemas), a **parallel tool**
  (``update_account_v2`` beside ``update_account``, with whether the mapping between them is
  total) and a **raw twin** (one string payload, docs/design.md#a-raw-twin-for-write-tools).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.core.tools import tools_by_name
from mcp_matrix.evolution import examples as ex
from mcp_matrix.evolution.model import Change, Probe
from mcp_matrix.evolution.schema import (
    LOWER_BOUNDS,
    OTHER_CONSTRAINTS,
    UPPER_BOUNDS,
    additional_closed,
    compare_types,
    deprecation,
    description,
    input_schema,
    is_object,
    is_raw_twin,
    pointer,
    properties,
    required,
    root_combinators,
    similarity,
    text_similarity,
    type_label,
    types,
)

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_PARALLEL_SUFFIX = re.compile(r"^[_-]?(v\d+|new|next|\d+)$", re.IGNORECASE)
_RENAME_THRESHOLD = 0.6


def label(path: tuple[str, ...]) -> str:
    """A parameter's dotted path: ``fields.plan``, ``changes[].field``."""
    out = ""
    for seg in path:
        out += seg if seg == ex.ARRAY else (("." if out else "") + seg)
    return out


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@dataclass
class _Tool:
    """The comparison of one tool: both schemas and the changes found so far."""

    name: str
    old_schema: Any
    new_schema: Any
    out: list[Change] = field(default_factory=list)

    def add(
        self,
        kind: str,
        severity: str,
        message: str,
        ptr: str,
        path: tuple[str, ...] = (),
        old: Any = None,
        new: Any = None,
        probes: tuple[Probe, ...] = (),
        **detail: Any,
    ) -> None:
        self.out.append(
            Change(
                kind=kind,
                tool=self.name,
                message=message,
                severity=severity,
                pointer=ptr,
                param=label(path) or None,
                old=old,
                new=new,
                detail=detail,
                probes=probes,
            )
        )

    def old_call(self, path: tuple[str, ...], value: Any, about: str) -> tuple[Probe, ...]:
        args = ex.with_value(self.old_schema, path, value)
        return (Probe("old", args, about),) if args is not None else ()

    def old_call_without(self, path: tuple[str, ...], about: str) -> tuple[Probe, ...]:
        args = ex.without(self.old_schema, path)
        return (Probe("old", args, about),) if args is not None else ()

    def new_call(self, path: tuple[str, ...], value: Any, about: str) -> tuple[Probe, ...]:
        args = ex.with_value(self.new_schema, path, value)
        return (Probe("new", args, about),) if args is not None else ()


# -- the tool list ------------------------------------------------------------------------------


def compare_lists(old_tools: list[Any], new_tools: list[Any]) -> list[Change]:
    """Every change between two tool lists (as the servers sent them), old list order first."""
    old = tools_by_name(old_tools)
    new = tools_by_name(new_tools)
    removed = [n for n in old if n not in new]
    added = [n for n in new if n not in old]
    renamed = _pair_tools(removed, added, old, new)
    out: list[Change] = []
    for name in new:
        if name in old:
            out += compare_tool(name, old[name], new[name])
    for name in removed:
        if name in renamed:
            to = renamed[name]
            out.append(
                Change(
                    kind="tool-renamed",
                    tool=name,
                    severity="breaking",
                    pointer="",
                    message=f"tool {name} is gone and {to} looks like it under a new name (a rename in place)",
                    old=name,
                    new=to,
                    detail={"to": to, "similarity": round(_tool_similarity(old[name], new[to]), 2)},
                )
            )
        else:
            out.append(
                Change(
                    kind="tool-removed",
                    tool=name,
                    severity="breaking",
                    pointer="",
                    message=f"tool {name} is removed",
                    old=name,
                )
            )
    taken = set(renamed.values())
    for name in added:
        if name not in taken:
            out.append(_added_tool(name, new[name], old, new))
    return out


def _tool_similarity(a: Any, b: Any) -> float:
    desc = text_similarity(str(a.get("description") or ""), str(b.get("description") or ""))
    return 0.7 * similarity(input_schema(a), input_schema(b)) + 0.3 * desc


def _pair_tools(removed: list[str], added: list[str], old: Mapping, new: Mapping) -> dict[str, str]:
    scored = sorted(
        ((_tool_similarity(old[r], new[a]), r, a) for r in removed for a in added),
        key=lambda t: -t[0],
    )
    out: dict[str, str] = {}
    for score, r, a in scored:
        if score >= _RENAME_THRESHOLD and r not in out and a not in out.values():
            out[r] = a
    return out


def _added_tool(name: str, tool: Any, old: Mapping, new: Mapping) -> Change:
    kept = [o for o in old if o in new]
    if is_raw_twin(tool):
        twin_of = next(
            (o for o in kept if _names_relate(o, name, tool) and not is_raw_twin(new[o])), None
        )
        if twin_of:
            return Change(
                kind="raw-twin-added",
                tool=name,
                severity="safe",
                pointer="",
                new=name,
                message=f"raw twin {name} added for {twin_of}: one JSON payload string, immune to schema evolution",
                detail={"twin_of": twin_of},
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
        return Change(
            kind="tool-added",
            tool=name,
            severity="safe",
            pointer="",
            new=name,
            message=f"tool {name} is added",
            detail={"raw_twin": is_raw_twin(tool)},
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
    return Change(
        kind="tool-parallel",
        tool=name,
        severity="risky" if total else "safe",
        pointer="",
        new=name,
        message=message,
        detail={"parallel_to": base, "total": total, "mapping": mapping, "not_mapped": reasons},
    )


def _names_relate(existing: str, added: str, tool: Any) -> bool:
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


# -- one tool -----------------------------------------------------------------------------------


def compare_tool(name: str, a: Any, b: Any) -> list[Change]:
    sa, sb = input_schema(a), input_schema(b)
    t = _Tool(name, sa, sb)
    _root(t, sa, sb)
    if isinstance(sa, Mapping) and isinstance(sb, Mapping):
        _object(t, (), "/inputSchema", sa, sb)
    if not _same(sa, sb) and not any(c.pointer.startswith("/inputSchema") for c in t.out):
        t.add("schema-changed", "risky", "the input schema changed", "/inputSchema", old=sa, new=sb)
    _texts(t, a, b)
    _annotations(t, a, b)
    _output(t, a, b)
    return t.out


def _root(t: _Tool, sa: Any, sb: Any) -> None:
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
        elif not _same(sa[k], sb[k]):
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


def _object(t: _Tool, path: tuple[str, ...], ptr: str, a: Mapping, b: Mapping) -> None:
    """Parameters of one object level: aliases and renames first, then each kept parameter."""
    pa, pb = properties(a), properties(b)
    ra, rb = required(a), required(b)
    dep_a = {k: d for k, v in pa.items() if (d := deprecation(k, v, pa))}
    dep_b = {k: d for k, v in pb.items() if (d := deprecation(k, v, pb))}
    removed = [k for k in pa if k not in pb]
    added = [k for k in pb if k not in pa]
    done_added: set[str] = set()
    done_removed: set[str] = set()
    quiet_desc: set[str] = set()  # description changes already told by an alias change
    quiet_req: set[str] = set()  # required changes already told by an alias change

    def where(k: str) -> str:
        return f"{ptr}/properties/{pointer(k)[1:]}"

    for k, d in dep_b.items():
        if k not in pa:
            continue
        text = description(pb[k])
        if k not in dep_a and d.target in added:
            target = d.target
            neither = k not in rb and target not in rb
            t.add(
                "alias-added",
                "safe",
                f"{label(path + (k,))} is kept as a deprecated alias of the new {label(path + (target,))} "
                "(an additive rename)",
                where(k),
                path + (k,),
                old=description(pa[k]),
                new=text,
                probes=t.old_call(path + (k,), ex.sample(pa[k]), f"a frozen call that sends {k}")
                + t.new_call(
                    path + (target,), ex.sample(pb[target]), f"a new call that sends {target}"
                ),
                alias=k,
                of=target,
                steers=d.steers,
                neither_required=neither,
                alias_required=k in rb,
                of_required=target in rb,
            )
            done_added.add(target)
            quiet_desc.add(k)
            quiet_req.add(k)
        elif k not in dep_a:
            t.add(
                "param-deprecated",
                "safe",
                f"{label(path + (k,))} is now described as deprecated"
                + (f" in favour of {d.target}" if d.target else ""),
                where(k),
                path + (k,),
                old=description(pa[k]),
                new=text,
                alias=k,
                of=d.target,
                steers=d.steers,
            )
            quiet_desc.add(k)
        elif description(pa[k]) == text:
            continue
        if not d.steers:
            t.add(
                "alias-not-steering",
                "risky",
                f"the deprecated {label(path + (k,))}'s description does not tell the model what to do "
                "instead" + (f" (pass {d.target})" if d.target else ""),
                where(k) + "/description",
                path + (k,),
                old=description(pa[k]),
                new=text,
                alias=k,
                of=d.target,
            )
            quiet_desc.add(k)

    for k in removed:
        d = dep_a.get(k)
        if d and d.target in pb:
            target = d.target
            now_required = target in rb and target not in ra
            t.add(
                "alias-removed",
                "breaking",
                f"the deprecated alias {label(path + (k,))} of {label(path + (target,))} is retired"
                + (f", and {target} is now required" if now_required else ""),
                where(k),
                path + (k,),
                old=pa[k],
                probes=t.old_call(
                    path + (k,), ex.sample(pa[k]), f"a frozen call that still sends {k}"
                ),
                alias=k,
                of=target,
                target_now_required=now_required,
                refused=additional_closed(b),
            )
            done_removed.add(k)
            if now_required:
                quiet_req.add(target)

    left_removed = [k for k in removed if k not in done_removed]
    left_added = [k for k in added if k not in done_added]
    for r, x in _pair_params(left_removed, left_added, pa, pb, ra, rb):
        t.add(
            "param-renamed",
            "breaking",
            f"{label(path + (r,))} is renamed to {label(path + (x,))} in place: no alias keeps the old name",
            where(r),
            path + (r,),
            old=r,
            new=x,
            probes=t.old_call(path + (r,), ex.sample(pa[r]), f"a frozen call that sends {r}"),
            to=x,
            type=type_label(pb[x]),
            to_required=x in rb,
            refused=additional_closed(b),
        )
        done_removed.add(r)
        done_added.add(x)
    for k in removed:
        if k not in done_removed:
            t.add(
                "param-removed",
                "breaking",
                f"parameter {label(path + (k,))} is removed",
                where(k),
                path + (k,),
                old=pa[k],
                probes=t.old_call(path + (k,), ex.sample(pa[k]), f"a frozen call that sends {k}"),
                refused=additional_closed(b),
            )
    for k in added:
        if k not in done_added:
            _added(t, path + (k,), where(k), pb[k], k in rb)

    for k in pa:
        if k not in pb:
            continue
        _value(t, path + (k,), where(k), pa[k], pb[k], quiet_description=k in quiet_desc)
        if k not in quiet_req:
            _required_change(t, path + (k,), where(k), k in ra, k in rb)

    _openness(t, path, ptr, a, b)


def _added(t: _Tool, path: tuple[str, ...], where: str, schema: Any, required: bool) -> None:
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
    t: _Tool, path: tuple[str, ...], where: str, was_required: bool, is_required: bool
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


def _openness(t: _Tool, path: tuple[str, ...], ptr: str, a: Mapping, b: Mapping) -> None:
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


def _value(
    t: _Tool, path: tuple[str, ...], ptr: str, a: Any, b: Any, quiet_description: bool = False
) -> None:
    """One parameter kept on both sides (or the items of an array): its type, values, bounds."""
    if not isinstance(a, Mapping) or not isinstance(b, Mapping) or _same(a, b):
        return
    name = label(path)
    how = compare_types(a, b)
    if how != "same":
        old_t, new_t = type_label(a), type_label(b)
        if how == "widened":
            t.add(
                "type-widened",
                "safe",
                f"{name} now accepts {new_t} (was {old_t})",
                f"{ptr}/type",
                path,
                old=old_t,
                new=new_t,
            )
        else:
            gone = sorted((types(a) or frozenset()) - (types(b) or frozenset()))
            value = ex.value_of_type(a, gone[0]) if gone else ex.example(a)
            kind = "type-narrowed" if how == "narrowed" else "type-changed"
            verb = "accepts only" if how == "narrowed" else "is now"
            t.add(
                kind,
                "breaking",
                f"{name} {verb} {new_t} (was {old_t})",
                f"{ptr}/type",
                path,
                old=old_t,
                new=new_t,
                probes=t.old_call(
                    path, value, f"a frozen call that sends {name} as {gone[0] if gone else old_t}"
                ),
            )
    _enum(t, path, ptr, a, b)
    _bounds(t, path, ptr, a, b)
    if ("default" in a or "default" in b) and not _same(a.get("default"), b.get("default")):
        t.add(
            "default-changed",
            "risky",
            f"{name}'s default changed: callers that leave it out get another value",
            f"{ptr}/default",
            path,
            old=a.get("default"),
            new=b.get("default"),
        )
    if not quiet_description and description(a) != description(b):
        t.add(
            "description-changed",
            "safe",
            f"{name}'s description changed",
            f"{ptr}/description",
            path,
            old=description(a),
            new=description(b),
        )
    if is_object(a) and is_object(b):
        _object(t, path, ptr, a, b)
    items_a, items_b = a.get("items"), b.get("items")
    if isinstance(items_a, Mapping) and isinstance(items_b, Mapping):
        _value(t, path + (ex.ARRAY,), f"{ptr}/items", items_a, items_b)


def _enum(t: _Tool, path: tuple[str, ...], ptr: str, a: Mapping, b: Mapping) -> None:
    ea, eb = a.get("enum"), b.get("enum")
    name = label(path)
    if isinstance(ea, list) and isinstance(eb, list):
        gone = [v for v in ea if v not in eb]
        new = [v for v in eb if v not in ea]
        if gone:
            t.add(
                "enum-values-removed",
                "breaking",
                f"{name} no longer accepts {_values(gone)}",
                f"{ptr}/enum",
                path,
                old=gone,
                new=eb,
                probes=t.old_call(path, gone[0], f"a frozen call that sends {name} = {gone[0]!r}"),
            )
        if new:
            t.add(
                "enum-values-added",
                "safe",
                f"{name} now also accepts {_values(new)}",
                f"{ptr}/enum",
                path,
                old=ea,
                new=new,
                probes=t.new_call(path, new[0], f"a new call that sends {name} = {new[0]!r}"),
            )
    elif isinstance(eb, list):
        outside = ex.example({k: v for k, v in a.items() if k != "enum"}) if types(a) else None
        probes = (
            t.old_call(path, outside, f"a frozen call with a {name} outside the new enum")
            if outside is not None and outside not in eb
            else ()
        )
        t.add(
            "constraint-tightened",
            "risky",
            f"{name} is now limited to {_values(eb)}",
            f"{ptr}/enum",
            path,
            new=eb,
            probes=probes,
            keywords=["enum"],
        )
    elif isinstance(ea, list):
        t.add(
            "constraint-loosened",
            "safe",
            f"{name} is no longer limited to a list of values",
            f"{ptr}/enum",
            path,
            old=ea,
            keywords=["enum"],
        )


def _bounds(t: _Tool, path: tuple[str, ...], ptr: str, a: Mapping, b: Mapping) -> None:
    tighter, looser = [], []
    for k in LOWER_BOUNDS + UPPER_BOUNDS:
        x, y = a.get(k), b.get(k)
        if _same(x, y):
            continue
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y))
        if x is None:
            tighter.append(k)
        elif y is None:
            looser.append(k)
        elif numeric and ((k in LOWER_BOUNDS) == (y > x)):
            tighter.append(k)
        else:
            looser.append(k)
    for k in OTHER_CONSTRAINTS:
        x, y = a.get(k), b.get(k)
        if _same(x, y) or (k == "uniqueItems" and not x and not y):
            continue
        (looser if y is None or y is False else tighter).append(k)
    name = label(path)
    if tighter:
        t.add(
            "constraint-tightened",
            "risky",
            f"{name} is stricter: {', '.join(tighter)}",
            f"{ptr}/{tighter[0]}",
            path,
            old={k: a.get(k) for k in tighter},
            new={k: b.get(k) for k in tighter},
            keywords=tighter,
        )
    if looser:
        t.add(
            "constraint-loosened",
            "safe",
            f"{name} is looser: {', '.join(looser)}",
            f"{ptr}/{looser[0]}",
            path,
            old={k: a.get(k) for k in looser},
            new={k: b.get(k) for k in looser},
            keywords=looser,
        )


def _values(values: list[Any]) -> str:
    return ", ".join(json.dumps(v) for v in values[:6]) + (" ..." if len(values) > 6 else "")


# -- texts, hints, results ----------------------------------------------------------------------


def _texts(t: _Tool, a: Mapping, b: Mapping) -> None:
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


def _annotations(t: _Tool, a: Mapping, b: Mapping) -> None:
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


def _hint_change(hint: str, old: Any, new: Any) -> tuple[str, str]:
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


def _output(t: _Tool, a: Mapping, b: Mapping) -> None:
    oa, ob = a.get("outputSchema"), b.get("outputSchema")
    if _same(oa, ob):
        return
    if oa is None:
        t.add(
            "output-schema-added",
            "risky",
            "an outputSchema is added: every successful result must carry "
            "matching structuredContent",
            "/outputSchema",
            new=ob,
        )
        return
    if ob is None:
        t.add(
            "output-schema-removed", "risky", "the outputSchema is removed", "/outputSchema", old=oa
        )
        return
    before = len(t.out)
    _output_object(t, (), "/outputSchema", oa, ob)
    if len(t.out) == before:
        t.add(
            "output-schema-changed",
            "risky",
            "the outputSchema changed",
            "/outputSchema",
            old=oa,
            new=ob,
        )


def _output_object(t: _Tool, path: tuple[str, ...], ptr: str, a: Any, b: Any) -> None:
    pa, pb = properties(a), properties(b)
    ra, rb = required(a), required(b)
    for k in pa:
        here = f"{ptr}/properties/{pointer(k)[1:]}"
        name = "result." + label(path + (k,))
        if k not in pb:
            t.add(
                "output-field-removed",
                "breaking",
                f"{name} is no longer in the result",
                here,
                old=pa[k],
                field=name,
            )
        elif k in ra and k not in rb:
            t.add(
                "output-field-removed",
                "breaking",
                f"{name} is no longer always in the result",
                here,
                field=name,
                optional=True,
            )
        elif compare_types(pa[k], pb[k]) not in ("same", "narrowed"):
            t.add(
                "output-field-retyped",
                "breaking",
                f"{name} is now {type_label(pb[k])} (was {type_label(pa[k])})",
                here,
                old=type_label(pa[k]),
                new=type_label(pb[k]),
                field=name,
            )
        elif is_object(pa[k]) and is_object(pb[k]):
            _output_object(t, path + (k,), here, pa[k], pb[k])
    for k in pb:
        if k not in pa:
            name = "result." + label(path + (k,))
            t.add(
                "output-field-added",
                "safe",
                f"{name} is added to the result",
                f"{ptr}/properties/{pointer(k)[1:]}",
                new=pb[k],
                field=name,
            )


__all__ = ["compare_lists", "compare_tool", "label", "mapping_between"]
