"""mcp-use (PyPI ``mcp-use``): what becomes of an MCP tool, as of mcp-use 1.7.1 with
jsonschema-pydantic 0.6, pydantic 2.14 and langchain-core 1.8.3 (``mcp_use/agents/adapters/base.py``
``fix_schema``; ``langchain_adapter.py`` ``_convert_tool``; ``jsonschema_pydantic/transform.py``
``jsonschema_to_pydantic``; ``langchain_core/utils/function_calling.py``
``_convert_json_schema_to_openai_function``, ``_rm_titles``; ``langchain_core/tools/base.py``
``_parse_input``).

- ``mcp-use-schema``: ``fix_schema`` turns a type list into ``anyOf`` and gives an untyped ``enum``
  type string; ``jsonschema_to_pydantic`` builds a pydantic model from the root ``properties``
  (per property only its type: string, integer, number, boolean, null, a list of its ``items``, a
  nested model for an object with ``properties``, a free map for one without, a union for
  ``anyOf``, a model of all fields required for ``allOf``, anything else Any); a property not in
  ``required`` becomes Optional with ``default: null`` (or its own ``default``). LangChain's
  ``tool_call_schema`` keeps only the root fields in the model's ``__init__`` signature: a key
  that is not a Python identifier, or is a keyword (``user.name``, ``bad key!``, ``class``), is not
  shown to the model (yet a call that gives it is sent with it). LangChain binds the
  model's JSON schema: ``$ref`` inlined (siblings kept), ``$defs``, the root title and description
  gone, and every ``title`` removed except inside lists (``anyOf`` members keep theirs). Building
  the model raises on a boolean or numeric subschema, a ``$ref`` cycle or to a missing definition,
  a field name pydantic refuses (a leading ``_``, ``model_config``, ``Config``, ``model_dump``...):
  the agent run fails and no tool of the server reaches the model.
- ``mcp-use-validate``: the model's arguments are validated by that model (pydantic's lax mode:
  ``"5"`` becomes 5 for an integer, ``"true"`` true for a boolean, an integer a float for a
  number; a JSON string for an array or object, a number for a string, a missing required key are
  refused, and the model gets the error); unknown keys are dropped and every optional field not
  given is sent with its default (null unless the schema has one).

The order of a union is the schema's: in one process, ``typing.Union`` caches the first order it
saw for a set of types, so a later tool with the same types in another order may show the first.
Observed with mcp-use 1.7.1 (clients/calibrations/mcp-use/1.7.1.json).
"""

from __future__ import annotations

import copy
import keyword
from dataclasses import dataclass
from typing import Any

from mcp_matrix.behaviours.outcomes import refuse_call, run_failed
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.behaviours.rewrite import Outcome, schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, CallPlan

MISSING = object()
SCALARS = {"string": "str", "number": "float", "integer": "int", "boolean": "bool", "null": "none"}
# Field names pydantic's create_model refuses (pydantic 2.14, run in the mcp-use 1.7.1 venv).
REFUSED_NAMES = frozenset(
    {
        "Config",
        "model_config",
        "model_dump",
        "model_dump_json",
        "model_validate",
        "model_validate_json",
        "model_validate_strings",
    }
)
TRUE_WORDS = frozenset({"1", "on", "t", "true", "y", "yes"})
FALSE_WORDS = frozenset({"0", "off", "f", "false", "n", "no"})


class Unbuildable(Exception):
    """What makes ``jsonschema_to_pydantic`` (or pydantic under it) raise."""


@dataclass(frozen=True, eq=False)
class Kind:
    """A pydantic annotation: ``tag`` is str, int, float, bool, none, any, list, dict, model or union."""

    tag: str
    item: Kind | None = None
    options: tuple[Kind, ...] = ()
    model: Model | None = None


@dataclass(frozen=True, eq=False)
class Field:
    name: str
    kind: Kind
    required: bool
    default: Any = MISSING
    description: object = MISSING
    title: bool = True  # create_model("CombinedModel", ...) fields: a title, nothing else


@dataclass(frozen=True, eq=False)
class Model:
    title: str
    description: JSON
    fields: tuple[Field, ...]


ANY = Kind("any")
NONE = Kind("none")


def fix_schema(schema: JSON) -> JSON:
    """mcp-use's ``fix_schema`` on a copy."""
    if isinstance(schema, dict):
        out = dict(schema)
        if isinstance(out.get("type"), list):
            out["anyOf"] = [{"type": t} for t in out.pop("type")]
        if "enum" in out and "type" not in out:
            out["type"] = "string"
        return {k: fix_schema(v) for k, v in out.items()}
    if isinstance(schema, list):
        return [fix_schema(x) for x in schema]
    return schema


def _has(value: JSON, key: str) -> bool:
    """``key in value`` as Python answers it (a substring of a string, an item of a list)."""
    if isinstance(value, (dict, list, str)):
        return key in value
    raise Unbuildable(f"argument of type {type(value).__name__!r} is not iterable")


def _get(value: JSON, key: str) -> Any:
    if not isinstance(value, dict):
        raise Unbuildable(f"{type(value).__name__} indices must be integers, not 'str'")
    return value[key]


