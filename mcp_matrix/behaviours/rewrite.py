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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_matrix.behaviours.registry import behaviour, freeze
from mcp_matrix.behaviours.walk import MAX_NODES
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding, ListState, evolve
from mcp_matrix.core.tools import escape

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


_FINGERPRINTS: dict[int, tuple[JSON, str]] = {}
_MEMO: dict[tuple[str, str, str], tuple[Outcome, tuple[Finding, ...]]] = {}


def fingerprint(schema: JSON) -> str:
    """A canonical JSON text of ``schema``, memoised by object identity (computed once per
    schema object: every rewrite of every profile reads it from here)."""
    hit = _FINGERPRINTS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    text: str | None
    try:
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except RecursionError:  # thousands of levels: the same text, without recursing
        text = _canonical(schema)
    except (ValueError, TypeError):  # cycles, non-JSON values: never equal to another
        text = None
    if text is None:
        text = f"<unserialisable {id(schema)}>"
    _FINGERPRINTS[id(schema)] = (schema, text)  # holding the schema keeps its id unique
    return text


_CANONICAL_BUDGET = 5_000_000  # values; past that a schema is not worth a text


def _canonical(schema: JSON) -> str | None:
    """``json.dumps(schema, sort_keys=True, separators=(",", ":"))`` for a schema too deep
    for the C encoder, written iteratively; None for what that would refuse."""
    out: list[str] = []
    stack: list[JSON] = [schema]
    budget = _CANONICAL_BUDGET
    while stack:
        item = stack.pop()
        if type(item) is tuple:  # literal text
            out.append(item[0])
            continue
        budget -= 1
        if budget < 0:
            return None
        if isinstance(item, dict):
            if not all(isinstance(k, str) for k in item):
                return None  # json.dumps would coerce the keys: leave such schemas unshared
            out.append("{")
            stack.append(("}",))
            for i, key in enumerate(sorted(item, reverse=True)):
                if i:
                    stack.append((",",))
                stack.append(item[key])
                stack.append((json.dumps(key) + ":",))
        elif isinstance(item, list):
            out.append("[")
            stack.append(("]",))
            for i in range(len(item) - 1, -1, -1):
                if i != len(item) - 1:
                    stack.append((",",))
                stack.append(item[i])
        else:
            try:
                out.append(json.dumps(item))
            except (ValueError, TypeError):
                return None
    return "".join(out)


_CACHES: list[dict] = []


def memo_cache() -> dict:
    """A dict for a behaviour's own memo (pure results by key), emptied by ``clear_memo``."""
    cache: dict = {}
    _CACHES.append(cache)
    return cache


def clear_memo() -> None:
    _FINGERPRINTS.clear()
    _MEMO.clear()
    _NEEDLES.clear()
    for cache in _CACHES:
        cache.clear()


_NEEDLES: dict[str, str] = {}


def contains(schema: JSON, *fragments: str) -> bool:
    """Whether the fingerprint of ``schema`` contains one of ``fragments`` (raw canonical
    JSON, e.g. ``'"items":['`` for an ``items`` given as a list). False is exact; an
    unserialisable schema contains everything."""
    text = fingerprint(schema)
    return text.startswith("<unserialisable") or any(f in text for f in fragments)


def mentions(schema: JSON, *keys: str) -> bool:
    """Whether some object in ``schema`` may have one of ``keys`` as a key.

    Read off the fingerprint (canonical JSON, memoised per schema object): a key ``k``
    appears there as ``json.dumps(k) + ":"``, which a string *value* cannot contain (its
    quotes are escaped), so False is exact and a rewrite acting only on those keys can be
    skipped. True may be wrong the other way (a property named ``anyOf``): the rewrite
    then runs as usual. Unserialisable schemas mention everything.
    """
    text = fingerprint(schema)
    if text.startswith("<unserialisable"):
        return True
    for key in keys:
        needle = _NEEDLES.get(key)
        if needle is None:
            needle = _NEEDLES[key] = json.dumps(key) + ":"
        if needle in text:
            return True
    return False


# Keywords whose empty subschema (``{}`` or ``true``) means the same as leaving them out: a
# client removing one loses nothing (``fix`` adds ``items: {}`` where a client needs an items).
SAID_BY_ABSENCE = frozenset(
    {"items", "additionalProperties", "unevaluatedItems", "unevaluatedProperties", "propertyNames"}
)


def losses(before: JSON, after: JSON, pointer: str = "", limit: int = 50) -> list[tuple[str, str]]:
    """JSON pointers where ``after`` lost or changed what ``before`` said.

    Returns ``(pointer, "removed" | "changed")`` pairs; additions are not losses. Walks
    iteratively (schemas can be thousands of levels deep) and stops after ``limit`` items.
    Subtrees ``after`` shares with ``before`` (copy-on-write) are skipped, and pointers are
    built only for what is reported.
    """
    out: list[tuple[str, str]] = []
    stack: list[tuple[JSON, JSON, object]] = [(before, after, None)]  # path: (parent path, token)
    while stack and len(out) < limit:
        b, a, path = stack.pop()
        if b is a:
            continue
        if isinstance(b, dict) and isinstance(a, dict):
            for key in sorted(b, reverse=True):
                if key not in a:
                    if key in SAID_BY_ABSENCE and (b[key] is True or b[key] == {}):
                        continue  # the empty schema there says what no keyword says
                    out.append((_pointer(pointer, (path, key)), "removed"))
                elif b[key] is not a[key]:  # a shared subtree has nothing to report
                    stack.append((b[key], a[key], (path, key)))
        elif isinstance(b, list) and isinstance(a, list) and len(b) == len(a):
            for i in reversed(range(len(b))):
                if b[i] is not a[i]:
                    stack.append((b[i], a[i], (path, i)))
        elif b != a:
            out.append((_pointer(pointer, path) or "/", "changed"))
    return out


