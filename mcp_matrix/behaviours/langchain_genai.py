"""langchain-google-genai: the Gemini ``Schema`` that ChatGoogleGenerativeAI builds from a tool.

``ChatGoogleGenerativeAI.bind_tools`` first turns each tool into an OpenAI function with
langchain-core (the ``langchain`` profile's rewrites), then, on every request, ``_format_tools``
converts that function to a google-genai ``FunctionDeclaration``
(langchain_google_genai/_function_utils.py@4.4.3: ``_format_to_genai_function_declaration``,
``_dict_to_genai_schema``, ``_format_json_schema_to_gapic``, ``_get_properties_from_schema``,
``_get_items_from_schema``). This module is a model of that conversion, written from reading
it; what it does, in short:

- a function whose parameters have no ``properties`` (or an empty one) is sent with no
  parameters at all, and so is a root whose ``allOf`` replaces it by its first variant;
- only type, description, enum, items, properties, required, nullable and anyOf survive:
  format, bounds, lengths, pattern, default, const, oneOf, additionalProperties are dropped;
- types become the upper-case Gemini enum (``STRING``); a type list, or no type, in a property
  becomes ``STRING``, and an object property without properties (and without
  additionalProperties) becomes ``STRING`` too; a nullable ``anyOf`` keeps its last non-null
  variant; ``anyOf`` is sent as ``any_of``;
- every nested object lists all of its properties (those without a default) as required;
  the root's ``required`` is kept, or set to ``[]``;
- an enum that is not all strings, or a type the converter cannot read, raises, and with it
  every request.

The schema this returns is the request's (upper-case types, ``any_of``); the loss diff reads
it with JSON Schema spellings, so a type written in upper case is not a loss.
"""

from __future__ import annotations

from mcp_matrix.behaviours.outcomes import diff_findings, note, refuse
from mcp_matrix.behaviours.rewrite import Outcome, schema_rewrite
from mcp_matrix.core.jsontypes import JSON

