"""Codex CLI's input-schema sanitiser (docs/clients/openai.md#codex).

``codex-rs/tools/src/json_schema.rs`` @ 1048c68e ``parse_tool_input_schema`` behind
``parse_mcp_tool`` (mcp_tool.rs @ dfbd21e2): insert ``properties: {}``, sanitise (resolve
local ``$ref`` with merge rules, unwrap single-variant combinators, infer missing types,
``const`` -> ``enum``, arrays get ``items: string``), then deserialise into a struct that
keeps only eight keywords. The same pipeline written iteratively, without recursion.
"""

from __future__ import annotations

import json

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import diff_findings, note, refuse, typenames
from mcp_matrix.behaviours.refs import inline
from mcp_matrix.behaviours.rewrite import Outcome, mentions, schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import escape

STRUCT_KEYS = (
    "type",
    "description",
    "enum",
    "items",
    "properties",
    "required",
    "additionalProperties",
    "anyOf",
)
_STRUCT_SET = frozenset(STRUCT_KEYS)
TYPES = ("string", "number", "boolean", "integer", "object", "array", "null")

# sanitize() visits: properties values, items, additionalProperties (if not a bool),
# prefixItems, anyOf. oneOf/allOf with more than one variant are NOT visited.
SANITIZE_WALK = W.Walk(
    maps=("properties",),
    lists=("prefixItems", "anyOf"),
    singles=("additionalProperties",),
    items=True,
)
STRUCT_WALK = W.Walk(
    maps=("properties",), lists=("anyOf",), singles=("additionalProperties",), items=True
)
_MERGE_DEPTH = 64
# Codex 0.171 (observed, clients/calibrations/codex/0.171.0.json): $ref/$defs are kept
# as sent, and oneOf/allOf survive the struct and are walked like anyOf.
REF_KEYS = ("$ref", "$defs", "definitions")


def _walks(combinators: tuple[str, ...]) -> tuple[W.Walk, W.Walk]:
    if combinators == ("anyOf",):
        return SANITIZE_WALK, STRUCT_WALK
    return (
        W.Walk(
            maps=("properties",),
            lists=("prefixItems", *combinators),
            singles=("additionalProperties",),
            items=True,
        ),
        W.Walk(
            maps=("properties",), lists=combinators, singles=("additionalProperties",), items=True
        ),
    )


def cyclic_fallback(target: JSON, node: dict) -> dict:
    """Codex's cyclic_fallback (docs/clients/openai.md#codex): a stand-in typed like the target, merged with the node's siblings."""
    t = target if isinstance(target, dict) else {}
    types = typenames(t.get("type"))
    if "object" in types or "properties" in t:
        out: dict = {"type": "object", "properties": {}}
    elif "array" in types or "items" in t:
        out = {"type": "array", "items": {"type": "string"}}
    elif types and types[0] in ("number", "integer", "boolean"):
        out = {"type": types[0]}
    else:
        out = {"type": "string"}
    return _merge(out, {k: v for k, v in node.items() if k != "$ref"})


def _merge(target: JSON, siblings: dict, depth: int = 0) -> dict:
    """Codex's merge (docs/clients/openai.md#codex) of ``$ref`` siblings into the target copy (siblings otherwise win)."""
    out = dict(target) if isinstance(target, dict) else {}
    for key, sv in siblings.items():
        if key not in out:
            out[key] = sv
            continue
        tv = out[key]
        if key == "required" and isinstance(tv, list) and isinstance(sv, list):
            out[key] = tv + [x for x in sv if x not in tv]
        elif (
            key == "properties"
            and isinstance(tv, dict)
            and isinstance(sv, dict)
            and depth < _MERGE_DEPTH
        ):
            merged = dict(tv)
            for name, sub in sv.items():
                both = isinstance(merged.get(name), dict) and isinstance(sub, dict)
                merged[name] = _merge(merged[name], sub, depth + 1) if both else sub
            out[key] = merged
        elif key == "type":
            a, b = typenames(tv), typenames(sv)
            common = [t for t in a if t in b]
            out[key] = (common[0] if len(common) == 1 else common) if common else sv
        elif key == "additionalProperties":
            out[key] = (
                False
                if (tv is False or sv is False)
                else (sv if tv is True else tv if sv is True else sv)
            )
        elif key in ("minimum", "exclusiveMinimum") and _num(tv) and _num(sv):
            out[key] = max(tv, sv)
        elif key in ("maximum", "exclusiveMaximum") and _num(tv) and _num(sv):
            out[key] = min(tv, sv)
        else:
            out[key] = sv
    return out


