"""LlamaIndex MCP tools (PyPI ``llama-index-tools-mcp``): what becomes of an MCP tool, as of
llama-index-tools-mcp 0.6.0 with llama-index-core 0.14.25 and llama-index-llms-openai 0.8.3
(``llama_index/tools/mcp/base.py`` ``McpToolSpec.create_model_from_json_schema``,
``tool_spec_mixins.py``; ``llama_index/core/tools/types.py`` ``ToolMetadata``;
``llama_index/llms/openai/base.py`` ``_prepare_chat_with_tools``; ``core/agent/workflow/base_agent.py``).

- ``llamaindex-schema``: each ``inputSchema`` is rebuilt as a pydantic model and the model sees that
  model's JSON schema: per property only its type survives (``$ref`` to a model in ``$defs``, enum
  as ``enum``/``const``, ``anyOf`` as a union, a type list as its first type, a missing or unknown
  type as string, an object as a free map, an array as a list of its ``items``), every constraint
  keyword is gone, each property gets ``title`` (the key in title case; none when its type is a
  model) and ``description`` (empty when it had none); a property not in ``required`` becomes nullable with ``default: null`` (or
  keeps its ``default``); the root keeps ``type``/``properties``/``required``/``$defs`` only and
  gets ``additionalProperties: false``. Building the model raises on a subschema that is not an
  object (a boolean, a tuple ``items`` list) and on a ``$ref`` cycle (recursion): the whole run fails
  and no tool of the server reaches the model.
- ``llamaindex-call-name``: the name sent to the model has every character outside
  ``[a-zA-Z0-9_-]`` as ``_`` (``tool-name``), but the agent looks the model's call up by the raw
  name: a call to a renamed tool is answered ``Tool <name> not found`` and never sent.

Observed with llama-index-tools-mcp 0.6.0 (clients/calibrations/llamaindex/0.6.0.json).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.behaviours.rewrite import Outcome, schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, CallPlan, Finding

_PY = {"string": "string", "number": "number", "integer": "integer", "boolean": "boolean"}
_LITERAL = {str: "string", bool: "boolean", int: "integer", float: "number"}
NULL = {"type": "null"}


class _Unbuildable(Exception):
    """What makes ``create_model_from_json_schema`` raise (a non-object subschema, a cycle)."""


def openai_name(name: str) -> str:
    """``ToolMetadata._sanitize_name``."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


def _title(key: str) -> str:
    return key.title().replace("_", " ")  # pydantic's default field title


class _PydanticModelSchema:
    """The JSON schema of the pydantic model McpToolSpec builds, with the models it refers to."""

    def __init__(self, defs: dict) -> None:
        self.defs = defs
        self.used: dict[str, dict] = {}
        self.stack: list[str] = []

    def model(self, schema: JSON, title: str | None) -> dict:
        if not isinstance(schema, dict):
            raise _Unbuildable("a schema is not an object")
        props = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(props, dict) or not isinstance(required, list):
            raise _Unbuildable("properties is not an object or required not a list")
        out: dict = {"properties": {}, "type": "object"}
        need = []
        for key, field in props.items():
            kind = self.field_type(field)
            if key in required:
                out["properties"][key] = {**kind, "description": field.get("description", "")}
                need.append(key)
                continue
            default = field.get("default")
            if default is None:
                kind = _nullable(kind)
            out["properties"][key] = {**kind, "default": default}
            out["properties"][key]["description"] = field.get("description", "")
        for key, field in out["properties"].items():
            if not _model_typed(field):  # pydantic sets no title on a (nullable) model field
                field["title"] = _title(key)
        if need:
            out["required"] = need
        if title is not None:
            out["title"] = title
        return out

    def field_type(self, field: JSON) -> dict:
        if not isinstance(field, dict):  # a list or boolean: AttributeError or TypeError there
            raise _Unbuildable(f"a subschema is {type(field).__name__}")
        if "$ref" in field:
            return self.ref(field)
        if "enum" in field:
            return _literal(field["enum"])
        if "anyOf" in field:
            return self.union(field["anyOf"])
        return self.basic(field)

    def ref(self, field: dict) -> dict:
        name = str(field["$ref"]).split("#/$defs/")[-1]
        target = self.defs.get(name)
        if target is None:
            return dict(NULL)
        if not isinstance(target, dict):
            raise _Unbuildable("a $defs entry is not an object")
        if "anyOf" in target:
            return self.union(target["anyOf"])
        if target.get("type") == "array" and "items" in target:
            return self.basic(target)
        if _free_map(target):
            return self.basic(target)
        if name in self.stack:
            raise _Unbuildable("a $ref cycle (RecursionError)")
        if name not in self.used:
            self.stack.append(name)
            self.used[name] = self.model(target, name)
            self.stack.pop()
        return {"$ref": f"#/$defs/{name}"}

    def union(self, options: Iterable[JSON]) -> dict:
        kinds = []
        for option in options:
            if not isinstance(option, dict):
                raise _Unbuildable("an anyOf option is not an object")
            if "$ref" in option:
                kind = self.ref(option)
            elif "enum" in option:
                kind = _literal(option["enum"])
            elif option.get("type") == "null":
                kind = dict(NULL)
            else:
                kind = self.basic(option)
            for k in kind.get("anyOf", [kind]):
                if k not in kinds:
                    kinds.append(k)
        return kinds[0] if len(kinds) == 1 else {"anyOf": kinds}

    def basic(self, field: JSON) -> dict:
        if not isinstance(field, dict):
            raise _Unbuildable(f"a subschema is {type(field).__name__}")
        kind = field.get("type", "string")
        kind = kind[0] if isinstance(kind, list) and kind else kind
        if kind == "array" and "items" in field:
            return {"items": self.field_type(field["items"]), "type": "array"}
        if _free_map(field):
            return {
                "additionalProperties": self.field_type(field["additionalProperties"]),
                "type": "object",
            }
        if kind == "object":
            return {"additionalProperties": True, "type": "object"}
        if kind == "array":
            return {"items": {}, "type": "array"}
        return {"type": _PY.get(kind, "string") if isinstance(kind, str) else "string"}


