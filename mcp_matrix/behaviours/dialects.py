"""Client schema algorithms: Roo, OpenAI strict, Cline native, Zed (docs/clients/: roo-code.md,
openai.md#agents-sdk, cline.md#native-tools, zed.md).

Each is a pure rewrite written iteratively over mcp_matrix.behaviours.walk; the docstrings
say which source the algorithm mirrors. Google-dialect converters are in
mcp_matrix.behaviours.google.
"""

from __future__ import annotations

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import diff_findings, note, param, refuse, typenames
from mcp_matrix.behaviours.refs import inline
from mcp_matrix.behaviours.rewrite import Outcome, mentions, schema_rewrite
from mcp_matrix.core.jsontypes import JSON

TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")


def _num(x: JSON) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


# ------------------------------------------------------------------------ Roo Code (docs/clients/roo-code.md)

ROO_WALK = W.Walk(
    maps=("properties",),
    lists=("anyOf", "oneOf", "allOf"),
    singles=("additionalProperties",),
    items=True,
)
ROO_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}


def _roo_zod_problem(schema: JSON) -> str | None:
    """Why Roo's zod parse fails (docs/clients/roo-code.md#roo-code lists: object enum values, unknown type, ``items: true``,
    boolean property schema, non-number minimum); None if it parses."""
    for node in W.visit(schema, ROO_WALK):
        v = node.value
        if node.container == "additionalProperties" and isinstance(v, bool):
            continue
        if not isinstance(v, dict):
            return f"{node.pointer or '/'} is not a schema object"
        t = v.get("type")
        if t is not None and not (
            t in TYPES if isinstance(t, str) else isinstance(t, list) and all(x in TYPES for x in t)
        ):
            return f"{node.pointer}/type is not one of the seven JSON types"
        if isinstance(v.get("enum"), list) and any(isinstance(x, (dict, list)) for x in v["enum"]):
            return f"{node.pointer}/enum has object values"
        for key in ("minimum", "maximum"):
            if key in v and not _num(v[key]):
                return f"{node.pointer}/{key} is not a number"
    return None


def _roo_node(v: JSON, node: W.Node) -> JSON:
    if not isinstance(v, dict):
        return v
    out = dict(v)
    t = v.get("type")
    if isinstance(t, list):
        del out["type"]
        variants = []
        for name in t:
            variant: dict = {"type": name}
            if name == "array":
                for key in ("items", "minItems", "maxItems", "uniqueItems"):
                    if key in out:
                        variant[key] = out.pop(key)
            variants.append(variant)
        out["anyOf"] = variants
    if "format" in out and out["format"] not in ROO_FORMATS:
        del out["format"]
    if "required" in out:
        props = out.get("properties")
        req = out["required"] if isinstance(out["required"], list) else []
        kept = [r for r in req if isinstance(props, dict) and isinstance(r, str) and r in props]
        if kept:
            out["required"] = kept
        else:
            del out["required"]
    if "object" in typenames(t) or "properties" in v:
        out.setdefault("properties", {})
        out["additionalProperties"] = False
    else:
        out.pop("additionalProperties", None)
    return out


@schema_rewrite("roo-normalize", report_losses=False)
def roo_normalize(schema: JSON) -> Outcome:
    """Roo Code's recursive zod transform (docs/clients/roo-code.md#roo-code, src/utils/json-schema.ts @ cb83656718).

    Type arrays become ``anyOf``, every object gets ``additionalProperties: false`` (its
    ``true``/schema value discarded), non-OpenAI formats and unknown ``required`` names
    are dropped. Runs after the root flatten (``root-combinators`` flatten-first-object);
    if the zod parse fails the flattened schema is sent unchanged.
    """
    if schema is None:
        return Outcome(schema={"type": "object", "additionalProperties": False})
    problem = _roo_zod_problem(schema)
    if problem is not None:
        return Outcome(
            findings=(
                note(
                    "not-normalised",
                    f"Roo's schema parse fails ({problem}); "
                    "the schema is sent without the recursive normalisation",
                ),
            )
        )
    result = W.rewrite(schema, _roo_node, ROO_WALK)
    extra = (
        ()
        if result.complete
        else (
            note(
                "walk-limit",
                f"schema too large; roo-normalize stopped after {W.MAX_NODES} subschemas",
            ),
        )
    )
    return Outcome(
        schema=result.schema, findings=diff_findings(schema, result.schema, "roo-normalize") + extra
    )


# --------------------------------------------------------------- OpenAI Agents SDK (docs/clients/openai.md)

STRICT_WALK = W.Walk(
    maps=("$defs", "definitions", "properties"), lists=("anyOf", "allOf"), singles=("items",)
)


class _NotStrict(Exception):
    """ensure_strict_json_schema raised (TypeError / UserError)."""


