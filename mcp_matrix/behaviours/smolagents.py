"""smolagents (PyPI ``smolagents``, MCP tools through ``mcpadapt``): what becomes of an MCP tool, as
of smolagents 1.26.0 and mcpadapt 0.1.19 (``mcpadapt/smolagents_adapter.py`` ``adapt`` and
``_sanitize_function_name``; ``smolagents/tools.py`` ``Tool.validate_arguments`` and
``validate_tool_arguments``; ``smolagents/models.py`` ``get_tool_json_schema``).

- ``smolagents-gate``: ``adapt`` reads ``inputSchema["properties"]`` and writes into each value,
  and ``Tool.__init__`` checks every input's type against smolagents' own list: one tool without a
  ``properties`` object, with a property that is not an object, or with a type outside
  ``string, boolean, integer, number, image, audio, array, object, any, null`` raises, and
  ``ToolCollection.from_mcp`` fails: no tool of the server reaches the model. A ``$ref`` cycle
  raises ``Circular reference detected`` when the first model request is built.
- ``smolagents-tool-name``: ``-`` becomes ``_``, every other character outside ``\\w`` is deleted
  (``probe.dotted`` -> ``probedotted``, ``café`` stays), a leading digit gets ``_``, a Python
  keyword a trailing ``_``; two tools with the same result make ``ToolCallingAgent`` raise
  ``Each tool or managed_agent should have a unique name!`` before any model request.
- ``smolagents-schema``: the model sees ``{type: object, properties, required}`` only: every
  ``$ref`` replaced by its target (``jsonref``, siblings dropped), each property given
  ``description: "see tool description"`` and ``type: "string"`` when it has none, ``any`` as
  ``string``, a property ``anyOf`` turned into a type (a list when several) with ``nullable`` for a
  null variant, and ``required`` listing every property not marked ``nullable`` before that.
- ``smolagents-validate``: before a call, every argument must be a declared input of the declared
  JSON type (an integer passes for a number, null only where ``nullable``), and every input not
  marked ``nullable`` must be given; otherwise the model gets the error and the server nothing.

Observed with smolagents 1.26.0 (clients/calibrations/smolagents/1.26.0.json).
"""

from __future__ import annotations

import keyword
import re

from mcp_matrix.behaviours.openai_agents_js import rename_tools
from mcp_matrix.behaviours.outcomes import diff_findings, label, note, refuse_call
from mcp_matrix.behaviours.refs import inline
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.behaviours.rewrite import Outcome, schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, CallPlan, Finding, ListState, ToolState

TYPES = (
    "string",
    "boolean",
    "integer",
    "number",
    "image",
    "audio",
    "array",
    "object",
    "any",
    "null",
)
STAND_IN = "see tool description"


def function_name(name: str) -> str:
    """mcpadapt's ``_sanitize_function_name``."""
    name = re.sub(r"[^\w_]", "", name.replace("-", "_"))
    if name and name[0].isdigit():
        name = f"_{name}"
    return f"{name}_" if keyword.iskeyword(name) else name


_INPUTS: dict[int, tuple[JSON, dict | None]] = {}


def inputs(schema: JSON) -> dict | None:
    """The smolagents ``Tool.inputs`` mcpadapt builds, or None when building them raises.

    Built once per schema object (smolagents builds them once per tool, not per call; a
    replay checked every call of a tool against the same held schema). Read, never changed."""
    hit = _INPUTS.get(id(schema))
    if hit is None or hit[0] is not schema:
        if len(_INPUTS) >= 4096:
            _INPUTS.clear()
        hit = _INPUTS[id(schema)] = (schema, _adapted(schema)[0])  # holding it keeps its id
    return hit[1]