def _pointer(prefix: str, path: Any) -> str:
    tokens = []
    while path is not None:
        path, token = path
        tokens.append(escape(str(token)))
    return prefix + "".join("/" + t for t in reversed(tokens))


class SchemaRewrite:
    """A discovery behaviour made of a per-schema rewrite: called with a ``ListState`` and the
    profile's params (as the registry calls it); ``rewrite`` is the pure per-schema function and
    ``skip`` its cheap no-op test, kept for unit tests."""

    def __init__(
        self,
        apply: Callable[..., ListState],
        rewrite: Callable[..., Outcome],
        skip: Callable[..., bool] | None,
    ) -> None:
        self.apply, self.rewrite, self.skip = apply, rewrite, skip
        self.__doc__, self.__name__ = rewrite.__doc__, rewrite.__name__

    def __call__(self, state: ListState, **kwargs: JSON) -> ListState:
        return self.apply(state, **kwargs)


def schema_rewrite(
    name: str,
    params: Mapping[str, object] | None = None,
    required: tuple[str, ...] = (),
    report_losses: bool = True,
    skip: Callable[..., bool] | None = None,
) -> Callable[[Callable[..., Outcome]], SchemaRewrite]:
    """Register a per-schema rewrite as a discovery behaviour (see module docstring).

    ``skip(schema, **params)``, if given, is a cheap exact test that the rewrite would do
    nothing to ``schema`` (no change, no finding): typically ``not mentions(schema, ...)``
    for the keywords it acts on. The rewrite is then not called at all. It is asked only
    about schemas too small for a walk to reach its node limit.
    """

    def wrap(fn: Callable[..., Outcome]) -> SchemaRewrite:
        def apply(state: ListState, **kwargs: JSON) -> ListState:
            if state.outcome != "ok":
                return state
            key_params = freeze(kwargs)
            tools = state.tools
            out: list | None = None  # a copy of ``tools`` once something changes
            for i, tool in enumerate(tools):
                if tool.hidden:
                    continue
                schema = tool.schema
                text = fingerprint(schema)
                memo_key = (name, key_params, text)
                hit = _MEMO.get(memo_key)
                if hit is None:
                    if skip is not None and _complete_walks(text) and skip(schema, **kwargs):
                        hit = _MEMO[memo_key] = _NOTHING
                    else:
                        hit = _MEMO[memo_key] = _run(fn, name, report_losses, schema, kwargs)
                outcome, lost = hit
                if outcome is _NOTHING_OUTCOME:
                    continue
                if outcome.fail is not None:
                    kind, finding = outcome.fail
                    now = state if out is None else evolve(state, tools=tuple(out))
                    return now.fail(kind, finding, culprit=tool.index)
                if outcome.drop is not None:
                    if out is None:
                        out = list(tools)
                    out[i] = tool.hide(outcome.drop)
                    continue
                extra = outcome.findings + lost
                new_schema = schema if outcome.schema is MISSING else outcome.schema
                if extra or new_schema is not schema:
                    if out is None:
                        out = list(tools)
                    out[i] = evolve(tool, schema=new_schema, findings=tool.findings + extra)
            return state if out is None else evolve(state, tools=tuple(out))

        apply.__doc__ = fn.__doc__
        apply.__name__ = fn.__name__
        apply.__module__ = fn.__module__  # the module whose codes it emits (behaviours/codes.py)
        behaviour(name, "discovery", params, required)(apply)
        return SchemaRewrite(apply, fn, skip)

    return wrap


def _complete_walks(text: str) -> bool:
    """Whether every walk of the schema ``text`` describes ends before ``MAX_NODES`` (so a
    skipped rewrite would not have reported a ``walk-limit`` either): each JSON value starts
    at its own character, so a text this short has fewer values than the limit."""
    return len(text) <= MAX_NODES and not text.startswith("<unserialisable")


_LOST = Finding(code="", message="", lost=True)  # copied, not constructed: thousands per run
_NOTHING_OUTCOME = Outcome()
_NOTHING: tuple[Outcome, tuple[Finding, ...]] = (_NOTHING_OUTCOME, ())


def _run(
    fn: Callable[..., Outcome], name: str, report_losses: bool, schema: JSON, kwargs: dict
) -> tuple[Outcome, tuple[Finding, ...]]:
    """Call the rewrite once for a (params, schema) and work out its losses."""
    outcome = fn(schema, **kwargs)
    lost: tuple[Finding, ...] = ()
    if report_losses and outcome.schema is not MISSING and outcome.drop is None:
        lost = tuple(
            evolve(
                _LOST,
                code=f"{kind}-by-client",
                message=f"{ptr or '/'} {kind} by {name}",
                pointer="/inputSchema" + ptr,
            )
            for ptr, kind in losses(schema, outcome.schema)
        )
    if (
        not lost
        and outcome.fail is None
        and outcome.drop is None
        and not outcome.findings
        and (outcome.schema is MISSING or outcome.schema is schema)
    ):
        return _NOTHING  # changed nothing: later tools with this schema skip straight on
    return outcome, lost