class _Builder:
    def __init__(self, defs: JSON) -> None:
        self.defs = defs
        self.depth = 0

    def model(self, schema: JSON) -> Model:
        self.depth += 1
        if self.depth > 200:
            raise Unbuildable("maximum recursion depth exceeded")
        try:
            return self._model(schema)
        finally:
            self.depth -= 1

    def _model(self, schema: JSON) -> Model:
        if not isinstance(schema, dict):
            raise Unbuildable(f"{type(schema).__name__!r} object has no attribute 'get'")
        props = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(props, dict):
            raise Unbuildable(f"{type(props).__name__!r} object has no attribute 'items'")
        fields = []
        for name, prop in props.items():
            kind = self.kind(prop)
            default = _get(prop, "default") if _has(prop, "default") else MISSING
            need = _has(required, name)
            if not need:
                kind = union((kind, NONE))
                default = None if default is MISSING else default
            text = _get(prop, "description") if _has(prop, "description") else MISSING
            fields.append(Field(_checked(name), kind, need and default is MISSING, default, text))
        return Model(
            str(schema.get("title", "DynamicModel")), schema.get("description"), tuple(fields)
        )

    def kind(self, prop: Any) -> Kind:
        if _has(prop, "$ref"):
            ref = _get(prop, "$ref")
            name = str(ref).split("/")[-1]
            if not isinstance(self.defs, dict) or name not in self.defs:
                raise Unbuildable(f"KeyError: {name!r}")
            return Kind("model", model=self.model(self.defs[name]))
        if _has(prop, "type"):
            kind = _get(prop, "type")
            if kind == "array":
                return Kind("list", item=self.kind(prop.get("items", {})))
            if kind == "object":
                if "properties" in prop:
                    return Kind("model", model=self.model(prop))
                return Kind("dict")
            return Kind(SCALARS[kind]) if isinstance(kind, str) and kind in SCALARS else ANY
        if _has(prop, "allOf"):
            fields: dict[str, Field] = {}
            for sub in _get(prop, "allOf"):
                for f in self.model(sub).fields:  # every annotation, required, no default
                    fields[f.name] = Field(f.name, f.kind, True, title=True)
            return Kind("model", model=Model("CombinedModel", None, tuple(fields.values())))
        if _has(prop, "anyOf"):
            return union(tuple(self.kind(sub) for sub in _get(prop, "anyOf")))
        return ANY


def _checked(name: str) -> str:
    if name.startswith("_") or name in REFUSED_NAMES:
        raise Unbuildable(f"pydantic refuses the field name {name!r}")
    return name


def union(kinds: tuple[Kind, ...]) -> Kind:
    """``typing.Union``: nested unions flattened, repeats of a scalar kind dropped, one left alone."""
    flat: list[Kind] = []
    for k in kinds:
        for option in k.options if k.tag == "union" else (k,):
            if option.tag in ("model", "list") or all(o.tag != option.tag for o in flat):
                flat.append(option)
    return flat[0] if len(flat) == 1 else Kind("union", options=tuple(flat))


def build(schema: JSON) -> Model:
    """The pydantic model mcp-use makes of ``schema``; raises ``Unbuildable`` where it would."""
    fixed = fix_schema(schema)
    if not isinstance(fixed, dict):
        raise Unbuildable("the inputSchema is not an object")
    defs = fixed.get("$defs", fixed.get("definitions", {}))
    return _Builder(defs).model(fixed)


# --- the JSON schema LangChain binds (pydantic's model_json_schema, refs inlined, titles removed)


def _kind_schema(kind: Kind) -> dict:
    if kind.tag in ("str", "int", "float", "bool", "none"):
        name = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
        return {"type": name.get(kind.tag, "null")}
    if kind.tag == "list":
        return {"items": _kind_schema(kind.item or ANY), "type": "array"}
    if kind.tag == "dict":
        return {"additionalProperties": True, "type": "object"}
    if kind.tag == "model" and kind.model is not None:
        return _model_schema(kind.model)
    if kind.tag == "union":
        return {"anyOf": [_kind_schema(k) for k in kind.options]}
    return {}


def _model_schema(model: Model) -> dict:
    out: dict = {"properties": {}}
    for f in model.fields:
        node = _kind_schema(f.kind)
        if f.default is not MISSING:
            node["default"] = copy.deepcopy(f.default)
        if f.description is not MISSING:
            node["description"] = f.description
        if f.title and not _model_typed(f.kind):
            node["title"] = f.name.title().replace("_", " ")
        out["properties"][f.name] = node
    required = [f.name for f in model.fields if f.required]
    if required:
        out["required"] = required
    out["title"] = model.title
    out["type"] = "object"
    if model.description:
        out["description"] = model.description
    return out


def _model_typed(kind: Kind) -> bool:
    """pydantic sets no field title on a field whose type is a model (or Optional of one)."""
    options = [k for k in (kind.options if kind.tag == "union" else (kind,)) if k.tag != "none"]
    return len(options) == 1 and options[0].tag == "model"