def _num(x: JSON) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _settled(v: dict, resolve_refs: bool = True) -> bool:
    """A node ``sanitize`` leaves exactly as it is (the common case, decided without copying):
    no local ``$ref``, no single-variant combinator, no ``const``, one known type, and an
    object with ``properties`` / an array with ``items``."""
    ref = v.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        return not resolve_refs
    for key in ("oneOf", "anyOf", "allOf"):
        seq = v.get(key)
        if isinstance(seq, list) and len(seq) == 1:
            return False
    if "const" in v:
        return False
    t = v.get("type")
    if not (isinstance(t, str) and t in TYPES):
        return False
    if t == "object":
        return "properties" in v
    if t == "array":
        return "items" in v
    return True


# complexity: Codex's sanitize (docs/clients/openai.md#codex), one branch per schema shape it rewrites, kept in its order
def sanitize(
    schema: JSON,
    resolve_refs: bool = True,
    unwrap_single: bool = True,
    combinators: tuple[str, ...] = ("anyOf",),
    keep_empty: bool = False,
) -> tuple[W.Result, list[tuple[W.Node, str]]]:
    """Codex's ``sanitize`` (docs/clients/openai.md#codex) over the whole schema (root already has ``properties``).

    Also returns where the model is told less than the server allowed: ``(node, what)``
    for a schema declared a string for want of a type, and arrays given string items.
    With ``resolve_refs=False`` a node holding a local ``$ref`` is left as sent; with
    ``unwrap_single=False`` a one-variant combinator stays (Codex 0.171, observed).
    """
    root = schema
    narrowed: list[tuple[W.Node, str]] = []

    # complexity: the per-node body of Codex's sanitize, one branch per shape, in the client's order
    def fn(v: JSON, node: W.Node) -> JSON:
        if isinstance(v, bool):
            if node.container == "additionalProperties":
                return v
            narrowed.append((node, "a boolean schema"))
            return {"type": "string"}
        if not isinstance(v, dict):
            return v
        if _settled(v, resolve_refs) or (keep_empty and not v):
            return v
        given = v
        active = node.carry or ()
        unresolved: set = set()
        for _ in range(1000):  # each pass removes a $ref or a single-variant wrapper
            ref = v.get("$ref")
            if isinstance(ref, str) and ref.startswith("#") and ref not in unresolved:
                found, target = W.resolve_pointer(root, ref)
                if ref in active:
                    narrowed.append((node, f"a circular $ref {ref!r}"))
                    v = cyclic_fallback(target, v)
                    continue
                active = active + (ref,)
                node.carry = active
                if found:
                    target = {"type": "string"} if isinstance(target, bool) else target
                    v = _merge(target, {k: x for k, x in v.items() if k != "$ref"})
                    continue
                unresolved.add(ref)
            unwrapped = False
            for key in ("oneOf", "anyOf", "allOf") if unwrap_single else ():
                seq = v.get(key)
                if isinstance(seq, list) and len(seq) == 1:
                    variant = seq[0] if isinstance(seq[0], dict) else {"type": "string"}
                    v = {**{k: x for k, x in v.items() if k != key}, **variant}
                    unwrapped = True
                    break
            if not unwrapped:
                break
        v = dict(v)
        if "const" in v:
            v["enum"] = [v.pop("const")]
        types = [t for t in typenames(v.get("type")) if t in TYPES]
        if not types and any(k in v for k in combinators):
            return given if W.same(v, given) else v
        if not types:
            if any(k in v for k in ("properties", "required", "additionalProperties")):
                types = ["object"]
            elif "items" in v or "prefixItems" in v:
                types = ["array"]
            elif "enum" in v or "format" in v:
                types = ["string"]
            elif any(
                k in v
                for k in (
                    "minimum",
                    "maximum",
                    "exclusiveMinimum",
                    "exclusiveMaximum",
                    "multipleOf",
                )
            ):
                types = ["number"]
            else:
                types = ["string"]
                narrowed.append((node, "a schema without a type"))
        v["type"] = types[0] if len(types) == 1 else types
        if "object" in types and "properties" not in v:
            v["properties"] = {}
        if "array" in types and "items" not in v:
            v["items"] = {"type": "string"}
            narrowed.append((node, "an array without items"))
        return given if W.same(v, given) else v  # nothing to change: keep the server's node

    return W.rewrite(schema, fn, _walks(combinators)[0], carry=()), narrowed


