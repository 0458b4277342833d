"""The official MCP Python SDK's ``tools/list`` gate (``mcp`` 2.x, ``mcp_types``).

From 2.0 the SDK client validates every server result against the wire model of the
negotiated protocol era before parsing it (``ClientSession.send_request`` calls
``mcp_types.methods.validate_server_result``), and ``ListToolsResult`` holds the whole
``tools`` array: one tool that fails the model fails ``list_tools()``, so the application
gets no tool of that server. Pydantic validates in lax mode: ``1`` and ``"yes"`` pass where a
boolean is expected, a number never passes for a string.

Every library on the SDK inherits this (openai-agents, google-adk, pydantic-ai, litellm, the
langchain adapters on mcp 1.x do not: 1.x had no wire models). Sources: ``mcp_types/_v2025_11_25``
``Tool``/``InputSchema``/``OutputSchema``/``ToolAnnotations`` and ``mcp_types/_v2026_07_28``
``InputSchema``/``OutputSchema`` in mcp-types 2.3.0; ``mcp/client/session.py`` 2.3.0 ``send_request``.
Not modelled: ``icons`` and ``execution`` contents (rarely sent; their checks are not read
here), and the 2026-07-28 per-tool ``x-mcp-header`` drop.
"""

from __future__ import annotations

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import label, param
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding, ListState
from mcp_matrix.core.verdicts import V

ERAS = ("2025-11-25", "2026-07-28")
# Strings pydantic's lax mode reads as booleans (case-insensitive).
_LAX_BOOL_STRINGS = {"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"}
_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def lax_bool(value: JSON) -> bool:
    """Whether pydantic's lax mode accepts ``value`` for a ``bool`` field."""
    if isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return value in (0, 1)
    return isinstance(value, str) and value.strip().lower() in _LAX_BOOL_STRINGS


def _optional_str(tool: dict, key: str) -> bool:
    return tool.get(key) is None or isinstance(tool[key], str)


def _schema_problem(schema: JSON, where: str, era: str, output: bool) -> tuple[str, str] | None:
    """(pointer, why) when ``schema`` fails the era's InputSchema / OutputSchema model."""
    if not isinstance(schema, dict):
        return f"/{where}", f"{where} is not a JSON object"
    if not (schema.get("$schema") is None or isinstance(schema["$schema"], str)):
        return f"/{where}/$schema", f"{where}.$schema is not a string"
    if era == "2026-07-28" and output:
        return None  # 2026-07-28: any JSON Schema object may describe the output
    if schema.get("type") != "object":
        got = "missing" if "type" not in schema else repr(schema["type"])
        return f"/{where}/type", f'{where}.type is {got}, the SDK requires "object"'
    if era == "2026-07-28":
        return None  # the 2026 InputSchema declares only $schema and type
    props = schema.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            return f"/{where}/properties", f"{where}.properties is not an object"
        for key, sub in props.items():
            if not (isinstance(sub, dict) or lax_bool(sub)):
                return (
                    f"/{where}/properties/{W.escape(str(key))}",
                    f"{where}.properties[{key!r}] is neither a schema object nor a boolean",
                )
    req = schema.get("required")
    if req is not None and not (isinstance(req, list) and all(isinstance(x, str) for x in req)):
        return f"/{where}/required", f"{where}.required is not a list of strings"
    return None


def python_sdk_problem(tool: JSON, era: str = "2025-11-25") -> tuple[str, str] | None:
    """(pointer, why) when one tool fails the SDK's wire ``Tool`` model, else None."""
    if not isinstance(tool, dict):
        return "", "the tool is not a JSON object"
    if not isinstance(tool.get("name"), str):
        return "/name", "name is missing or not a string"
    for key in ("description", "title"):
        if not _optional_str(tool, key):
            return f"/{key}", f"{key} is not a string"
    if "inputSchema" not in tool:
        return "/inputSchema", "inputSchema is missing"
    problem = _schema_problem(tool["inputSchema"], "inputSchema", era, output=False)
    if problem:
        return problem
    if tool.get("outputSchema") is not None:
        problem = _schema_problem(tool["outputSchema"], "outputSchema", era, output=True)
        if problem:
            return problem
    ann = tool.get("annotations")
    if ann is not None:
        if not isinstance(ann, dict):
            return "/annotations", "annotations is not an object"
        if not _optional_str(ann, "title"):
            return "/annotations/title", "annotations.title is not a string"
        for hint in _HINTS:
            if ann.get(hint) is not None and not lax_bool(ann[hint]):
                return f"/annotations/{hint}", f"annotations.{hint} is not a boolean"
    if tool.get("_meta") is not None and not isinstance(tool["_meta"], dict):
        return "/_meta", "_meta is not an object"
    return None


@behaviour(
    "python-sdk-gate",
    "discovery",
    params={
        "era": param(
            list(ERAS),
            "The protocol era the session negotiates: every version before 2026-07-28 is "
            "validated against the 2025-11-25 models.",
            "2025-11-25",
        ),
    },
)
def python_sdk_gate(state: ListState, era: str = "2025-11-25") -> ListState:
    """One tool failing the Python SDK's wire Tool model fails the whole tools/list (mcp 2.x).

    1.x had no such gate (docs/clients/sdks.md#python-sdk); 2.x validates the result
    against the negotiated era's wire models (module docstring). ``list_tools()`` raises: a
    client that catches it loses the server; a library that lets it out ends the program's run
    (``list-failure-raises``, after this entry).
    """
    if state.outcome != "ok":
        return state
    for tool in state.tools:
        if tool.hidden:
            continue
        problem = python_sdk_problem(tool.original, era)
        if problem is None:
            continue
        ptr, why = problem
        return state.fail(
            V.SERVER_DROPPED.name,
            Finding(
                code="list-rejected",
                message=(
                    f"tool {label(tool)!r}: {why}; the MCP Python SDK validates the whole "
                    "tools/list result (pydantic ValidationError), so list_tools() raises and "
                    "the client loses every tool of this server"
                ),
                pointer=ptr,
                lost=True,
                blast_radius="server",
            ),
            culprit=tool.index,
        )
    return state
