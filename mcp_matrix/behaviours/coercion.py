"""Call behaviours for what a client does to argument values: type coercion and JavaScript numbers.

- ``coerce-arguments``: a string argument is turned into the type its property schema asks for
  (``"5"`` -> ``5``, ``"true"`` -> ``true``), and with ``to_string`` a number or boolean given
  for a string property becomes a string. Claude Code 2.1.278 and 2.1.332 do it for top-level
  arguments only, and only for a string that is exactly how JavaScript writes the number;
  Qwen Code 0.24.4 (``SchemaValidator.validate``'s ``fixBooleanValues``, ``fixStringValues``,
  ``fixNumericValues``) does it at every depth, trims, and accepts any decimal literal.
  Observed with the ``coercion`` probe set (clients/calibrations/).
- ``round-big-integers``: an integer beyond 2^53 is sent as the nearest IEEE double, written
  the way ``JSON.stringify`` writes it (``9007199254740993`` -> ``9007199254740992``,
  ``2^63 - 1`` -> ``9223372036854776000``): a client that parses the model's tool call with
  ``JSON.parse`` holds every number as a double. Observed in every JavaScript client probed
  (``big-int`` probe set); the Python ones send the integer exactly.

Pure functions: they return the very same plan when nothing changes, and never raise on odd
arguments or schemas (a non-object schema or a ``$ref`` is left alone).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, CallPlan

MAX_SAFE = 2**53  # every integer of at most this magnitude is exact as a double
MAX_DEPTH = 200  # deeper values are left as they are (no recursion limit on hostile calls)
DECIMAL = re.compile(r"-?\d+(\.\d+)?\Z")


# -- JavaScript numbers --------------------------------------------------------------------


def js_number_text(x: float) -> str:
    """``String(x)`` in JavaScript for a finite double (ECMAScript Number::toString, radix 10)."""
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digits, exp = Decimal(repr(abs(x))).as_tuple()
    text = "".join(map(str, digits)).rstrip("0")
    exp = int(exp) + (len(digits) - len(text))
    k, n = len(text), len(text) + exp  # value = 0.text * 10^n
    if k <= n <= 21:
        out = text + "0" * (n - k)
    elif 0 < n <= 21:
        out = text[:n] + "." + text[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + text
    else:
        e = n - 1
        mantissa = text if k == 1 else text[0] + "." + text[1:]
        out = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + out


def js_number(value: float) -> int | float | None:
    """What a server parses from ``JSON.stringify(Number(value))``: an int when JavaScript writes
    no point or exponent, a float when it does, None (``null``) when the double overflows."""
    try:
        x = float(value)
    except OverflowError:
        return None
    if not math.isfinite(x):
        return None
    text = js_number_text(x)
    return int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def _rounded(value: JSON, depth: int = 0) -> JSON:
    """``value`` with every unsafe integer as JavaScript sends it; the same object when none is."""
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return js_number(value) if abs(value) > MAX_SAFE else value
    if isinstance(value, dict):
        out = {k: _rounded(v, depth + 1) for k, v in value.items()}
        return value if all(out[k] is v for k, v in value.items()) else out
    if isinstance(value, list):
        items = [_rounded(v, depth + 1) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


def _unsafe(value: JSON, depth: int = 0) -> bool:
    """Whether ``_rounded`` would change ``value``: an unsafe integer within its depth."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) > MAX_SAFE
    if isinstance(value, dict):
        return any(_unsafe(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_unsafe(v, depth + 1) for v in value)
    return False


_LAST_SCAN: list[tuple[JSON, bool]] = [(None, False)]  # the arguments scanned last, and the answer


def _unsafe_once(arguments: JSON) -> bool:
    """``_unsafe(arguments)``, scanned once for the same arguments object in a row (a replay
    hands one recorded call's arguments to every profile in turn; behaviours never change
    arguments). The pair is read and replaced whole: threads never mix two scans."""
    last = _LAST_SCAN[0]
    if last[0] is arguments:
        return last[1]
    unsafe = _unsafe(arguments)
    _LAST_SCAN[0] = (arguments, unsafe)
    return unsafe


@behaviour("round-big-integers", "call")
def round_big_integers(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """Integers beyond 2^53 reach the server as the nearest double (JSON.parse in a JavaScript client).

    Observed on Claude Code, Qwen Code, opencode, the Vercel AI SDK and a TypeScript-SDK host
    (``big-int`` probe set): 9007199254740993 arrives as 9007199254740992, 2^63 - 1 as
    9223372036854776000, at any depth; a 64-bit id names another record.
    """
    if not _unsafe_once(plan.arguments):  # most calls: a scan, no copies to compare
        return plan
    return plan.changed("round-big-integers", arguments=_rounded(plan.arguments))


# -- type coercion ---------------------------------------------------------------------------


def accepted_types(schema: JSON) -> set[str] | None:
    """The JSON types a property schema names (``type``, a type list, and the types of its
    ``anyOf``/``oneOf``/``allOf`` variants); None when it names none (nothing is coerced then)."""
    found: set[str] = set()
    stack = [(schema, 0)]
    while stack:
        s, depth = stack.pop()
        if not isinstance(s, dict) or depth > 64:
            continue
        t = s.get("type")
        if isinstance(t, str):
            found.add(t)
        elif isinstance(t, list):
            found.update(x for x in t if isinstance(x, str))
        for key in ("anyOf", "oneOf", "allOf"):
            variants = s.get(key)
            if isinstance(variants, list):
                stack += [(v, depth + 1) for v in variants]
    return found or None


def _number(text: str, types: set[str], numbers: str) -> int | float | None:
    """The number a numeric string becomes, or None when the client keeps the string."""
    wants_int, wants_num = "integer" in types, "number" in types
    if not (wants_int or wants_num):
        return None
    if numbers == "round-trip":  # Claude Code: only the exact text JavaScript writes for it
        if "_" in text:
            return None
        try:
            x = float(text)
        except ValueError:
            return None
        if not math.isfinite(x) or js_number_text(x) != text:
            return None
        if not wants_num and not x.is_integer():
            return None
        return js_number(x)
    trimmed = text.strip()  # Qwen Code: /^-?\d+(\.\d+)?$/ after trim, parseFloat / parseInt
    if not DECIMAL.match(trimmed):
        return None
    x = float(trimmed)
    if wants_int and not wants_num and not x.is_integer():
        return None
    return js_number(x if wants_num else math.trunc(x))


_ACCEPTED: dict[int, tuple[JSON, set[str] | None]] = {}  # id -> (the schema, its types)


def _accepted_once(schema: JSON) -> set[str] | None:
    """``accepted_types`` of a held property schema, worked out once (coercion asks it for every
    argument of every call; the schema is kept with its answer, so its id stays its own)."""
    hit = _ACCEPTED.get(id(schema))
    if hit is None or hit[0] is not schema:
        if len(_ACCEPTED) >= 8192:
            _ACCEPTED.clear()
        hit = _ACCEPTED[id(schema)] = (schema, accepted_types(schema))
    return hit[1]


def _coerced(value: JSON, schema: JSON, opts: dict) -> JSON:
    """One value coerced toward its schema's types; the same object when it is left alone."""
    types = _accepted_once(schema)
    if types is None:
        return value
    if isinstance(value, str):
        if "string" in types:
            return value
        boolean = value.lower() if opts["booleans"] == "any-case" else value
        if "boolean" in types and boolean in ("true", "false"):
            return boolean == "true"
        number = _number(value, types, opts["numbers"])
        return value if number is None else number
    kind = _js_type(value)
    accepted = kind in types or (kind == "integer" and "number" in types)  # an integer is a number
    if opts["to_string"] and "string" in types and kind is not None and not accepted:
        return _js_string(value)
    return value


def _js_type(value: JSON) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    return None


def _js_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return js_number_text(float(value)) if math.isfinite(float(value)) else str(value)


def _walk(value: JSON, schema: JSON, opts: dict, depth: int) -> JSON:
    """Coerce the properties of an object (and, nested, the items of arrays) under ``schema``."""
    if depth > MAX_DEPTH or not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        if not isinstance(props, dict):
            return value
        out = {}
        for k, v in value.items():
            sub = props.get(k)
            nested = opts["depth"] == "nested" and isinstance(v, (dict, list))
            out[k] = _walk(v, sub, opts, depth + 1) if nested else _coerced(v, sub, opts)
        return value if all(out[k] is v for k, v in value.items()) else out
    if isinstance(value, list) and opts["depth"] == "nested":
        items_schema = schema.get("items")
        items = [
            _walk(v, items_schema, opts, depth + 1)
            if isinstance(v, (dict, list))
            else _coerced(v, items_schema, opts)
            for v in value
        ]
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


@behaviour(
    "coerce-arguments",
    "call",
    params={
        "depth": {
            "enum": ["top", "nested"],
            "default": "top",
            "description": "top: top-level arguments only (Claude Code); nested: also inside objects and array items (Qwen Code)",
        },
        "numbers": {
            "enum": ["round-trip", "decimal"],
            "default": "round-trip",
            "description": "round-trip: a string becomes a number only when it is exactly how JavaScript writes that number ('5', '-7', '2.5'; not '5.0', '1e3', ' 3 ', or 2^53 + 1); decimal: any trimmed -?digits(.digits) literal (Qwen Code)",
        },
        "booleans": {
            "enum": ["exact", "any-case"],
            "default": "exact",
            "description": "exact: only 'true'/'false'; any-case: also 'True', 'FALSE' (Qwen Code)",
        },
        "to_string": {
            "type": "boolean",
            "default": False,
            "description": "a number or boolean given for a property that accepts only strings is sent as a string (Qwen Code)",
        },
    },
)
def coerce_arguments(
    plan: CallPlan,
    ctx: CallContext,
    depth: str = "top",
    numbers: str = "round-trip",
    booleans: str = "exact",
    to_string: bool = False,
) -> CallPlan:
    """String arguments are converted to the type their property schema asks for ("5" -> 5, "true" -> true).

    A property whose types include ``string`` (or that names no type) keeps its string. Observed
    on Claude Code 2.1.278/2.1.332 (top level, round-trip numbers) and Qwen Code 0.24.4 (nested,
    decimal numbers, any-case booleans, numbers to strings); the ``coercion`` probe set.
    """
    opts = {"depth": depth, "numbers": numbers, "booleans": booleans, "to_string": to_string}
    new = _walk(plan.arguments, ctx.held_schema, opts, 0)
    if new is plan.arguments:
        return plan
    return plan.changed("coerce-arguments", arguments=new)