def to_struct(
    schema: JSON, keep: frozenset = _STRUCT_SET, combinators: tuple[str, ...] = ("anyOf",)
) -> tuple[W.Result, list[str]]:
    """Deserialise into Codex's JsonSchema struct: only the ``keep`` keys survive, recursively."""
    errors: list[str] = []

    def fn(v: JSON, node: W.Node) -> JSON:
        if isinstance(v, bool) and node.container == "additionalProperties":
            return v
        if errors:  # the first error already decides; stop building pointers
            return v
        if not isinstance(v, dict):
            errors.append(f"{node.pointer or '/'} is not a schema object")
            return v
        out = v if keep.issuperset(v) else {k: x for k, x in v.items() if k in keep}
        if "description" in out and not isinstance(out["description"], str):
            errors.append(f"{node.pointer}/description is not a string")
        if "enum" in out and not isinstance(out["enum"], list):
            errors.append(f"{node.pointer}/enum is not an array")
        if "required" in out and not (
            isinstance(out["required"], list) and all(isinstance(r, str) for r in out["required"])
        ):
            errors.append(f"{node.pointer}/required is not a list of strings")
        if "properties" in out and not isinstance(out["properties"], dict):
            errors.append(f"{node.pointer}/properties is not an object")
        if isinstance(out.get("items"), list):
            errors.append(f"{node.pointer}/items is a list (tuple form), not one schema")
        return out if len(out) != len(v) else v

    return W.rewrite(schema, fn, _walks(combinators)[1]), errors


