"""OpenAI Agents SDK for JavaScript (npm ``@openai/agents``): how an MCP tool becomes a function
tool, as of 0.20.0 (``@openai/agents-core`` ``dist/mcp.mjs`` ``mcpToFunctionTool``,
``dist/utils/tools.mjs`` ``toFunctionToolName``, ``getAllMcpTools``).

- ``agents-js-tool-name``: the tool is registered under ``toFunctionToolName(name)``: every
  UTF-16 unit outside ``[a-zA-Z0-9]`` becomes ``_`` (``-`` too: ``dash-name`` -> ``dash_name``,
  ``café`` -> ``caf_``); no prefix, no length limit. Two tools of the agent's servers with the same
  resulting name make ``getAllMcpTools`` throw ``UserError: Duplicate tool names found across
  MCP servers``: the run stops before any model request, so every tool is lost.
- ``agents-js-schema`` (non-strict, the default ``convertSchemasToStrict: false``): the schema is
  ``{...inputSchema, type: type ?? 'object', properties: properties ?? {}, required: required ??
  [], additionalProperties: true}``, so a server's ``additionalProperties: false`` reaches the
  model as ``true``.

Observed with @openai/agents 0.20.0 (clients/calibrations/openai-agents-js/0.20.0.json).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from mcp_matrix.behaviours.outcomes import label, note
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.behaviours.rewrite import Outcome, schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.materiality import renamed
from mcp_matrix.core.model import Finding, ListState, ToolState, evolve

_INVALID = re.compile(r"[^a-zA-Z0-9]")


def function_tool_name(name: str) -> str:
    """``toFunctionToolName``: each UTF-16 unit outside ``[a-zA-Z0-9]`` as ``_`` (a character
    beyond U+FFFF is two units, so two underscores)."""
    return _INVALID.sub(lambda m: "__" if ord(m.group()) > 0xFFFF else "_", name)


def rename_tools(
    state: ListState,
    clean: Callable[[str], str],
    how: str,
    clash: Callable[[ListState, ToolState, ToolState, str], ListState],
) -> ListState:
    """Each visible tool named ``clean(its name)``, with a note saying ``how``; the first cleaned
    name two tools share is ``clash(state, earlier, later, name)`` (libraries that build function
    tools and refuse duplicates: OpenAI Agents JS, smolagents)."""
    if state.outcome != "ok":
        return state
    tools = list(state.tools)
    owner: dict[str, int] = {}
    for i, tool in enumerate(tools):
        if tool.hidden:
            continue
        name = clean(tool.server_name)
        if name in owner:
            return clash(state, tools[owner[name]], tool, name)
        owner[name] = i
        if name != tool.name:
            finding = note(
                "name-sanitised",
                f"tool name {tool.server_name!r} becomes {name!r}: {how}",
                materiality=renamed(tool.server_name, name),
            )
            tools[i] = evolve(tool, name=name, findings=tool.findings + (finding,))
    return replace(state, tools=tuple(tools))


def _duplicate(state: ListState, earlier: ToolState, later: ToolState, name: str) -> ListState:
    return state.fail(
        "server-dropped",
        Finding(
            code="name-collision",
            message=(
                f"tools {label(earlier)!r} and {label(later)!r} both become {name!r}; the SDK "
                "throws 'Duplicate tool names found across MCP servers' before the first model "
                "request, so the agent run fails and no tool reaches the model"
            ),
            lost=True,
            blast_radius="server",
        ),
        culprit=later.index,
    )


@behaviour("agents-js-tool-name", "discovery")
def agents_js_tool_name(state: ListState) -> ListState:
    """The function tool's name; a name two tools share stops the whole run (UserError).

    Observed: clients/calibrations/openai-agents-js/0.20.0.json."""
    how = "every character outside [a-zA-Z0-9] ('-' included) is replaced by '_'"
    return rename_tools(state, function_tool_name, how, _duplicate)


@schema_rewrite("agents-js-schema")
def agents_js_schema(schema: JSON) -> Outcome:
    """The non-strict function tool's parameters: type, properties and required filled in when
    absent or null, and ``additionalProperties: true`` whatever the server said.

    Observed: clients/calibrations/openai-agents-js/0.20.0.json."""
    if not isinstance(schema, dict):
        return Outcome(schema=schema)
    out = {
        **schema,
        "type": schema.get("type") if schema.get("type") is not None else "object",
        "properties": schema.get("properties") if schema.get("properties") is not None else {},
        "required": schema.get("required") if schema.get("required") is not None else [],
        "additionalProperties": True,
    }
    findings: tuple[Finding, ...] = ()
    if schema.get("additionalProperties") is not True:
        findings = (
            note(
                "additional-properties-opened",
                "additionalProperties: true is set on the root (the server said "
                f"{schema.get('additionalProperties', 'nothing')!r}): the model is told any "
                "other key is allowed",
                "/additionalProperties",
                lost="additionalProperties" in schema,
            ),
        )
    return Outcome(schema=out, findings=findings)
