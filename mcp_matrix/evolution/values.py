"""One schema node kept on both sides of a change: its type, enum, bounds, default and description.

A type that loses a value type, an enum value gone and a bound that tightens are what frozen
calls meet (each with a probe: a frozen call the new schema refuses); widening and new values
are safe. The node's properties and items are walked by ``params``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.evolution import examples as ex
from mcp_matrix.evolution.schema import (
    LOWER_BOUNDS,
    OTHER_CONSTRAINTS,
    UPPER_BOUNDS,
    compare_types,
    description,
    type_label,
    types,
)
from mcp_matrix.evolution.tool_changes import ToolChanges, label, same


def compare_node(
    t: ToolChanges, path: tuple[str, ...], ptr: str, a: Mapping, b: Mapping, quiet_description: bool
) -> None:
    """One schema node kept on both sides: its type, values, bounds, default and description
    (its properties and items are compared by ``params``)."""
    name = label(path)
    _type(t, path, ptr, a, b)
    _enum(t, path, ptr, a, b)
    _bounds(t, path, ptr, a, b)
    if ("default" in a or "default" in b) and not same(a.get("default"), b.get("default")):
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


def _type(t: ToolChanges, path: tuple[str, ...], ptr: str, a: Mapping, b: Mapping) -> None:
    """A type widened (safe), or narrowed or changed (breaking, probed with a value of a type gone)."""
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


def _enum(t: ToolChanges, path: tuple[str, ...], ptr: str, a: Mapping, b: Mapping) -> None:
    ea, eb = a.get("enum"), b.get("enum")
    name = label(path)
    if isinstance(ea, list) and isinstance(eb, list):
        gone = [v for v in ea if v not in eb]
        added = [v for v in eb if v not in ea]
        for values, kind, severity, words, old, new, call, about in (
            (gone, "enum-values-removed", "breaking", "no longer", gone, eb, t.old_call, "frozen"),
            (added, "enum-values-added", "safe", "now also", ea, added, t.new_call, "new"),
        ):
            if values:
                t.add(
                    kind,
                    severity,
                    f"{name} {words} accepts {_values(values)}",
                    f"{ptr}/enum",
                    path,
                    old=old,
                    new=new,
                    probes=call(
                        path, values[0], f"a {about} call that sends {name} = {values[0]!r}"
                    ),
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


def _bounds(t: ToolChanges, path: tuple[str, ...], ptr: str, a: Mapping, b: Mapping) -> None:
    tighter, looser = [], []
    for k in LOWER_BOUNDS + UPPER_BOUNDS:
        x, y = a.get(k), b.get(k)
        if same(x, y):
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
        if same(x, y) or (k == "uniqueItems" and not x and not y):
            continue
        (looser if y is None or y is False else tighter).append(k)
    name = label(path)
    for kind, severity, words, keys in (
        ("constraint-tightened", "risky", "stricter", tighter),
        ("constraint-loosened", "safe", "looser", looser),
    ):
        if keys:
            t.add(
                kind,
                severity,
                f"{name} is {words}: {', '.join(keys)}",
                f"{ptr}/{keys[0]}",
                path,
                old={k: a.get(k) for k in keys},
                new={k: b.get(k) for k in keys},
                keywords=keys,
            )


def _values(values: list[JSON]) -> str:
    return ", ".join(json.dumps(v) for v in values[:6]) + (" ..." if len(values) > 6 else "")


__all__ = ["compare_node"]
