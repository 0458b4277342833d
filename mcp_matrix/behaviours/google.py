"""Converters from JSON Schema to Gemini's OpenAPI-subset ``Schema``.

Google ADK ``_to_gemini_schema`` (docs/clients/google.md#google-adk), LiteLLM ``_build_vertex_schema`` (docs/clients/google.md#litellm) and the
Vercel AI SDK Google provider's ``convertJSONSchemaToOpenAPISchema`` (docs/clients/vercel.md#google-provider). The output
keeps camelCase keyword names (ADK sends snake_case fields) so the loss diff compares
like with like. A converter that throws is judged by ``on_error``: the conversion runs
on every request, so by default every request of the session fails (assumed).
"""

from __future__ import annotations

import re

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import diff_findings, incomplete, note, refuse, typenames
from mcp_matrix.behaviours.refs import inline, lookup
from mcp_matrix.behaviours.rewrite import Outcome, schema_rewrite
from mcp_matrix.core.jsontypes import JSON

_ON_ERROR = {
    "enum": ["session-broken", "drop-tool"],
    "default": "session-broken",
    "description": "When the converter throws: the request fails every turn (session-broken, "
    "assumed) or the tool is left out.",
}


class _Throw(Exception):
    """The modelled converter raises."""


# ------------------------------------------------------------------- Google ADK (docs/clients/google.md)

# google.genai JSONSchema fields (+ADK's property_ordering) minus additional_properties.
# The exact field list is not in the catalogue: this is the google-genai model as read.
GENAI_FIELDS = {
    "type",
    "format",
    "title",
    "description",
    "default",
    "items",
    "min_items",
    "max_items",
    "enum",
    "properties",
    "required",
    "min_properties",
    "max_properties",
    "minimum",
    "maximum",
    "min_length",
    "max_length",
    "pattern",
    "any_of",
    "ref",
    "defs",
    "property_ordering",
}
ADK_WALK = W.Walk(maps=("properties", "$defs"), lists=("anyOf",), items=True)


def snake(text: str) -> str:
    """ADK's ``_to_snake_case``."""
    text = re.sub(r"[^a-zA-Z0-9]+", "_", text)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    return re.sub(r"_+", "_", text.lower()).strip("_")


def _adk_type(out: dict, preserve_null: bool) -> dict:
    """ADK ``_sanitize_schema_type``."""
    if not out:
        out["type"] = "object"
    t = out.get("type")
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        main = "array" if "array" in non_null else (non_null[0] if non_null else "object")
        out["type"] = [main, "null"] if len(non_null) != len(t) else main
    elif t == "null" and not preserve_null:
        out["type"] = ["object", "null"]
    if "array" in typenames(out.get("type")):
        out.setdefault("items", {"type": "string"})
    return out


def _adk_node(v: JSON, node: W.Node) -> JSON:
    if isinstance(v, bool):
        return {"type": "object"}
    if not isinstance(v, dict):
        return v
    out: dict = {}
    for key, value in v.items():
        name = snake(key) if isinstance(key, str) else ""
        if name in ("items", "any_of"):
            out[key] = value
        elif name in ("properties", "defs") and value is not None:
            if not isinstance(value, dict):
                raise _Throw(f"{node.pointer}/{key} is not an object")
            out[key] = value
        elif name == "format":
            t = v.get("type")
            if value and (
                (t in ("integer", "number") and value in ("int32", "int64"))
                or (t == "string" and value in ("date-time", "enum"))
            ):
                out[key] = value
        elif name in GENAI_FIELDS and value is not None:
            out[key] = value
    return _adk_type(out, node.container == "anyOf")


