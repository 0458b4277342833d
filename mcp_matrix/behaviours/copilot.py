"""GitHub Copilot CLI (npm ``@github/copilot``): how its agent runtime names MCP tools and
rewrites their schemas before the model sees them.

Observed with Copilot CLI 1.0.102 in offline bring-your-own-key mode (OpenAI Chat Completions,
model gpt-4.1): the calibration record ``clients/calibrations/copilot-cli/1.0.102.json`` and the
tool lists written for it (tests/behaviours/test_copilot.py cites what each run showed). The
runtime is a native module (``prebuilds/linux-x64/runtime.node``, linking the Rust ``idna``
crate's ``punycode.rs``), so no readable source backs these rules: they are what was seen.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import incomplete, note, param, refuse_tool
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.behaviours.rewrite import Outcome, schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.materiality import renamed as rename_materiality
from mcp_matrix.core.model import ListState, evolve

# Label separators of a tool name before punycode: '.', and U+3002, U+FF0E, U+FF61 (observed:
# 'a。b', 'a｡b' -> 'a-b'; 'ÉCOLE' keeps its case, so no UTS 46 mapping is applied).
_SEPARATORS = re.compile("[.\u3002\uff0e\uff61]")
_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def punycode_labels(name: str) -> str:
    """Each '.'-separated label holding a non-ASCII character becomes ``xn--`` + its RFC 3492
    punycode (case kept, no normalisation); ASCII labels stay; labels are joined with '.'."""
    labels = _SEPARATORS.split(name)
    return ".".join(label if label.isascii() else "xn--" + punycode(label) for label in labels)


_DIGITS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _adapt(delta: int, points: int, first: bool) -> int:
    delta = delta // 700 if first else delta // 2
    delta += delta // points
    k = 0
    while delta > 455:  # ((36 - 1) * 26) // 2
        delta //= 35
        k += 36
    return k + 36 * delta // (delta + 38)


def punycode(label: str) -> str:
    """RFC 3492 punycode of ``label`` (what Python's ``punycode`` codec gives), in O(n log n):
    the codec rescans the label once per distinct code point, minutes for a hostile 10,000
    character name; here a Fenwick tree counts the smaller code points between occurrences."""
    size = len(label)
    out = [c for c in label if ord(c) < 128]
    basic = len(out)
    if basic:
        out.append("-")
    tree = [0] * (size + 1)  # positions already "smaller than n", as a Fenwick tree

    def mark(pos: int) -> None:
        pos += 1
        while pos <= size:
            tree[pos] += 1
            pos += pos & -pos

    def before(pos: int) -> int:  # marked positions < pos
        total = 0
        while pos > 0:
            total += tree[pos]
            pos -= pos & -pos
        return total

    where: dict[int, list[int]] = {}
    for pos, c in enumerate(label):
        if ord(c) < 128:
            mark(pos)
        else:
            where.setdefault(ord(c), []).append(pos)
    n, delta, bias, handled = 128, 0, 72, basic
    for m in sorted(where):
        delta += (m - n) * (handled + 1)
        last = 0  # the first position not yet counted
        for pos in where[m]:
            delta += before(pos) - before(last)
            q, k = delta, 36
            while True:
                t = 1 if k <= bias else 26 if k >= bias + 26 else k - bias
                if q < t:
                    break
                out.append(_DIGITS[t + (q - t) % (36 - t)])
                q = (q - t) // (36 - t)
                k += 36
            out.append(_DIGITS[q])
            bias = _adapt(delta, handled + 1, handled == basic)
            delta = 0
            handled += 1
            last = pos + 1
        delta += before(size) - before(last) + 1
        n = m + 1
        for pos in where[m]:
            mark(pos)
    return "".join(out)


def copilot_base(name: str) -> str:
    """The tool part of the model-facing name: punycode, then every character outside
    ``[A-Za-z0-9_-]`` as '-' (one for one, runs kept)."""
    return _INVALID.sub("-", punycode_labels(name))


def _suffixed(name: str, n: int, limit: int) -> str:
    tail = str(n)
    return (name + tail) if len(name) + len(tail) <= limit else name[: limit - len(tail)] + tail


@behaviour(
    "copilot-tool-name",
    "discovery",
    params={
        "separator": param("string", "Between the server name and the tool part.", "-"),
        "max_length": param("integer", "Longest model-facing name.", 64, minimum=1),
    },
)
def copilot_tool_name(state: ListState, separator: str = "-", max_length: int = 64) -> ListState:
    """Copilot CLI's ``<server>-<tool>``: punycode, '-' for invalid characters, collisions
    resolved in name order (the greatest raw name keeps a sanitised name; a name cut at the
    limit that is taken gets ``2``, ``3`` ... in place of its last characters). Observed:
    clients/calibrations/copilot-cli/1.0.102.json, tests/behaviours/test_copilot.py."""
    if state.outcome != "ok":
        return state
    order = sorted(
        (i for i, t in enumerate(state.tools) if not t.hidden),
        key=lambda i: state.tools[i].server_name,
    )
    bases = {i: copilot_base(state.tools[i].server_name) for i in order}
    owner: dict[str, int] = {}
    for i in order:  # a later (greater) raw name replaces an earlier one with the same base
        owner[bases[i]] = i
    winners = set(owner.values())
    now = state
    for i in order:
        if i in winners:
            continue
        tool = now.tools[i]
        base = bases[i]
        other = now.tools[owner[base]].server_name
        refused = refuse_tool(
            now,
            i,
            "drop-tool",
            "name-collision",
            f"tool {tool.server_name!r} and tool {other!r} both become {base!r}; the client "
            f"keeps {other!r} (the greater name) and leaves this one out",
        )
        now = refused if refused is not None else now
    tools = list(now.tools)
    used: set[str] = set()
    for i in order:
        if i not in winners:
            continue
        tool = tools[i]
        raw, base = tool.server_name, bases[i]
        findings = []
        if base != raw:
            findings.append(
                note(
                    "name-sanitised",
                    f"tool name {raw!r} has characters the client does not allow; "
                    f"it becomes {base!r} (punycode, then '-' for each invalid character)",
                    materiality=rename_materiality(raw, base),
                )
            )
        full = f"{state.server}{separator}{base}"
        if len(full) > max_length:
            cut = full[:max_length]
            findings.append(
                note(
                    "name-shortened",
                    f"model-facing name {full!r} is {len(full)} characters, over the limit of "
                    f"{max_length}; it is cut to {cut!r}",
                    lost=True,
                )
            )
            full = cut
        if full in used:
            n = 2
            while _suffixed(full, n, max_length) in used:
                n += 1
            renamed = _suffixed(full, n, max_length)
            findings.append(
                note(
                    "name-collision-renamed",
                    f"model-facing name {full!r} is already taken; the client numbers this "
                    f"one: {renamed!r}",
                )
            )
            full = renamed
        used.add(full)
        if full != tool.name or findings:
            tools[i] = evolve(tool, name=full, findings=tool.findings + tuple(findings))
    return replace(now, tools=tuple(tools))


# The keywords Copilot CLI moves out of a schema node into its description, in the order it
# writes them. Observed on nodes holding many at once; the places of unevaluatedItems (before
# contains), contains/minContains/maxContains and unevaluatedProperties (before minProperties)
# relative to minItems..uniqueItems and propertyNames were not pinned down.
MOVED_KEYWORDS = (
    "contentEncoding",
    "contentMediaType",
    "not",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "multipleOf",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "patternProperties",
    "unevaluatedItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "propertyNames",
    "unevaluatedProperties",
    "minProperties",
    "maxProperties",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
)
# Where the rewrite goes below the root: properties, items, combinator variants, $defs,
# additionalProperties (observed); a moved keyword's subschemas are written as they are.
_WALK = W.Walk(
    maps=("properties", "$defs", "definitions"),
    lists=("anyOf", "oneOf", "allOf"),
    singles=("additionalProperties",),
    items=True,
)


def _text(value: JSON) -> str:
    """A value as the client writes it into a description: compact JSON, keys sorted."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def _append(old: JSON, text: str) -> str:
    """``text`` after a description the node had, with a blank line between."""
    return f"{old}\n\n{text}" if isinstance(old, str) and old else text


def _described(node: dict, moved: list[tuple[str, JSON]]) -> dict:
    """``node`` with ``moved`` keywords removed and written into its description as
    ``{key: value, ...}``, after the description it had and a blank line."""
    out = {k: v for k, v in node.items() if k not in dict(moved)}
    text = "{" + ", ".join(f"{k}: {_text(v)}" for k, v in moved) + "}"
    out["description"] = _append(node.get("description"), text)
    return out


def _node(value: JSON, node: W.Node) -> JSON:
    if isinstance(value, bool) and node.pointer.rsplit("/", 2)[-2:-1] == ["properties"]:
        # a boolean property schema (observed, probe set bool-subschema): true as {}, false
        # as a description only
        return {} if value else {"description": "{schema: false}"}
    if not isinstance(value, dict):
        return value
    out = value
    items = out.get("items")
    if isinstance(items, list):
        out = {**out, "items": {"anyOf": items}}
    elif "items" not in out and out.get("type") == "array":
        out = {**out, "items": {}}
    if isinstance(out.get("additionalItems"), bool):  # a boolean schema the client re-types
        out = {
            **out,
            "additionalItems": {"description": f"{{schema: {_text(out['additionalItems'])}}}"},
        }
    moved = [(k, out[k]) for k in MOVED_KEYWORDS if k in out]
    if moved:
        out = _described(out, moved)
    return out


def _root(schema: JSON) -> JSON:
    """The root as Copilot CLI sends it: an object with ``properties``, its ``allOf`` merged,
    ``anyOf``/``oneOf`` written into its description (their property names kept as ``{}``)."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return {"type": "object", "properties": {}}
    out = dict(schema)
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    if isinstance(out.get("allOf"), list):
        props = dict(out.get("properties") or {})
        required = list(out.get("required") or [])
        for variant in out.pop("allOf"):
            if isinstance(variant, dict):
                for k, v in (variant.get("properties") or {}).items():
                    props.setdefault(k, v)
                required += [r for r in variant.get("required") or [] if r not in required]
        if props:
            out["properties"] = props
        if required:
            out["required"] = required
    for keyword in ("anyOf", "oneOf"):
        variants = out.get(keyword)
        if not isinstance(variants, list):
            continue
        del out[keyword]
        props = dict(out.get("properties") or {})
        for variant in variants:
            if isinstance(variant, dict) and isinstance(variant.get("properties"), dict):
                for k in variant["properties"]:
                    props.setdefault(k, {})
        out["properties"] = props
        text = "{" + f"{keyword}: {_text(variants)}" + "}"
        out["description"] = _append(out.get("description"), text)
    return out


@schema_rewrite("copilot-schema")
def copilot_schema(schema: JSON) -> Outcome:
    """Copilot CLI's schema rewrite (1.0.102, gpt-4.1 over Chat Completions): an object root,
    root combinators flattened into the description, constraint keywords moved into each
    node's description, tuple ``items`` as ``anyOf``, an array without ``items`` given ``{}``.
    Observed: clients/calibrations/copilot-cli/1.0.102.json, tests/behaviours/test_copilot.py."""
    root = _root(schema)
    result = W.rewrite(root, _node, _WALK)
    findings = incomplete(result, "copilot-schema")
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        findings += (
            note(
                "root-replaced",
                "inputSchema is not type object; the client replaces it with an empty object, "
                "so the model sees a tool without parameters",
                "",
                True,
            ),
        )
    return Outcome(schema=result.schema, findings=findings)