def pruned_defs(schema: JSON) -> JSON:
    """The root ``$defs``/``definitions`` without the entries no ``$ref`` reaches (from the
    schema outside them, then from the entries reached, until nothing new is reached).

    Codex 0.171 sends a tool's unused definitions to the model this way (observed); what it
    deletes the server never relied on, so no finding is raised for it."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in ("$defs", "definitions"):
        defs = out.get(key)
        if not isinstance(defs, dict):
            continue
        rest = {k: v for k, v in out.items() if k not in ("$defs", "definitions")}
        reached: set[str] = set()
        todo = [rest] + [v for k, v in out.items() if k != key and k in ("$defs", "definitions")]
        while todo:
            text = json.dumps(todo.pop(), default=str)
            for name in defs:
                ref = f'"#/{key}/{_pointer_escape(name)}'
                if name not in reached and (ref + '"' in text or ref + "/" in text):
                    reached.add(name)
                    todo.append(defs[name])
        out[key] = {k: v for k, v in defs.items() if k in reached}
        if not out[key]:
            del out[key]
    return out


def _inlined(schema: JSON) -> JSON:
    done = inline(schema, "any-pointer", W.ALL) if mentions(schema, "$ref") else None
    return done.schema if done is not None and done.complete else schema


def _pointer_escape(name: str) -> str:
    return json.dumps(escape(name))[1:-1]


def _narrowed(node: W.Node, what: str):
    if what.startswith("a circular"):
        return note(
            "ref-cycle",
            f"{node.pointer or '/'} is {what}; Codex replaces it with a stand-in "
            "of the target's type, so the model is told less than the server accepts",
            node.pointer,
            True,
        )
    elif what.startswith("an array"):
        told = "declares its items strings"
    else:
        told = "declares it a string"
    return note(
        "type-narrowed",
        f"{node.pointer or '/'} is {what}; Codex {told}, so the model is "
        "told less than the server accepts",
        node.pointer,
        True,
    )


@schema_rewrite(
    "codex-sanitize",
    report_losses=False,
    params={
        "resolve_refs": {
            "type": "boolean",
            "default": True,
            "description": "inline local $refs (0.11x-0.15x); false keeps $ref and $defs as sent (0.171, observed)",
        },
        "unwrap_single": {
            "type": "boolean",
            "default": True,
            "description": "unwrap one-variant oneOf/anyOf/allOf (0.11x-0.15x); false keeps them (0.171)",
        },
        "combinators": {
            "type": "array",
            "items": {"enum": ["anyOf", "oneOf", "allOf"]},
            "default": ["anyOf"],
            "description": "combinators the struct keeps and sanitize walks (0.11x-0.15x: anyOf; 0.171: all three)",
        },
        "keep_keywords": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "further keywords the struct keeps (0.171, observed: minItems)",
        },
        "keep_empty": {
            "type": "boolean",
            "default": False,
            "description": "an empty schema {} stays {} instead of becoming a string (0.171, observed)",
        },
        "prune_defs": {
            "type": "boolean",
            "default": False,
            "description": "$defs/definitions entries no $ref reaches are deleted (0.171, observed)",
        },
    },
)
def codex_sanitize(
    schema: object,
    resolve_refs: bool = True,
    unwrap_single: bool = True,
    combinators: list = ["anyOf"],  # noqa: B006
    keep_keywords: list = [],  # noqa: B006
    keep_empty: bool = False,
    prune_defs: bool = False,
) -> Outcome:
    """Codex's sanitise + struct pipeline (docs/clients/openai.md#codex): the model sees eight keywords, inferred types.

    A multi-variant ``oneOf``/``allOf`` property becomes ``{"type": "string"}`` (#13768),
    a root ``oneOf`` becomes ``{"type": "object", "properties": {}}``; ``default``,
    ``format``, ``pattern``, ``minimum`` never reach the model; a root of type ``null``
    drops the tool ("singleton null type").
    """
    if not isinstance(schema, dict):
        return refuse(
            "drop-tool",
            "schema-unparsable",
            "inputSchema is not a JSON object; Codex "
            "cannot parse it into its schema struct and leaves the tool out (assumed)",
        )
    work = dict(schema)
    if work.get("properties") is None:
        work["properties"] = {}
    kept = tuple(combinators)
    keep = (
        _STRUCT_SET
        | frozenset(kept)
        | frozenset(keep_keywords)
        | (frozenset() if resolve_refs else frozenset(REF_KEYS))
    )
    sanitized, narrowed = sanitize(work, resolve_refs, unwrap_single, kept, keep_empty)
    struct, errors = to_struct(sanitized.schema, keep, kept)
    result = pruned_defs(struct.schema) if prune_defs else struct.schema
    if isinstance(result, dict) and result.get("type") == "null":
        return refuse(
            "drop-tool",
            "schema-unparsable",
            "inputSchema is a singleton null type; "
            "Codex's parser rejects it and the tool is left out",
            "/type",
        )
    if errors:
        return refuse(
            "drop-tool",
            "schema-unparsable",
            f"Codex's schema struct cannot hold this "
            f"schema ({errors[0]}); the tool is left out (deserialisation error, assumed)",
        )
    findings = [_narrowed(node, what) for node, what in narrowed[:20]]
    # unused definitions deleted are no loss: the server's own schema never reached them
    before = pruned_defs(schema) if prune_defs else schema
    if resolve_refs:
        findings += diff_findings(before, result, "codex-sanitize", through_refs=True)
    else:  # $refs kept as sent: inline both sides, or a kept $ref reads as its target removed
        findings += diff_findings(_inlined(before), _inlined(result), "codex-sanitize")
    if not (sanitized.complete and struct.complete):
        findings.append(
            note(
                "walk-limit",
                f"schema has more than {W.MAX_NODES} subschemas after "
                "inlining; codex-sanitize stopped there",
            )
        )
    return Outcome(schema=result, findings=tuple(findings))