@schema_rewrite("adk-gemini-schema", params={"on_error": _ON_ERROR}, report_losses=False)
def adk_gemini_schema(schema: JSON, on_error: str = "session-broken") -> Outcome:
    """Google ADK ``_to_gemini_schema`` (docs/clients/google.md#google-adk, _gemini_schema_util.py @ 1cc66964).

    ``$ref`` replaced by the def named by its last segment (siblings override; a cycle
    becomes ``{type: object, description: "Circular ref to X"}``), ``$defs`` deleted;
    then only google.genai JSONSchema fields survive (no ``additionalProperties``,
    ``oneOf``, ``allOf``, ``not``), formats limited, type lists reduced to
    ``[T, "null"]``, arrays without items get ``items: string``.
    """
    if not isinstance(schema, dict):
        return Outcome()
    done = inline(
        schema,
        "last-segment",
        W.EVERY,
        on_cycle=lambda node, target, ref: {
            "type": "object",
            "description": f"Circular ref to {ref.split('/')[-1]}",
        },
    )
    deref = done.schema
    if isinstance(deref, dict):
        deref = {k: v for k, v in deref.items() if k not in ("$defs", "definitions")}
    try:
        result = W.rewrite(deref, _adk_node, ADK_WALK)
    except _Throw as exc:
        return refuse(on_error, "converter-error", f"ADK's schema conversion raises ({exc})")
    findings = diff_findings(schema, result.schema, "adk-gemini-schema", through_refs=True)
    if done.cycles:
        findings += tuple(
            note(
                "ref-cycle",
                f"$ref {ref!r} at {ptr or '/'} is circular: ADK replaces it with an empty object",
                ptr,
                True,
            )
            for ptr, ref in done.cycles
        )
    return Outcome(
        schema=result.schema, findings=findings + incomplete(result, "adk-gemini-schema")
    )


# ------------------------------------------------------------------ LiteLLM Vertex (docs/clients/google.md)

# Vertex Schema fields as LiteLLM's Schema TypedDict lists them (not re-verified, docs/clients/google.md#litellm).
VERTEX_FIELDS = {
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "default",
    "items",
    "enum",
    "properties",
    "required",
    "anyOf",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "pattern",
    "example",
    "propertyOrdering",
}
PROPS_ITEMS = W.Walk(maps=("properties",), items=True)
PROPS_ITEMS_ANYOF = W.Walk(maps=("properties",), lists=("anyOf",), items=True)


def _unpack_defs(schema: dict, defs: dict) -> dict:
    """LiteLLM ``unpack_defs``: $ref in properties[x], in its anyOf[i] and in its items only."""
    root = dict(schema)
    stack: list[tuple[dict, tuple]] = [(root, ())]
    budget = W.MAX_NODES

    def target(ref: JSON, chain: tuple) -> tuple[dict, tuple]:
        key = str(ref).split("defs/")[-1]
        if key not in defs or not isinstance(defs[key], dict):
            raise _Throw(f"$ref {ref!r} names no entry of $defs (KeyError, assumed)")
        if key in chain:
            raise _Throw(f"$ref {ref!r} is circular: unpack_defs recurses without end (assumed)")
        return dict(defs[key]), chain + (key,)

    while stack:
        budget -= 1
        if budget < 0:
            raise _Throw("inlining $defs grows past the walk limit")
        node, chain = stack.pop()
        props = node.get("properties")
        if not isinstance(props, dict):
            continue
        props = node["properties"] = dict(props)
        for name, value in list(props.items()):
            if not isinstance(value, dict):
                continue
            if value.get("$ref") is not None:
                new, sub = target(value["$ref"], chain)
                props[name] = new
                stack.append((new, sub))
            elif isinstance(value.get("anyOf"), list):
                value = props[name] = {**value, "anyOf": list(value["anyOf"])}
                for i, arm in enumerate(value["anyOf"]):
                    if isinstance(arm, dict) and arm.get("$ref") is not None:
                        new, sub = target(arm["$ref"], chain)
                        value["anyOf"][i] = new
                        stack.append((new, sub))
            elif isinstance(value.get("items"), dict) and value["items"].get("$ref") is not None:
                new, sub = target(value["items"]["$ref"], chain)
                props[name] = {**value, "items": new}
                stack.append((new, sub))
    return root


def _litellm_anyof_null(v: JSON, node: W.Node) -> JSON:
    if not isinstance(v, dict) or not isinstance(v.get("anyOf"), list):
        return v
    arms = v["anyOf"]
    kept = [a for a in arms if not (isinstance(a, dict) and a.get("type") == "null")]
    kept = [{"type": "object"} if a == {} else a for a in kept]
    if not kept:
        raise _Throw(f"anyOf at {node.pointer or '/'} has only null variants (ValueError)")
    if len(kept) != len(arms):
        fixed = []
        for a in kept:
            if isinstance(a, dict):
                a = {**a, "nullable": True}
                if a.get("type") == "array" and a.get("items") == {}:
                    del a["items"]
            fixed.append(a)
        kept = fixed
    return {**v, "anyOf": kept}