def _adapted(schema: JSON) -> tuple[dict | None, bool]:
    """(``inputs``, whether every ``$ref`` resolved without a cycle), from one walk."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None, True
    done = inline(schema, form="any-pointer", merge=lambda target, siblings: target)
    out = {}
    for key, value in done.schema["properties"].items():
        if not isinstance(value, dict):
            return None, not done.cycles
        value = dict(value)
        value.setdefault("description", STAND_IN)
        value.setdefault("type", "string")
        out[key] = value
    return out, not done.cycles


def _type_problem(value: dict) -> str | None:
    kind = value["type"]
    kinds = [kind] if isinstance(kind, str) else kind
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        return f"type {kind!r} is not a string or a list of strings"
    bad = [k for k in kinds if k not in TYPES]
    return f"types {bad} are not smolagents types" if bad else None


def _gate_problem(schema: JSON) -> str | None:
    if not isinstance(schema, dict) or "properties" not in schema:
        return "inputSchema has no 'properties' (KeyError in mcpadapt's adapt)"
    if not isinstance(schema["properties"], dict):
        return "inputSchema.properties is not an object"
    held, acyclic = _adapted(schema)
    if held is None:
        return "a property schema is not an object"
    for key, value in held.items():
        problem = _type_problem(value)
        if problem:
            return f"input {key!r}: {problem} (smolagents Tool.validate_arguments)"
    if not acyclic:
        return "a $ref cycle: building the model request raises 'Circular reference detected'"
    return None


def _failure(who: str, why: str) -> Finding:
    return Finding(
        code="list-rejected",
        message=(
            f"{who}: {why}; ToolCollection.from_mcp (or the agent) raises, so the agent run "
            "fails and no tool of the server reaches the model"
        ),
        lost=True,
        blast_radius="server",
    )


def _fail(state: ListState, tool: ToolState, why: str) -> ListState:
    return state.fail("server-dropped", _failure(f"tool {label(tool)!r}", why), culprit=tool.index)


@schema_rewrite("smolagents-gate", report_losses=False)
def smolagents_gate(schema: JSON) -> Outcome:
    """One tool mcpadapt or smolagents cannot adapt fails the whole run (run on the served
    schema, before any rewrite).

    Observed: clients/calibrations/smolagents/1.26.0.json."""
    problem = _gate_problem(schema)
    if problem is None:
        return Outcome(schema=schema)
    return Outcome(fail=("server-dropped", _failure("this tool", problem)))


def _duplicate(state: ListState, earlier: ToolState, later: ToolState, name: str) -> ListState:
    why = (
        f"it and {label(earlier)!r} both become {name!r} (ToolCallingAgent: 'Each tool or "
        "managed_agent should have a unique name!')"
    )
    return _fail(state, later, why)


@behaviour("smolagents-tool-name", "discovery")
def smolagents_tool_name(state: ListState) -> ListState:
    """The Python-identifier name; a name two tools share fails the run.

    Observed: clients/calibrations/smolagents/1.26.0.json."""
    empty = next((t for t in state.visible() if not function_name(t.server_name)), None)
    if state.outcome == "ok" and empty is not None:
        return _fail(state, empty, "its name cleans to nothing (IndexError in mcpadapt)")
    how = "'-' as '_', every other character outside \\w deleted"
    return rename_tools(state, function_name, how, _duplicate)


def _model_property(value: dict) -> dict:
    """``get_tool_json_schema``'s rewrite of one input."""
    out = dict(value)
    if out["type"] == "any":
        out["type"] = "string"
    variants = out.get("anyOf")
    if isinstance(variants, list):
        kinds, enum = [], None
        for v in variants:
            kind = v.get("type") if isinstance(v, dict) else None
            if kind == "null":
                out["nullable"] = True
                continue
            kinds.append("string" if kind == "any" else kind)
            if isinstance(v, dict) and "enum" in v:
                enum = v["enum"]
        if kinds:
            out["type"] = kinds if len(kinds) > 1 else kinds[0]
        if enum is not None:
            out["enum"] = enum
        del out["anyOf"]
    return out


@schema_rewrite("smolagents-schema", report_losses=False)
def smolagents_schema(schema: JSON) -> Outcome:
    """``{type: object, properties, required}`` as smolagents sends it (see the module doc).

    Observed: clients/calibrations/smolagents/1.26.0.json."""
    held = inputs(schema)
    if held is None or not isinstance(schema, dict):  # inputs are built only from an object
        return Outcome(schema=schema)
    properties = {k: _model_property(v) for k, v in held.items()}
    required = [k for k, v in held.items() if not v.get("nullable")]
    out = {"type": "object", "properties": properties, "required": required}
    findings: tuple[Finding, ...] = ()
    added = [k for k in required if k not in (schema.get("required") or [])]
    if added:
        findings = (
            note(
                "made-required",
                f"every property is marked required for the model: {added[:5]} were optional",
                "/required",
            ),
        )
    # an anyOf of bare types said as type + nullable keeps what the model may send: not a loss
    return Outcome(schema=out, findings=findings + diff_findings(schema, out, "smolagents-schema"))


_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array"}


def _json_type(value: JSON) -> str:
    if value is None:
        return "null"
    return _JSON_TYPES.get(type(value), "object")


def _refusal(held: dict, arguments: JSON) -> str | None:
    if not isinstance(arguments, dict):
        return None
    for key, value in arguments.items():
        if key not in held:
            return f"Argument {key} is not in the tool's input schema"
        expected = held[key]["type"]
        actual = _json_type(value)
        wrong = actual != expected if isinstance(expected, str) else actual not in expected
        if wrong and expected != "any" and not (actual == "null" and held[key].get("nullable")):
            if actual == "integer" and expected == "number":
                continue
            return f"Argument {key} has type '{actual}' but should be '{expected}'"
    for key, value in held.items():
        if key not in arguments and not value.get("nullable"):
            return f"Argument {key} is required"
    return None


@behaviour("smolagents-validate", "call")
def smolagents_validate(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """Refuse a call smolagents' ``validate_tool_arguments`` rejects (types by the adapted inputs).

    Observed: clients/calibrations/smolagents/1.26.0.json."""
    original = ctx.held_tool.get("inputSchema") if isinstance(ctx.held_tool, dict) else None
    held = inputs(original)
    why = _refusal(held, plan.arguments) if held is not None else None
    if why is None:
        return plan
    return refuse_call(plan, "smolagents-validate", why)
