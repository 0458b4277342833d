"""Semantic Kernel (PyPI ``semantic-kernel``): what becomes of an MCP tool, as of semantic-kernel
1.45.0 (``semantic_kernel/connectors/mcp.py`` ``MCPPluginBase.load_tools``, ``_normalize_mcp_name``,
``_get_parameter_dicts_from_mcp_tool``; ``utils/validation.py``; ``kernel.py``
``invoke_function_call``).

- ``semantic-kernel-tools``: each tool becomes a kernel function of the plugin named after the
  server, shown to the model as ``<server>-<name>``, the name with every character outside
  ``[A-Za-z0-9_.-]`` as ``-``. A name that then still holds ``.`` (or is empty), a property key
  outside ``[0-9A-Za-z_-]``, or a property ``type`` that is not one string (a type list) fails
  validation when the agent is built: no agent, no tool of the server reaches the model. The plugin
  name must match ``[0-9A-Za-z_]`` too, but the user writes it (``MCPStdioPlugin(name=...)``), not
  the server: a server name outside it is modelled as the name a user would write, each other
  character as ``_`` (assumed), with a note, never as a loss of the server's. A property schema that is not an object makes the plugin's connect
  hang (observed: a boolean subschema, no model request until the timeout). A later tool whose
  cleaned name an earlier one took, or whose cleaned name is an attribute of the plugin object
  (``connect``, ``close``, ``name``, ``session``...), is skipped with a log line. The model sees
  ``{type: object, properties, required}``: each root property as the server wrote it, ``required``
  limited to declared properties, everything else of the root (``$defs``, combinators,
  ``additionalProperties``) gone.
- ``semantic-kernel-arguments``: a call missing a required property, or with a key that is no
  property, is answered "Missing required argument(s)" / "Received unexpected argument(s)" and not
  sent; values are sent as the model wrote them (no type check).

Observed with semantic-kernel 1.45.0 (clients/calibrations/semantic-kernel/1.45.0.json).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from mcp_matrix.behaviours.outcomes import label, note, refuse_call, run_failed
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.jsontypes import JSON, JSONObject
from mcp_matrix.core.materiality import renamed
from mcp_matrix.core.model import CallContext, CallPlan, Finding, ListState, ToolState, evolve

FUNCTION_NAME = re.compile(r"[0-9A-Za-z_-]+")  # FUNCTION_NAME_REGEX, FUNCTION_PARAM_NAME_REGEX
PLUGIN_NAME = re.compile(r"[0-9A-Za-z_]+")  # PLUGIN_NAME_REGEX
# dir(MCPStdioPlugin(name="probe", command="x")), the names a kernel function can have, 1.45.0.
PLUGIN_ATTRIBUTES = frozenset(
    [
        "added_to_kernel",
        "args",
        "call_tool",
        "close",
        "command",
        "connect",
        "description",
        "encoding",
        "env",
        "get_mcp_client",
        "get_prompt",
        "is_experimental",
        "kernel",
        "load_prompts",
        "load_prompts_flag",
        "load_tools",
        "load_tools_flag",
        "logging_callback",
        "message_handler",
        "name",
        "request_timeout",
        "sampling_auto_approve",
        "sampling_callback",
        "sampling_consent_callback",
        "session",
        "stage_status",
        "_client_kwargs",
        "_current_task",
        "_exit_stack",
        "_has_mcp_function_name_conflict",
        "_inner_connect",
        "_is_mcp_local_name_taken",
        "_is_sampling_approved",
        "_mcp_registered_names",
        "_mcp_reserved_attribute_names",
        "_sampling_auto_approved_warning_logged",
        "_stop_event",
    ]
)


def local_name(name: str) -> str:
    """``_normalize_mcp_name``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", name)