def _litellm_types(v: JSON, node: W.Node) -> JSON:
    if not isinstance(v, dict):
        return v
    out = v
    t = v.get("type")
    if isinstance(t, list) and len(t) > 1:
        out = {k: x for k, x in v.items() if k != "type"}
        out["anyOf"] = [{"type": x} for x in t]
    elif isinstance(t, list) and len(t) == 1:
        out = {**v, "type": t[0]}
    if isinstance(out.get("enum"), list) and "" in out["enum"]:
        out = {**out, "enum": [None if x == "" else x for x in out["enum"]]}
    return out


def _litellm_items(v: JSON, node: W.Node) -> JSON:
    if isinstance(v, dict) and v.get("items") == {}:
        return {**v, "items": {"type": "object"}}
    return v


def _litellm_object_type(v: JSON, node: W.Node) -> JSON:
    if isinstance(v, dict) and "properties" in v:
        out = {**v, "type": "object"}
        if out.get("required", 0) is None:
            del out["required"]
        return out
    return v


def _litellm_filter(v: JSON, node: W.Node) -> JSON:
    if not isinstance(v, dict):
        return v
    if isinstance(v.get("anyOf"), list):
        copied = {k: v[k] for k in ("title", "description") if k in v}
        v = {"anyOf": [{**a, **copied} if isinstance(a, dict) else a for a in v["anyOf"]]}
    out = {k: x for k, x in v.items() if k in VERTEX_FIELDS}
    if "format" in out and out["format"] not in ("enum", "date-time"):
        del out["format"]
    return out


@schema_rewrite("litellm-vertex", params={"on_error": _ON_ERROR}, report_losses=False)
def litellm_vertex(schema: JSON, on_error: str = "session-broken") -> Outcome:
    """LiteLLM ``_build_vertex_schema`` (docs/clients/google.md#litellm, litellm/llms/vertex_ai/common_utils.py, newer).

    ``$defs`` popped and unpacked only in properties / their anyOf / their items (refs
    elsewhere dangle); ``anyOf`` null arms become ``nullable``; type lists become
    ``anyOf``; ``items: {}`` becomes object; nodes with ``anyOf`` lose every sibling; only
    Vertex Schema fields survive, ``format`` only ``enum``/``date-time``.
    """
    if not isinstance(schema, dict):
        return Outcome()
    try:
        work = {k: v for k, v in schema.items() if k != "$defs"}
        defs = given if isinstance(given := schema.get("$defs"), dict) else {}
        work = _unpack_defs(work, defs)
        steps = (
            (_litellm_anyof_null, PROPS_ITEMS),
            (_litellm_types, PROPS_ITEMS_ANYOF),
            (_litellm_items, W.EVERY),
            (_litellm_object_type, PROPS_ITEMS),
            (_litellm_filter, PROPS_ITEMS_ANYOF),
        )
        complete = True
        for fn, walk in steps:
            result = W.rewrite(work, fn, walk)
            work, complete = result.schema, complete and result.complete
    except _Throw as exc:
        return refuse(
            on_error, "converter-error", f"LiteLLM's Vertex schema conversion raises ({exc})"
        )
    # A $ref outside the unpacked positions loses its target with $defs, and the field filter
    # then removes the $ref itself: the loss diff reports it.
    findings = diff_findings(schema, work, "litellm-vertex", through_refs=True)
    if not complete:
        findings += (note("walk-limit", "schema too large; litellm-vertex stopped early"),)
    return Outcome(schema=work, findings=findings)


# ------------------------------------------------------ Vercel AI SDK Google provider (docs/clients/vercel.md)

VG_WALK = W.Walk(maps=("properties",), lists=("allOf", "oneOf", "anyOf"), items=True)


def _js_string(x: JSON) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def _gemini_enum(out: dict, values: JSON) -> None:
    if not isinstance(values, list):
        return
    if all(x is None for x in values):
        out["type"] = "null"
    elif all(isinstance(x, str) for x in values):
        out["type"], out["enum"] = "string", values
    elif all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in values):
        out["type"] = "integer" if all(float(x).is_integer() for x in values) else "number"
        out["format"], out["enum"] = "enum", [_js_string(x) for x in values]
    elif all(isinstance(x, bool) for x in values):
        out["type"], out["format"], out["enum"] = "boolean", "enum", [_js_string(x) for x in values]
    else:
        raise _Throw("enum mixes value types")


