"""A tool's ``outputSchema`` compared: what code reading ``structuredContent`` loses.

Input schemas are compared in ``params`` and ``values``; a result field removed, no longer
always present or retyped breaks callers that read the structured result, one added is safe.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import pointer
from mcp_matrix.evolution.schema import (
    compare_types,
    is_object,
    properties,
    required,
    type_label,
)
from mcp_matrix.evolution.tool_changes import ToolChanges, label, same


def compare_output(t: ToolChanges, a: Mapping, b: Mapping) -> None:
    """The tool's outputSchema: added, removed, or each result field removed, retyped or added."""
    oa, ob = a.get("outputSchema"), b.get("outputSchema")
    if same(oa, ob):
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


def _output_object(t: ToolChanges, path: tuple[str, ...], ptr: str, a: JSON, b: JSON) -> None:
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


__all__ = ["compare_output"]
