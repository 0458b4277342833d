"""Reading tool schemas for ``diff``: properties, types, deprecated aliases, raw twins.

Pure helpers over the JSON a server sent; nothing here knows about clients. The
vocabulary follows docs/design.md#rename-additively: a *deprecated alias* is an old parameter kept callable
whose description sends the model to the new one ("Deprecated alias for account_id ...
Do not use; pass account_id instead"), and a *raw twin* is a write tool whose whole
input is one JSON payload string (docs/design.md#a-raw-twin-for-write-tools), so a client holding a stale schema has
nothing to strip.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import ROOT_COMBINATORS

# Root keywords that some clients refuse or rewrite (docs/design.md#flatten-the-root).

# Keywords whose change narrows or widens what a value may be, and which way is "tighter".
LOWER_BOUNDS = ("minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties")
UPPER_BOUNDS = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties")
OTHER_CONSTRAINTS = ("pattern", "format", "const", "multipleOf", "uniqueItems")

_DEPRECATED = re.compile(
    r"\b(deprecated|alias|legacy|obsolete|superseded|renamed)\b", re.IGNORECASE
)
_DONT_USE = re.compile(r"\b(do\s+not|don't|never)\s+(use|send|pass|set)\b", re.IGNORECASE)
_IMPERATIVE = r"\b(use|pass|send|set|call)\s+[`'\"]?{name}[`'\"]?(?![A-Za-z0-9_])"


def input_schema(tool: JSON) -> JSON:
    return tool.get("inputSchema") if isinstance(tool, Mapping) else None


def properties(schema: JSON) -> dict[str, JSON]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return {str(k): v for k, v in props.items()} if isinstance(props, Mapping) else {}


def required(schema: JSON) -> set[str]:
    req = schema.get("required") if isinstance(schema, Mapping) else None
    return {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()


def description(schema: JSON) -> str:
    text = schema.get("description") if isinstance(schema, Mapping) else None
    return text if isinstance(text, str) else ""


def types(schema: JSON) -> frozenset[str] | None:
    """The JSON types a schema allows by its ``type`` keyword; None when it does not say."""
    t = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(t, str):
        return frozenset({t})
    if isinstance(t, list) and all(isinstance(x, str) for x in t):
        return frozenset(t)
    return None


def type_label(schema: JSON) -> str:
    t = types(schema)
    if t is None:
        return "any"
    return " | ".join(sorted(t))


def _expand(ts: frozenset[str]) -> set[str]:
    """``number`` includes ``integer``: compare the sets of values, not the words."""
    return set(ts) | ({"integer"} if "number" in ts else set())


def compare_types(old: JSON, new: JSON) -> str:
    """``same``, ``widened`` (every old value still fits), ``narrowed`` or ``changed``."""
    a, b = types(old), types(new)
    if a == b:
        return "same"
    if b is None:
        return "widened"
    if a is None:
        return "narrowed"
    ea, eb = _expand(a), _expand(b)
    if ea == eb:
        return "same"
    if ea <= eb:
        return "widened"
    if eb <= ea:
        return "narrowed"
    return "changed"


def is_object(schema: JSON) -> bool:
    t = types(schema)
    return isinstance(schema, Mapping) and (
        t == frozenset({"object"}) or (t is None and "properties" in schema)
    )


def additional_closed(schema: JSON) -> bool:
    """True when the object refuses keys outside ``properties`` (``additionalProperties: false``)."""
    return isinstance(schema, Mapping) and schema.get("additionalProperties") is False


def root_combinators(schema: JSON) -> list[str]:
    return [k for k in ROOT_COMBINATORS if isinstance(schema, Mapping) and k in schema]


def is_raw_twin(tool: JSON) -> bool:
    """One string parameter carrying a serialised record, and nothing else (docs/design.md#a-raw-twin-for-write-tools).

    A one-string tool is a raw twin only when it says so: the parameter is named like a payload
    (``payload``, ``json``, ``raw``, ``body``, ``data``, ``record``) or described as JSON, so a
    plain ``search(query)`` is not taken for one.
    """
    schema = input_schema(tool)
    props = properties(schema)
    if len(props) != 1 or root_combinators(schema):
        return False
    ((name, only),) = props.items()
    if not isinstance(only, Mapping) or types(only) != frozenset({"string"}):
        return False
    if "enum" in only or "const" in only:
        return False
    return name.lower() in _PAYLOAD_NAMES or "json" in description(only).lower()


_PAYLOAD_NAMES = frozenset({"payload", "json", "raw", "body", "data", "record"})


@dataclass(frozen=True)
class Deprecation:
    """A parameter whose description marks it deprecated; ``target`` is the one to use instead."""

    name: str
    target: str | None
    steers: bool


def deprecation(name: str, schema: JSON, siblings: Mapping[str, JSON]) -> Deprecation | None:
    """Read a deprecation from a parameter's description, naming the sibling it defers to."""
    text = description(schema)
    if not text or not _DEPRECATED.search(text):
        return None
    target = None
    best = len(text) + 1
    for other in siblings:
        if other == name:
            continue
        m = re.search(rf"(?<![A-Za-z0-9_]){re.escape(other)}(?![A-Za-z0-9_])", text)
        if m and m.start() < best:
            target, best = other, m.start()
    return Deprecation(name=name, target=target, steers=steers(text, target))


def steers(text: str, target: str | None) -> bool:
    """Whether a deprecation is an instruction the model can act on this turn.

    "Do not use; pass account_id instead" steers; "will be removed in a future release" is a
    fact about the roadmap and does not (docs/design.md#rename-additively).
    """
    if target and re.search(_IMPERATIVE.format(name=re.escape(target)), text, re.IGNORECASE):
        return True
    return bool(_DONT_USE.search(text)) and (target is None or target in text)


def similarity(a: JSON, b: JSON) -> float:
    """How alike two input schemas are: shared (name, type) pairs, then the descriptions."""
    return params_similarity(param_types(a), param_types(b))


def param_types(schema: JSON) -> frozenset[tuple[str, str]]:
    """The (name, type) pairs of a schema's properties: what ``similarity`` compares."""
    return frozenset((k, type_label(v)) for k, v in properties(schema).items())


def params_similarity(pa: frozenset[tuple[str, str]], pb: frozenset[tuple[str, str]]) -> float:
    """``similarity`` of two schemas given their ``param_types`` (read once per tool when
    many pairs are compared). 0.0 unless they share a parameter name or both have none."""
    if not pa and not pb:
        return 1.0
    shared = len(pa & pb) / len(pa | pb)
    names = {k for k, _ in pa} & {k for k, _ in pb}
    loose = len(names) / max(len(pa), len(pb))
    return max(shared, loose * 0.9)


def text_similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio() if a and b else 0.0


__all__ = [
    "Deprecation",
    "additional_closed",
    "compare_types",
    "deprecation",
    "description",
    "input_schema",
    "is_object",
    "is_raw_twin",
    "param_types",
    "params_similarity",
    "properties",
    "required",
    "root_combinators",
    "similarity",
    "steers",
    "text_similarity",
    "type_label",
    "types",
]
