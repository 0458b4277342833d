"""Caps on what one tool schema can make us compute: the number of values of an ``enum``.

A server is untrusted input (docs/security.md). A one-million-value ``enum`` (about 10 MB of
JSON, well under the wire's 32 MiB message cap) cost 12.8 GB of memory and 11 minutes in
``run``: fastjsonschema compiles every value into generated Python source, about 7 GB for
one schema. An enum longer than ``MAX_ENUM_VALUES`` is never compiled or checked here: the
validator leaves it out and says so on the call (``unchecked``), as for a pattern over its
time budget, and discovery reports an ``enum-over-cap`` finding on the tool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from mcp_matrix.behaviours.rewrite import mentions
from mcp_matrix.core.evidence import Evidence
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding
from mcp_matrix.core.tools import unescape

MAX_ENUM_VALUES = (
    10_000  # per enum; real tool schemas list tens, OpenAI strict mode allows 1,000 in all
)
_WALK_NODES = 200_000  # containers looked at per schema; past that the rest is not searched

EVIDENCE = (
    Evidence(
        "assumed",
        "docs/security.md",
        "no client source or calibration covers an enum this long; the model request size is an estimate",
        checked="2026-12-01",  # when the entry was written; no source to re-check
    ),
)


@dataclass(frozen=True)
class LongEnum:
    """One ``enum`` over the cap: where it is and how many values it has."""

    pointer: str
    values: int
    json_bytes: int


def long_enums(schema: JSON, cap: int = MAX_ENUM_VALUES, limit: int = 20) -> list[LongEnum]:
    """The enums of ``schema`` with more than ``cap`` values (at most ``limit``), iteratively."""
    out: list[LongEnum] = []
    if not isinstance(schema, (dict, list)) or not mentions(schema, "enum"):
        return out  # the usual case, read off the memoised canonical text
    stack: list[tuple[JSON, str]] = [(schema, "")]
    seen = 0
    while stack and len(out) < limit and seen < _WALK_NODES:
        node, at = stack.pop()
        seen += 1
        if isinstance(node, dict):
            values = node.get("enum")
            if isinstance(values, list) and len(values) > cap:
                out.append(LongEnum(at + "/enum", len(values), _json_size(values)))
            for key, child in node.items():
                if key != "enum" and isinstance(child, (dict, list)):
                    stack.append((child, f"{at}/{str(key).replace('~', '~0').replace('/', '~1')}"))
        elif isinstance(node, list):
            stack.extend(
                (child, f"{at}/{i}")
                for i, child in enumerate(node)
                if isinstance(child, (dict, list))
            )
    return out


def _json_size(values: list) -> int:
    try:
        return len(json.dumps(values, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return 0


def without_long_enums(schema: JSON, cap: int = MAX_ENUM_VALUES) -> tuple[JSON, tuple[str, ...]]:
    """``schema`` with every enum over ``cap`` left out (copy-on-write), and a note for each.

    What the validator compiles: such an enum is not checked, rather than compiled into
    gigabytes of code."""
    found = long_enums(schema, cap)
    if not found:
        return schema, ()
    copy = json.loads(
        json.dumps(schema)
    )  # the schema came from JSON; only these rare ones are copied
    for item in found:
        node = copy
        for token in item.pointer.split("/")[1:-1]:
            token = unescape(token)
            node = node[int(token)] if isinstance(node, list) else node[token]
        node.pop("enum", None)
    notes = tuple(
        f"the enum at {item.pointer} has {item.values:,} values, over the {cap:,} cap "
        "(docs/security.md); it was not checked"
        for item in found
    )
    return copy, notes


def enum_findings(tool: JSON) -> tuple[Finding, ...]:
    """One finding per schema of ``tool`` with an enum over the cap.

    What a real client then sees is assumed (no evidence covers it): it sends the whole
    schema to the model with every request, which at this size likely leaves no room in a
    model's context window. ``lost`` is False: the finding is about size, and every value
    still reaches the client."""
    if not isinstance(tool, dict):
        return ()
    out = []
    for key in ("inputSchema", "outputSchema"):
        found = long_enums(tool.get(key))
        if not found:
            continue
        first = found[0]
        more = f" and {len(found) - 1} more such enum(s)" if len(found) > 1 else ""
        out.append(
            Finding(
                code="enum-over-cap",
                message=(
                    f"{key} has an enum of {first.values:,} values at {first.pointer}{more}, over "
                    f"mcp-matrix's {MAX_ENUM_VALUES:,}-value cap (docs/security.md), so it is not checked "
                    f"here; a real client sends all of it ({first.json_bytes / 1e6:.1f} MB of JSON, "
                    f"roughly {first.json_bytes // 4:,} tokens) to the model with every request, "
                    "likely more than the model's context window (assumed)"
                ),
                pointer=f"/{key}{first.pointer}",
                lost=False,
                behaviour="enum-cap",
                evidence=EVIDENCE,
            )
        )
    return tuple(out)