def rm_titles(node: dict, prev_key: str = "") -> dict:
    """LangChain's ``_rm_titles``: it walks dicts only, so list members keep their titles."""
    out = {}
    for k, v in node.items():
        if k == "title":
            if isinstance(v, dict) and prev_key == "properties":
                out[k] = rm_titles(v, k)
        elif isinstance(v, dict):
            out[k] = rm_titles(v, k)
        else:
            out[k] = v
    return out


def parameters(schema: JSON) -> dict:
    """What the model is given for ``schema``; raises ``Unbuildable`` as mcp-use would."""
    model = build(schema)
    shown = tuple(
        f for f in model.fields if f.name.isidentifier() and not keyword.iskeyword(f.name)
    )
    root = _model_schema(Model(model.title, model.description, shown))
    root.pop("title", None)
    root.pop("description", None)
    return rm_titles(root)


@schema_rewrite("mcp-use-schema", report_losses=True)
def mcp_use_schema(schema: JSON) -> Outcome:
    """The pydantic rebuild; a schema it cannot build fails the whole run.

    Observed: clients/calibrations/mcp-use/1.7.1.json."""
    try:
        return Outcome(schema=parameters(schema))
    except (Unbuildable, RecursionError) as exc:  # mcp-use's own walks recurse too
        why = f"mcp-use cannot build this tool's pydantic model ({exc}); the agent run fails"
        return Outcome(
            fail=(
                "server-dropped",
                run_failed(f"{why}, so no tool of the server reaches the model"),
            )
        )


# --- pydantic's lax validation of the model's arguments (python mode, smart unions)


class Invalid(Exception):
    """A value pydantic refuses."""


def _exact(kind: Kind, value: JSON) -> bool:
    exact = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict}
    if kind.tag == "none":
        return value is None
    return kind.tag in exact and type(value) is exact[kind.tag]


def _lax(kind: Kind, value: JSON) -> JSON:
    tag = kind.tag
    if tag == "any":
        return value
    if tag == "none":
        if value is None:
            return None
        raise Invalid("not None")
    if tag == "str":
        if isinstance(value, str):
            return value
        raise Invalid("not a string")
    if tag == "bool":
        return _bool(value)
    if tag == "int":
        return _int(value)
    if tag == "float":
        return _float(value)
    if tag == "list":
        if not isinstance(value, list):
            raise Invalid("not a list")
        return [validate(kind.item or ANY, v) for v in value]
    if tag == "dict":
        if not isinstance(value, dict):
            raise Invalid("not a dict")
        return value
    if tag == "model" and kind.model is not None:
        return validate_model(kind.model, value, nested=True)
    raise Invalid(tag)


def _bool(value: JSON) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS | FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    raise Invalid("not a boolean")


def _int(value: JSON) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        try:
            return int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                raise Invalid("not an integer") from None
            if number.is_integer() and "e" not in text.lower():
                return int(number)
    raise Invalid("not an integer")


def _float(value: JSON) -> float:
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip().replace("_", ""))
        except ValueError:
            pass
    raise Invalid("not a number")


def validate(kind: Kind, value: JSON) -> JSON:
    """pydantic's lax validation; a union tries an exact match, then strict, then lax, in order."""
    if kind.tag != "union":
        return _lax(kind, value)
    for option in kind.options:
        if _exact(option, value):
            return _lax(option, value)
    for option in kind.options:  # strict mode: a float takes an integer
        if option.tag == "float" and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
    for option in kind.options:
        try:
            return _lax(option, value)
        except Invalid:
            continue
    raise Invalid("no member of the union takes it")


def validate_model(model: Model, value: JSON, nested: bool) -> dict:
    """The fields given (validated) and every other field's default. A nested model goes out
    as the MCP SDK 1.x dumps its request (``exclude_none``): its null fields are left out."""
    if not isinstance(value, dict):
        raise Invalid("not an object")
    out = {}
    for f in model.fields:
        if f.name in value:
            out[f.name] = validate(f.kind, value[f.name])
        elif f.default is not MISSING:
            out[f.name] = copy.deepcopy(f.default)
        else:
            raise Invalid(f"{f.name}: Field required")
    if nested:
        return {k: v for k, v in out.items() if v is not None}
    return out


def sent_arguments(schema: JSON, arguments: dict) -> dict:
    """What ``_parse_input`` passes on: given fields validated, unknown keys dropped, defaults added."""
    return validate_model(build(schema), arguments, nested=False)


@behaviour("mcp-use-validate", "call")
def mcp_use_validate(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """LangChain validates the call with mcp-use's pydantic model before sending it.

    Observed: clients/calibrations/mcp-use/1.7.1.json."""
    if not isinstance(plan.arguments, dict):
        return plan
    held = ctx.held_tool  # the model is built from the tool as listed, not as the model sees it
    schema = held.get("inputSchema") if isinstance(held, dict) else ctx.held_schema
    try:
        sent = sent_arguments(schema, plan.arguments)
    except (Unbuildable, RecursionError):
        return plan
    except Invalid as exc:
        return refuse_call(
            plan, "mcp-use-validate", f"its pydantic model refuses the arguments ({exc})"
        )
    if sent == plan.arguments:
        return plan
    return plan.changed("mcp-use-validate", arguments=sent)