_ON_ERROR = {
    "enum": ["session-broken", "drop-tool"],
    "default": "session-broken",
    "description": "When the conversion raises: it runs while every request is built, so every "
    "request of the session fails (session-broken), or the tool is left out.",
}
# _ALLOWED_SCHEMA_FIELDS of _function_utils.py@4.4.3 (what _format_json_schema_to_gapic keeps).
ALLOWED = frozenset(
    {
        "type",
        "type_",
        "description",
        "enum",
        "format",
        "items",
        "properties",
        "required",
        "nullable",
        "anyOf",
        "default",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "title",
    }
)
GEMINI_TYPES = frozenset(
    {"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
)
# The conversion recurses about four Python frames per level: measured on 4.4.3, a chain of
# 200 nested objects converts and one of 250 raises RecursionError. Past this, the model says it raises.
MAX_DEPTH = 200


class _Raises(Exception):
    """The library's conversion raises (ValueError, ValidationError, AttributeError, ...)."""


def gemini_type(value: str) -> str:
    """``types.Type(value)``: case-insensitive; an unknown name is kept as given (with a warning)."""
    return value.upper() if value.upper() in GEMINI_TYPES else value


def _type_of(schema: dict) -> str | None:
    """``_get_nullable_type_from_schema``: the last non-null type of an anyOf, else ``type``."""
    if "anyOf" in schema:
        found = [t for t in (_type_of(_node(s)) for s in _list(schema["anyOf"])) if t is not None]
        return found[-1] if found else None
    if "type" not in schema and "type_" not in schema:
        return None
    value = schema["type"] if "type" in schema else schema["type_"]
    if isinstance(value, int) and not isinstance(value, bool):
        raise _Raises(f"Invalid type, int not supported: {value}")
    if isinstance(value, dict):
        return gemini_type(str(value.get("_value_")))
    if isinstance(value, str):
        return None if value == "null" else gemini_type(value)
    return None


def _nullable(schema: dict) -> bool:
    """``_is_nullable_schema``: only an anyOf with a null (or untyped) variant says so."""
    if "anyOf" in schema:
        return any(_type_of(_node(s)) is None for s in _list(schema["anyOf"]))
    return False


def _node(value: JSON) -> dict:
    if not isinstance(value, dict):
        raise _Raises(f"a subschema is {type(value).__name__}, not an object")
    return value


def _list(value: JSON) -> list:
    if not isinstance(value, list):
        raise _Raises(f"anyOf/allOf is {type(value).__name__}, not a list")
    return value


def _format(schema: JSON) -> dict:
    """``_format_json_schema_to_gapic``: the allowed keys; properties converted; allOf -> its first."""
    out: dict = {}
    for key, value in _node(schema).items():
        if key == "definitions":
            continue
        if key == "items":
            if value is not None:
                out["items"] = _format(value)
        elif key == "properties":
            out["properties"] = _properties(_node(value))
        elif key == "allOf":
            variants = _list(value)
            if not variants:
                raise _Raises("allOf is empty (IndexError)")
            return _format(variants[0])
        elif key in ("type", "type_"):
            if isinstance(value, dict):
                out["type"] = value.get("_value_")
            elif isinstance(value, str):
                out["type"] = value
            else:
                raise _Raises(f"Invalid type: {value!r}")
        elif key in ALLOWED:
            out[key] = value
    return out


def _chosen_variant(v: dict, arms: list, item_type: str) -> dict:
    """The anyOf variant a nullable property keeps (the last of its type, or the last non-null)."""
    if item_type in ("ARRAY", "OBJECT"):
        same = [a for a in arms if _node(a).get("type") == item_type.lower()]
        if not same:
            raise _Raises(f"no anyOf variant of type {item_type.lower()} (IndexError)")
        chosen = dict(same[-1])
    else:
        rest = [a for a in arms if _node(a).get("type") != "null"]
        if not rest:
            return v
        chosen = dict(rest[-1])
    for key in ("enum", "items"):
        if v.get(key) and not chosen.get(key):
            chosen[key] = v[key]
    return chosen


def _properties(props: dict) -> dict:
    """``_get_properties_from_schema``: one Gemini property per JSON Schema property."""
    out: dict = {}
    for name, v in props.items():
        if not isinstance(v, dict):
            continue  # logged and skipped
        item: dict = {}
        description = v.get("description")
        arms = v.get("anyOf")
        if arms and all(_node(a).get("type") != "null" for a in _list(arms)):
            item["anyOf"] = [_format(a) for a in arms]
        elif v.get("type") or arms or v.get("type_"):
            item["type"] = _type_of(v) or "STRING"
            if _nullable(v):
                item["nullable"] = True
            if arms:
                v = _chosen_variant(v, arms, item["type"])
        if v.get("enum"):
            item["enum"] = v["enum"]
        text = v.get("description") or description
        if text and isinstance(text, str):
            item["description"] = text
        if item.get("type") == "ARRAY" and v.get("items") is not None:
            item["items"] = _items(v["items"])
        if item.get("type") == "OBJECT":
            if isinstance(v.get("anyOf"), list) and v["anyOf"] and isinstance(v["anyOf"][0], dict):
                v = v["anyOf"][0]
            inner = v.get("properties")
            if inner:
                item["properties"] = _properties(inner) if isinstance(inner, dict) else {}
                if isinstance(inner, dict):
                    item["required"] = [k for k, s in inner.items() if not _has(s, "default")]
            elif not v.get("additionalProperties"):
                item["type"] = "STRING"
        if name == "title" and "description" not in item:
            item["description"] = f"title is {v}"
        out[name] = item
    return out


def _has(value: JSON, key: str) -> bool:
    """Python's ``key in value`` as the library writes it (a dict's keys, a string's text)."""
    if isinstance(value, (dict, str)):
        return key in value
    raise _Raises(f"argument of type '{type(value).__name__}' is not iterable")


def _items(schema: JSON) -> dict:
    """``_get_items_from_schema``: a tuple list becomes item0.. entries (then STRING)."""
    if isinstance(schema, list):
        return {
            f"item{i}": _properties(v) if isinstance(v, dict) else {} for i, v in enumerate(schema)
        }
    if isinstance(schema, str):
        return {"type": _type_of({"type": schema}) or "STRING"} if schema else {"type": "STRING"}
    if not isinstance(schema, dict):
        return {}
    items: dict = {"type": _type_of(schema) or "STRING"}
    if items["type"] == "OBJECT" and "properties" in schema:
        items["properties"] = (
            _properties(schema["properties"]) if isinstance(schema["properties"], dict) else {}
        )
    if items["type"] == "ARRAY" and "items" in schema:
        items["items"] = _format(schema["items"])
    if "title" in schema or "description" in schema:
        items["description"] = schema.get("description") or schema.get("title")
    if "enum" in schema:
        items["enum"] = schema["enum"]
    if _nullable(schema):
        items["nullable"] = True
    if "required" in schema:
        items["required"] = schema["required"]
    return items


def _strings(value: JSON, field: str) -> None:
    if value is not None and not (
        isinstance(value, list) and all(isinstance(x, str) for x in value)
    ):
        raise _Raises(
            f"{field} must be a list of strings (pydantic ValidationError in types.Schema)"
        )


def _build(schema: JSON, is_property: bool = False, variant: bool = False) -> dict | None:
    """``_dict_to_genai_schema``: the google-genai Schema, as the request carries it."""
    f = _format(schema)
    out: dict = {}
    if "type" in f and "anyOf" not in f:
        if not isinstance(f["type"], str):
            raise _Raises(f"Invalid type: {f['type']!r}")
        out["type"] = gemini_type(f["type"])
    if "description" in f:
        out["description"] = f["description"]
    if "title" in f and (not is_property or variant):
        out["title"] = f["title"]
    if "properties" in f:
        out["properties"] = {
            name: _build(p, is_property=True) for name, p in f["properties"].items()
        }
    if f.get("required") is not None:
        out["required"] = f["required"]
    elif not is_property:
        out["required"] = []
    if "items" in f:
        out["items"] = _build(f["items"], is_property=True)
    if "enum" in f:
        out["enum"] = f["enum"]
    if "nullable" in f:
        out["nullable"] = f["nullable"]
    if "anyOf" in f:
        out["any_of"] = [_build(a, is_property=True, variant=True) for a in _list(f["anyOf"])]
    if "type" not in out and "any_of" not in out:
        if is_property:
            out["type"] = "STRING"
        elif "properties" in out:
            out["type"] = "OBJECT"
        else:
            return None
    _strings(out.get("enum"), "enum")
    _strings(out.get("required"), "required")
    for field in ("description", "title"):
        if out.get(field) is not None and not isinstance(out[field], str):
            raise _Raises(f"{field} must be a string (pydantic ValidationError in types.Schema)")
    if "nullable" in out and not isinstance(out["nullable"], bool):
        raise _Raises("nullable must be a boolean (pydantic ValidationError in types.Schema)")
    return out


def depth(schema: JSON) -> int:
    """How deep the conversion recurses: levels of properties, items, anyOf and allOf (iterative)."""
    deepest, stack = 0, [(schema, 1)]
    while stack:
        node, level = stack.pop()
        if not isinstance(node, dict):
            continue
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return level
        children = (
            list(node["properties"].values()) if isinstance(node.get("properties"), dict) else []
        )
        children += node["items"] if isinstance(node.get("items"), list) else [node.get("items")]
        for key in ("anyOf", "allOf"):
            children += node[key] if isinstance(node.get(key), list) else []
        stack += [(child, level + 1) for child in children]
    return deepest


def as_json_schema(value: JSON) -> object:
    """The Gemini Schema read with JSON Schema spellings: ``STRING`` -> ``string``, ``any_of`` ->
    ``anyOf``, and ``nullable: true`` on type T -> ``anyOf: [{T ...}, {type: null}]`` (the form
    Pydantic and most servers write an optional value in), so only real losses are diffed."""
    if isinstance(value, list):
        return [as_json_schema(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, object] = {}
    for key, v in value.items():
        if key == "type" and isinstance(v, str) and v in GEMINI_TYPES:
            out[key] = v.lower()
        elif key == "properties" and isinstance(v, dict):
            out[key] = {name: as_json_schema(p) for name, p in v.items()}
        else:
            out["anyOf" if key == "any_of" else key] = (
                as_json_schema(v) if key in ("items", "any_of") else v
            )
    if out.get("nullable") is True and "type" in out:
        variant = {k: v for k, v in out.items() if k not in ("nullable", "description")}
        out = {
            **({"description": out["description"]} if "description" in out else {}),
            "anyOf": [variant, {"type": "null"}],
        }
    return out


def convert(schema: JSON) -> dict | None:
    """The parameters ChatGoogleGenerativeAI sends for a function (None: no parameters)."""
    if not isinstance(schema, dict):
        raise _Raises(f"parameters are {type(schema).__name__} (AttributeError on .get)")
    if not schema.get("properties"):
        return None  # "Empty 'properties' field not supported": parameters = {}
    if depth(schema) > MAX_DEPTH:
        raise _Raises(f"nested more than {MAX_DEPTH} levels (RecursionError)")
    try:
        return _build(schema)
    except RecursionError:
        raise _Raises("RecursionError") from None


@schema_rewrite("langchain-genai-schema", params={"on_error": _ON_ERROR}, report_losses=False)
def langchain_genai_schema(schema: JSON, on_error: str = "session-broken") -> Outcome:
    """ChatGoogleGenerativeAI's conversion of a tool's parameters to a Gemini Schema.

    E. code: langchain_google_genai/_function_utils.py@4.4.3 (the module docstring lists each step);
    observed: clients/calibrations/langchain-google/0.3.2.json.
    """
    try:
        out = convert(schema)
    except _Raises as exc:
        return refuse(
            on_error,
            "converter-error",
            f"langchain-google-genai's schema conversion raises ({exc})",
        )
    if out is None:
        findings = diff_findings(schema, None, "langchain-genai-schema", skip_root=True)
        had = sorted(schema.get("properties") or {}) if isinstance(schema, dict) else []
        if not had:
            return Outcome(
                schema=None,
                findings=findings
                + (note("no-parameters", "the function declaration is sent without parameters"),),
            )
        return Outcome(
            schema=None,
            findings=findings
            + (
                note(
                    "parameters-dropped",
                    "the root allOf replaces the parameters by its first variant, which has no "
                    f"properties: the function declaration is sent without parameters and the model sees none of "
                    f"{', '.join(had)}",
                    "/properties",
                    True,
                ),
            ),
        )
    return Outcome(
        schema=out, findings=diff_findings(schema, as_json_schema(out), "langchain-genai-schema")
    )