def _vg_deref(v: JSON, root: JSON, node: W.Node) -> JSON:
    chain = node.carry or ()
    while isinstance(v, dict) and "$ref" in v:
        ref = v["$ref"]
        found, target = lookup(root, ref, "defs-only")
        if not found:
            raise _Throw(
                f"$ref {ref!r} is not #/$defs/<name> or #/definitions/<name> "
                "(UnsupportedFunctionality)"
            )
        if ref in chain:
            raise _Throw(f"recursive $ref {ref!r}")
        chain = chain + (ref,)
        node.carry = chain
        v = {
            **(target if isinstance(target, dict) else {}),
            **{k: x for k, x in v.items() if k != "$ref"},
        }
    return v


# complexity: one node of the client's convertJSONSchemaToOpenAPISchema, a branch per keyword it converts
def _vg_convert(v: JSON, root: JSON, node: W.Node, depth: int = 0) -> JSON:
    """One node of ``convertJSONSchemaToOpenAPISchema``; children are converted by the walk."""
    if v is None:
        return None
    if isinstance(v, bool):
        return {"type": "boolean", "properties": {}}
    v = _vg_deref(v, root, node)
    if not isinstance(v, dict):
        return v
    if v.get("type") == "object" and not v.get("properties") and not v.get("additionalProperties"):
        if node.is_root and depth == 0:
            return None
        return {
            "type": "object",
            **({"description": v["description"]} if v.get("description") else {}),
        }
    out: dict = {}
    if v.get("description"):
        out["description"] = v["description"]
    if "required" in v:
        out["required"] = v["required"]
    if v.get("format"):
        out["format"] = v["format"]
    t = v.get("type")
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        if not non_null:
            out["type"] = "null"
        else:
            out["anyOf"] = [{"type": x} for x in non_null]
            if "null" in t:
                out["nullable"] = True
    elif t is not None:
        out["type"] = t
    if "enum" in v or "const" in v:
        _gemini_enum(out, v["enum"] if "enum" in v else [v["const"]])
    for key in ("properties", "items", "allOf", "oneOf"):
        if key in v:
            out[key] = v[key]
    arms = v.get("anyOf")
    if isinstance(arms, list):
        nulls = [a for a in arms if isinstance(a, dict) and a.get("type") == "null"]
        rest = [a for a in arms if not (isinstance(a, dict) and a.get("type") == "null")]
        if nulls and len(rest) == 1:
            if depth > 64:
                raise _Throw("anyOf nests too deeply")
            merged = _vg_convert(rest[0], root, node, depth + 1)
            if isinstance(merged, dict):
                out.update(merged)
            out["nullable"] = True
        else:
            out["anyOf"] = rest if nulls else arms
            if nulls:
                out["nullable"] = True
    if "minLength" in v:
        out["minLength"] = v["minLength"]
    return out


@schema_rewrite("vercel-google-openapi", params={"on_error": _ON_ERROR}, report_losses=False)
def vercel_google_openapi(schema: JSON, on_error: str = "session-broken") -> Outcome:
    """AI SDK Google provider ``convertJSONSchemaToOpenAPISchema`` (docs/clients/vercel.md#google-provider, vercel/ai @ ed857f50).

    Keeps description, required, format, type (lists become ``anyOf`` + ``nullable``),
    Gemini-style enums, properties, items, allOf/oneOf/anyOf, minLength; drops everything
    else (additionalProperties, default, minimum, maximum, pattern, title, $defs ...).
    An empty root object becomes "no parameters". Unsupported or recursive ``$ref`` and
    mixed enums throw.
    """
    try:
        result = W.rewrite(schema, lambda v, node: _vg_convert(v, schema, node), VG_WALK, carry=())
    except _Throw as exc:
        return refuse(
            on_error, "converter-error", f"the Google provider's schema conversion throws ({exc})"
        )
    findings = diff_findings(
        schema,
        result.schema,
        "vercel-google-openapi",
        skip_root=result.schema is None,
        through_refs=True,
    )
    if result.schema is None and schema is not None:
        findings += (
            note(
                "no-parameters",
                "the root is an empty object: the function declaration is sent without parameters",
            ),
        )
    return Outcome(
        schema=result.schema, findings=findings + incomplete(result, "vercel-google-openapi")
    )