def ensure_strict(schema: JSON) -> tuple[JSON, list[tuple[str, list]]]:
    """The Agents SDK's ``ensure_strict_json_schema`` (docs/clients/openai.md#agents-sdk); raises _NotStrict. Returns (schema, newly required)."""
    if schema == {}:
        return {
            "additionalProperties": False,
            "type": "object",
            "properties": {},
            "required": [],
        }, []
    forced: list[tuple[str, list]] = []

    def fn(v: JSON, node: W.Node) -> JSON:
        if not isinstance(v, dict):
            if node.container == "items":
                return v  # list-form items are not visited
            raise _NotStrict(f"{node.pointer or '/'} is not a JSON object (TypeError)")
        given = v
        chain = node.carry or ()
        for _ in range(1000):
            ref = v.get("$ref")
            if isinstance(ref, str) and len(v) > 1:
                found, target = W.resolve_pointer(schema, ref)
                if not found or ref in chain or not isinstance(target, dict):
                    raise _NotStrict(f"$ref {ref!r} at {node.pointer or '/'} cannot be inlined")
                chain = chain + (ref,)
                node.carry = chain
                v = {**target, **{k: x for k, x in v.items() if k != "$ref"}}
                continue
            all_of = v.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
                # merged into the node, then the node is walked again (approximates the SDK,
                # which strict-converts the variant first and then updates the node with it)
                v = {**{k: x for k, x in v.items() if k != "allOf"}, **all_of[0]}
                continue
            break
        out = dict(v)
        if out.get("type") == "object":
            if "additionalProperties" not in out:
                out["additionalProperties"] = False
            elif out["additionalProperties"]:
                raise _NotStrict(
                    f"additionalProperties at {node.pointer or '/'} is not false: "
                    "strict mode forbids open objects (UserError)"
                )
        if isinstance(out.get("properties"), dict):
            before = listed if isinstance(listed := out.get("required"), list) else []
            out["required"] = list(out["properties"].keys())
            newly = [k for k in out["required"] if k not in before]
            if newly and len(forced) < 20:
                forced.append((node.pointer, newly))
        if isinstance(out.get("oneOf"), list):
            out["anyOf"] = (out["anyOf"] if isinstance(out.get("anyOf"), list) else []) + out.pop(
                "oneOf"
            )
        if "default" in out and out["default"] is None:
            del out["default"]
        return given if W.same(out, given) else out  # nothing to change: keep the server's node

    result = W.rewrite(schema, fn, STRICT_WALK, carry=())
    if not result.complete:
        raise _NotStrict("schema too large to convert")
    return result.schema, forced


@schema_rewrite(
    "openai-strict",
    params={
        "fallback": param(
            ["non-strict", "drop-tool", "session-broken"],
            "When the strict conversion raises: the Agents SDK logs and sends the "
            "original schema non-strict.",
            "non-strict",
        )
    },
    report_losses=False,
)
def openai_strict(schema: JSON, fallback: str = "non-strict") -> Outcome:
    """OpenAI strict-mode conversion (docs/clients/openai.md#agents-sdk, openai-agents-python strict_schema.py @ 014750b8).

    Every object gets ``additionalProperties: false``, every property becomes required,
    ``oneOf`` becomes ``anyOf``, single ``allOf`` merges, ``default: null`` goes, ``$ref``
    with siblings is inlined; an open object (``additionalProperties`` truthy) raises.
    """
    try:
        out, forced = ensure_strict(schema)
    except _NotStrict as exc:
        if fallback == "non-strict":
            return Outcome(
                findings=(
                    note(
                        "strict-fallback",
                        f"strict conversion fails ({exc}); "
                        "the tool is sent non-strict with its original schema",
                    ),
                )
            )
        return refuse(fallback, "strict-failed", f"strict conversion fails ({exc})")
    findings = tuple(
        note(
            "made-required",
            f"properties {', '.join(map(repr, names[:6]))} at {ptr or '/'} were "
            "optional; strict mode makes every property required, so the model must always "
            "send them",
            ptr + "/required",
            True,
        )
        for ptr, names in forced[:20]
    )
    return Outcome(schema=out, findings=findings + diff_findings(schema, out, "openai-strict"))


# ------------------------------------------------------------ Cline native tools (docs/clients/cline.md)


