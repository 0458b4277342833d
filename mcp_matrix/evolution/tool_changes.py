"""One tool's comparison as it is built: both input schemas and the ``Change`` list found so far.

The tool-level, parameter and output comparisons (``changes``, ``params``, ``values``,
``outputs``) all add to it, so every change gets its dotted parameter label and its probes
(representative calls against the old or the new schema) the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.evolution import examples as ex
from mcp_matrix.evolution.model import Change, Probe


def label(path: tuple[str, ...]) -> str:
    """A parameter's dotted path: ``fields.plan``, ``changes[].field``."""
    out = ""
    for seg in path:
        out += seg if seg == ex.ARRAY else (("." if out else "") + seg)
    return out


def same(a: JSON, b: JSON) -> bool:
    """Whether two JSON values are equal (key order aside)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@dataclass
class ToolChanges:
    """The comparison of one tool: both schemas and the changes found so far."""

    name: str
    old_schema: JSON
    new_schema: JSON
    out: list[Change] = field(default_factory=list)

    def add(
        self,
        kind: str,
        severity: str,
        message: str,
        ptr: str,
        path: tuple[str, ...] = (),
        old: JSON = None,
        new: JSON = None,
        probes: tuple[Probe, ...] = (),
        **detail: JSON,
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

    def new_call(self, path: tuple[str, ...], value: JSON, about: str) -> tuple[Probe, ...]:
        args = ex.with_value(self.new_schema, path, value)
        return (Probe("new", args, about),) if args is not None else ()


__all__ = ["ToolChanges", "label", "same"]