def _model_typed(field: dict) -> bool:
    kinds = [k for k in field.get("anyOf", [field]) if k != NULL]
    return len(kinds) == 1 and "$ref" in kinds[0]


def _free_map(field: dict) -> bool:
    return field.get("type") == "object" and isinstance(field.get("additionalProperties"), dict)


def _literal(values: JSON) -> dict:
    values = list(values) if isinstance(values, list) else [values]
    kinds = {_LITERAL.get(type(v)) for v in values}
    out: dict = {"const": values[0]} if len(values) == 1 else {"enum": values}
    if len(kinds) == 1 and None not in kinds:
        out["type"] = kinds.pop()
    return out


def _nullable(kind: dict) -> dict:
    if kind == NULL:
        return kind
    options = kind["anyOf"] if "anyOf" in kind and len(kind) == 1 else [kind]
    return {"anyOf": [*(o for o in options if o != NULL), dict(NULL)]}  # Optional[...] of a union


def parameters(schema: JSON) -> dict:
    """What the model is given for ``schema``; raises ``_Unbuildable`` as LlamaIndex would."""
    if not isinstance(schema, dict):
        raise _Unbuildable("the inputSchema is not an object")
    defs = schema.get("$defs", {})
    builder = _PydanticModelSchema(defs if isinstance(defs, dict) else {})
    for name in builder.defs:  # every definition is built first, used or not
        if name not in builder.used:
            builder.stack.append(name)
            built = builder.model(builder.defs[name], name)
            builder.stack.pop()
            builder.used.setdefault(name, built)
    referenced = dict(builder.used)
    builder.used = {}
    root = builder.model(schema, None)
    used = _reachable(root, referenced)
    if used:
        root["$defs"] = {n: referenced[n] for n in referenced if n in used}
    root["additionalProperties"] = False
    return root


def _reachable(root: dict, models: dict) -> set[str]:
    seen: set[str] = set()
    todo = [root]
    while todo:
        text = repr(todo.pop())
        for name in re.findall(r"#/\$defs/([^'\"]+)", text):
            if name not in seen and name in models:
                seen.add(name)
                todo.append(models[name])
    return seen


@schema_rewrite("llamaindex-schema", report_losses=True)
def llamaindex_schema(schema: JSON) -> Outcome:
    """The pydantic rebuild; a schema it cannot build fails the whole run.

    Observed: clients/calibrations/llamaindex/0.6.0.json."""
    try:
        return Outcome(schema=parameters(schema))
    except (_Unbuildable, RecursionError) as exc:
        return Outcome(
            fail=(
                "server-dropped",
                Finding(
                    code="list-rejected",
                    message=(
                        f"McpToolSpec cannot build this tool's model ({exc}); "
                        "to_tool_list_async raises, so no tool of the server reaches the model"
                    ),
                    lost=True,
                    blast_radius="server",
                ),
            )
        )


@behaviour("llamaindex-call-name", "call")
def llamaindex_call_name(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """A call to a tool whose name the OpenAI tool spec changed is never sent.

    Observed: clients/calibrations/llamaindex/0.6.0.json."""
    shown = openai_name(ctx.tool)
    if shown == ctx.tool:
        return plan
    return plan.changed(
        "llamaindex-call-name",
        refused=Finding(
            code="client-refused",
            message=(
                f"the model is shown {shown!r}, but the agent looks calls up by the raw name "
                f"{ctx.tool!r}: it answers 'Tool {shown} not found' and sends nothing"
            ),
            blast_radius="call",
        ),
    )