@schema_rewrite("cline-native-flatten", report_losses=True)
def cline_native_flatten(schema: JSON) -> Outcome:
    """Cline's native-tool parameter list (docs/clients/cline.md#native-tools, ClineToolSet.ts @ 791d238996^).

    Only ``inputSchema.properties`` survive, each as a parameter (type defaulting to
    "string", other keys copied) with ``required`` from the root; every other root key
    (root ``anyOf``, ``$defs``, ``additionalProperties``) is lost; no ``properties`` means
    zero parameters. The provider converter's rebuilt schema is modelled as a plain object.
    """
    findings = []
    props_in = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(schema, dict) or not isinstance(props_in, dict):  # a non-object has none
        out: dict = {"type": "object", "properties": {}}
        findings.append(
            note(
                "no-parameters",
                "inputSchema has no properties: the client gives the model zero parameters",
                "",
                isinstance(schema, dict) and len(schema) > 1,
            )
        )
        return Outcome(schema=out, findings=tuple(findings))
    req_in = schema.get("required")
    req = req_in if isinstance(req_in, list) else []
    props: dict = {}
    for name, p in props_in.items():
        p = p if isinstance(p, dict) else {}
        param = {k: v for k, v in p.items() if k not in ("type", "description")}
        if not p.get("type"):
            findings.append(
                note(
                    "type-defaulted",
                    f"property {name!r} has no type; the client declares it as a string",
                    f"/properties/{W.escape(name)}",
                    True,
                )
            )
        param["type"] = p.get("type") or "string"
        if p.get("description"):
            param["description"] = p["description"]
        props[name] = param
    out = {"type": "object", "properties": props}
    required = [n for n in props if n in req]
    if required:
        out["required"] = required
    # ``out`` holds only the server's property schemas: no $ref there, none to dangle.
    for ptr, ref in W.dangling_refs(out)[:20] if mentions(schema, "$ref") else ():
        findings.append(
            note(
                "dangling-ref",
                f"$ref {ref!r} at {ptr} pointed into a root key the "
                "client does not keep: the model sees a reference it cannot follow",
                ptr,
                True,
            )
        )
    return Outcome(schema=out, findings=tuple(findings))


# ------------------------------------------------------------------------- Zed (docs/clients/zed.md)

_SUBSET_REFUSED = ("if", "then", "else", "$ref")


@schema_rewrite(
    "zed-adapt",
    params={
        "format": param(
            ["json-schema", "json-schema-subset"],
            "json-schema: Anthropic/OpenAI models; json-schema-subset: Gemini models.",
            "json-schema",
        ),
        "strip_root_description": param(
            "boolean", "Some versions also remove the root description.", False
        ),
    },
    report_losses=False,
)
def zed_adapt(
    schema: JSON, format: str = "json-schema", strip_root_description: bool = False
) -> Outcome:
    """Zed's ``adapt_schema_to_format`` (docs/clients/zed.md#zed, language_model/src/tool_schema.rs, newer version).

    Root ``$schema``/``title`` removed; JsonSchema: root objects get
    ``additionalProperties: false`` and ``properties: {}`` if absent; JsonSchemaSubset
    (Gemini): local ``#/$defs`` refs resolved, ``if/then/else/$ref`` left anywhere make the
    tool unusable, ``format``/``additionalProperties``/``propertyNames``/``exclusive*``/
    ``optional`` removed, null in type lists becomes ``nullable``.
    """
    if not isinstance(schema, dict):
        return Outcome()
    drop = {"$schema", "title"} | ({"description"} if strip_root_description else set())
    root = {k: v for k, v in schema.items() if k not in drop}
    if format == "json-schema":
        if root.get("type") == "object":
            root.setdefault("additionalProperties", False)
            root.setdefault("properties", {})
        return Outcome(schema=root, findings=diff_findings(schema, root, "zed-adapt"))
    done = inline(root, "defs-only", W.ALL)
    for node in W.visit(done.schema, W.ALL):
        if isinstance(node.value, dict):
            hit = next((k for k in _SUBSET_REFUSED if k in node.value), None)
            if hit:
                return refuse(
                    "drop-tool",
                    "schema-incompatible",
                    f"{hit} at {node.pointer or '/'}: "
                    '"Schema cannot be made compatible" with this model; the tool is '
                    "unusable",
                    node.pointer,
                )

    def fn(v: JSON, node: W.Node) -> JSON:
        if not isinstance(v, dict):
            return v
        out = {k: x for k, x in v.items() if k not in ("additionalProperties", "propertyNames")}
        if isinstance(out.get("format"), str):
            del out["format"]
        for key in ("exclusiveMinimum", "exclusiveMaximum"):
            if _num(out.get(key)):
                del out[key]
        if isinstance(out.get("optional"), bool):
            del out["optional"]
        if isinstance(out.get("type"), list) and "null" in out["type"]:
            rest = [t for t in out["type"] if t != "null"]
            out["type"] = rest[0] if len(rest) == 1 else rest
            out["nullable"] = True
            nullable.add(node.pointer + "/type")
        return out if out != v else v

    nullable: set[str] = set()
    result = W.rewrite(done.schema, fn, W.ALL)
    kept = tuple(
        f
        for f in diff_findings(schema, result.schema, "zed-adapt", through_refs=True)
        if f.pointer.removeprefix("/inputSchema") not in nullable
    )
    return Outcome(schema=result.schema, findings=kept)