def parameters(schema: JSON) -> list[tuple[str, JSONObject]] | None:
    """(key, property schema) per root property, or None where building them raises."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not props:
        return []
    if not isinstance(props, dict):
        return None
    out: list[tuple[str, JSONObject]] = []
    for key, value in props.items():
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return None
        if not isinstance(value, dict):
            return None
        out.append((key, value))
    return out


def plugin_name(server: str) -> str:
    """The plugin name a user writes for ``server``: Semantic Kernel refuses one outside
    ``[0-9A-Za-z_]`` at once, and the user, not the server's author, picks it (assumed: each other
    character as ``_``)."""
    return server if PLUGIN_NAME.fullmatch(server) else re.sub(r"[^0-9A-Za-z_]", "_", server)


def _problem(tool: ToolState) -> str | None:
    """Why building the agent fails on this tool, or None."""
    name = local_name(tool.server_name)
    if not FUNCTION_NAME.fullmatch(name):
        return f"the function name {name!r} is outside [0-9A-Za-z_-] ('Failed to create KernelFunctionMetadata')"
    for key, value in parameters(_input_schema(tool)) or []:
        if not FUNCTION_NAME.fullmatch(key):
            return f"the property key {key!r} is outside [0-9A-Za-z_-] (KernelParameterMetadata)"
        kind = value.get("type")
        if kind is not None and not isinstance(kind, str):
            return f"property {key!r} has type {kind!r}, not one string (KernelParameterMetadata)"
    return None


def _dropped(state: ListState, tool: ToolState, why: str) -> ListState:
    message = f"tool {label(tool)!r}: {why}; no tool of the server reaches the model"
    return state.fail("server-dropped", run_failed(message), culprit=tool.index)


def _input_schema(tool: ToolState) -> JSON:
    """The tool's inputSchema as sent (None when the tool is not an object: such a tool drops
    the server before any reader here gets to it)."""
    return tool.original.get("inputSchema") if isinstance(tool.original, dict) else None


def _shown(tool: ToolState, params: list[tuple[str, JSONObject]]) -> dict:
    schema = _input_schema(tool)
    required = schema.get("required", []) if isinstance(schema, dict) else []
    required = required if isinstance(required, list) else []
    return {
        "type": "object",
        "properties": dict(params),
        "required": [k for k, _ in params if k in required],
    }


@behaviour("semantic-kernel-tools", "discovery")
def semantic_kernel_tools(state: ListState) -> ListState:
    """Kernel functions of the plugin: names, skipped tools, the parameters the model sees, and
    what stops the agent from being built.

    Observed: clients/calibrations/semantic-kernel/1.45.0.json."""
    if state.outcome != "ok":
        return state
    for tool in state.visible():
        if (
            not isinstance(tool.original, dict)
            or parameters(tool.original.get("inputSchema")) is None
        ):
            why = "a property schema is not an object: the plugin's connect never completes (hangs)"
            return _dropped(state, tool, why)
    tools = list(state.tools)
    taken: dict[str, str] = {}
    for i, tool in enumerate(tools):
        if tool.hidden:
            continue
        name = local_name(tool.server_name)
        if name in taken or name in PLUGIN_ATTRIBUTES:
            whose = (
                f"tool {taken[name]!r}" if name in taken else "an attribute of the plugin object"
            )
            tools[i] = tool.hide(
                Finding(
                    code="name-collision",
                    message=f"its kernel function name {name!r} is taken by {whose}: skipped with a log line",
                    lost=True,
                    blast_radius="tool",
                )
            )
            continue
        taken[name] = tool.server_name
    state = replace(state, tools=tuple(tools))
    for tool in state.visible():
        problem = _problem(tool)
        if problem:
            return _dropped(state, tool, f"{problem}; the agent is not built")
    tools = list(state.tools)
    plugin = plugin_name(state.server)
    for i, tool in enumerate(tools):
        if tool.hidden:
            continue
        local = local_name(tool.server_name)
        shown = f"{plugin}-{local}"
        schema = _shown(tool, parameters(_input_schema(tool)) or [])
        findings = tool.findings
        if local != tool.server_name:  # the <plugin>- prefix is a namespace, not a rename
            findings += (
                note(
                    "name-sanitised",
                    f"tool name {tool.server_name!r} is shown as {shown!r}",
                    materiality=renamed(tool.server_name, local),
                ),
            )
        if plugin != state.server:
            findings += (
                note(
                    "name-sanitised",
                    f"Semantic Kernel refuses the plugin name {state.server!r} (outside "
                    f"[0-9A-Za-z_]): the user names it, e.g. {plugin!r}",
                    materiality="none",
                ),
            )
        tools[i] = evolve(tool, name=shown, schema=schema, findings=findings)
    return replace(state, tools=tuple(tools))


@behaviour("semantic-kernel-arguments", "call")
def semantic_kernel_arguments(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """Missing required or unknown argument names are answered to the model, never sent.

    Observed: clients/calibrations/semantic-kernel/1.45.0.json."""
    if not isinstance(plan.arguments, dict):
        return plan
    held = ctx.held_tool.get("inputSchema") if isinstance(ctx.held_tool, dict) else ctx.held_schema
    params = parameters(held) or []
    keys = {k for k, _ in params}
    required = held.get("required", []) if isinstance(held, dict) else []
    missing = sorted(
        k for k in keys if isinstance(required, list) and k in required and k not in plan.arguments
    )
    unexpected = sorted(k for k in plan.arguments if k not in keys)
    if not missing and not unexpected:
        return plan
    parts = [f"Missing required argument(s): {missing}."] if missing else []
    parts += [f"Received unexpected argument(s): {unexpected}."] if unexpected else []
    return refuse_call(plan, "semantic-kernel-arguments", " ".join(parts))
