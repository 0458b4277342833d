"""Per-tool schema rewrites: the shared mechanism under most discovery behaviours.

A rewrite is a pure function ``fn(schema, **params) -> Outcome`` on one tool's input schema.
``schema_rewrite`` turns it into a discovery behaviour that maps it over the visible tools,
memoised by (behaviour, params, schema fingerprint): the cost grows with the number of
distinct schemas, not with profiles x tools. Losses (keys removed or values changed) are
found by diffing the schema before and after, so every rewrite reports what the model no
longer sees, as JSON pointers, without each behaviour writing its own bookkeeping.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from matrix.behaviours.registry import behaviour, freeze
from matrix.model import Finding, ListState

MISSING = object()


@dataclass(frozen=True)
class Outcome:
    """What a rewrite did to one schema.

    - ``schema``: the rewritten schema (may be the same object when nothing changed);
    - ``drop``: hide this tool, with the reason;
    - ``fail``: the whole list fails: ``("server-dropped" | "session-broken", finding)``;
    - ``findings``: extra notes (e.g. "array without items given items: string").
    """

    schema: Any = MISSING
    drop: Finding | None = None
    fail: tuple[str, Finding] | None = None
    findings: tuple[Finding, ...] = ()


_FINGERPRINTS: dict[int, tuple[Any, str]] = {}
_MEMO: dict[tuple[str, str, str], tuple[Outcome, tuple[Finding, ...]]] = {}


def fingerprint(schema: Any) -> str:
    """A canonical JSON text of ``schema``, memoised by object identity."""
    hit = _FINGERPRINTS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    try:
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (ValueError, RecursionError, TypeError):  # cycles or absurd depth: never equal to another
        text = f"<unserialisable {id(schema)}>"
    _FINGERPRINTS[id(schema)] = (schema, text)
    return text


def clear_memo() -> None:
    _FINGERPRINTS.clear()
    _MEMO.clear()


def losses(before: Any, after: Any, pointer: str = "", limit: int = 50) -> list[tuple[str, str]]:
    """JSON pointers where ``after`` lost or changed what ``before`` said.

    Returns ``(pointer, "removed" | "changed")`` pairs; additions are not losses. Walks
    iteratively (schemas can be thousands of levels deep) and stops after ``limit`` items.
    """
    out: list[tuple[str, str]] = []
    stack = [(before, after, pointer)]
    while stack and len(out) < limit:
        b, a, ptr = stack.pop()
        if b is a:
            continue
        if isinstance(b, dict) and isinstance(a, dict):
            for key in sorted(b, reverse=True):
                sub = f"{ptr}/{escape(str(key))}"
                if key not in a:
                    out.append((sub, "removed"))
                else:
                    stack.append((b[key], a[key], sub))
        elif isinstance(b, list) and isinstance(a, list) and len(b) == len(a):
            for i in reversed(range(len(b))):
                stack.append((b[i], a[i], f"{ptr}/{i}"))
        elif b != a:
            out.append((ptr or "/", "changed"))
    return out


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def schema_rewrite(
    name: str,
    params: Mapping[str, Any] | None = None,
    required: tuple[str, ...] = (),
    report_losses: bool = True,
) -> Callable[[Callable[..., Outcome]], Callable[..., ListState]]:
    """Register a per-schema rewrite as a discovery behaviour (see module docstring)."""

    def wrap(fn: Callable[..., Outcome]) -> Callable[..., ListState]:
        def apply(state: ListState, **kwargs: Any) -> ListState:
            if state.outcome != "ok":
                return state
            key_params = freeze(kwargs)
            tools = list(state.tools)
            for i, tool in enumerate(tools):
                if tool.hidden:
                    continue
                memo_key = (name, key_params, fingerprint(tool.schema))
                hit = _MEMO.get(memo_key)
                if hit is None:
                    outcome = fn(tool.schema, **kwargs)
                    lost: tuple[Finding, ...] = ()
                    if report_losses and outcome.schema is not MISSING and outcome.drop is None:
                        lost = tuple(
                            Finding(
                                code=f"{kind}-by-client",
                                message=f"{ptr or '/'} {kind} by {name}",
                                pointer="/inputSchema" + ptr,
                                lost=True,
                            )
                            for ptr, kind in losses(tool.schema, outcome.schema)
                        )
                    hit = _MEMO[memo_key] = (outcome, lost)
                outcome, lost = hit
                if outcome.fail is not None:
                    kind, finding = outcome.fail
                    return replace(state, tools=tuple(tools)).fail(kind, finding, culprit=tool.index)
                if outcome.drop is not None:
                    tools[i] = tool.hide(outcome.drop)
                    continue
                extra = outcome.findings + lost
                new_schema = tool.schema if outcome.schema is MISSING else outcome.schema
                if extra or new_schema is not tool.schema:
                    tools[i] = replace(tool, schema=new_schema, findings=tool.findings + extra)
            return replace(state, tools=tuple(tools))

        apply.__doc__ = fn.__doc__
        apply.__name__ = fn.__name__
        apply.rewrite = fn  # the pure per-schema function, for unit tests
        behaviour(name, "discovery", params, required)(apply)
        return apply

    return wrap
