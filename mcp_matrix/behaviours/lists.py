"""List-level discovery behaviours: gates, pagination, caps (docs/clients/sdks.md, anthropic.md,
vercel.md, cursor-windsurf.md).

These see the whole ``tools/list`` at once, so they can model what one tool does to the
others: a Zod parse that rejects the whole list, a page never read, a tool cap.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import label, param
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.behaviours.rewrite import memo_cache
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding, ListState
from mcp_matrix.core.verdicts import V


@behaviour("pass-through", "discovery")
def pass_through(state: ListState) -> ListState:
    """Show the list as the server sent it (probe profiles whose point is a later phase)."""
    return state


@behaviour(
    "pagination",
    "discovery",
    params={
        "mode": param(
            ["all", "first-page"],
            "all: follows nextCursor; first-page: one tools/list call without a cursor loop.",
            "all",
        ),
        "max_pages": param(
            "integer",
            "Stop after this many pages (0: no cap; LangChain stops at 1000).",
            0,
            minimum=0,
        ),
    },
)
def pagination(state: ListState, mode: str = "all", max_pages: int = 0) -> ListState:
    """Hide tools on pages the client never reads (Claude Code before 2.1.144, Gemini CLI, Vercel, Cline,
    Roo, Continue: their pages in docs/clients/, e.g. docs/clients/anthropic.md#claude-code).

    Claude Code before 2.1.144, Gemini CLI, Vercel AI SDK, Cline, Roo and Continue call
    ``tools/list`` once with no cursor loop: only the first page is read.
    """
    if state.outcome != "ok":
        return state
    last = 1 if mode == "first-page" else (max_pages or None)
    if last is None:
        return state
    tools = list(state.tools)
    why = (
        "this client reads only the first page (one tools/list call, no nextCursor loop)"
        if mode == "first-page"
        else f"this client stops after {last} pages"
    )
    unread: dict[int, Finding] = {}  # one finding per page, shared by the tools on it
    for i, tool in enumerate(tools):
        if not tool.hidden and tool.page >= last:
            finding = unread.get(tool.page)
            if finding is None:
                finding = unread[tool.page] = Finding(
                    code="page-not-read",
                    message=f"tool is on page {tool.page + 1} of tools/list; {why}",
                    lost=True,
                )
            tools[i] = tool.hide(finding)
    return replace(state, tools=tuple(tools))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3]) or (0,)


def _describe(value: JSON) -> str:
    try:
        return json.dumps(value)[:40]
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__


_TS_SDK = (
    memo_cache()
)  # (id(ToolState), version, outputs, booleans) -> (ToolState, _ts_sdk_problem)


def _ts_sdk_problem(
    tool: JSON, version: tuple, outputs: bool, booleans: bool = True
) -> tuple[str, str] | None:
    """Why the TS SDK's Zod ToolSchema rejects ``tool`` (docs/clients/sdks.md#typescript-sdk), as (pointer, reason)."""
    if not isinstance(tool, dict):
        return "", "the tool is not a JSON object"
    if not isinstance(tool.get("name"), str):
        return "/name", "name is missing or not a string"
    if "description" in tool and not isinstance(tool["description"], str):
        return "/description", "description is not a string"
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return "/inputSchema", "inputSchema is missing or not an object"
    if schema.get("type") != "object":
        got = "missing" if "type" not in schema else _describe(schema["type"])
        return "/inputSchema/type", f'inputSchema.type is {got}, expected "object"'
    if "properties" in schema:
        props = schema["properties"]
        if not isinstance(props, dict):
            return "/inputSchema/properties", "inputSchema.properties is not an object"
        if booleans and version >= (1, 24):
            for key, sub in props.items():
                if not isinstance(sub, dict):
                    return (
                        f"/inputSchema/properties/{W.escape(key)}",
                        (
                            f"property {key!r} has a non-object schema ({_describe(sub)}), which "
                            "the SDK rejects from 1.24 (zod v4: every property schema is an object)"
                        ),
                    )
    if "required" in schema:
        req = schema["required"]
        if not (isinstance(req, list) and all(isinstance(x, str) for x in req)):
            return "/inputSchema/required", "inputSchema.required is not a list of strings"
    if outputs and version >= (1, 13) and tool.get("outputSchema") is not None:
        out = tool["outputSchema"]
        if not isinstance(out, dict) or out.get("type") != "object":
            return "/outputSchema/type", 'outputSchema.type is not "object"'
    return None


@behaviour(
    "ts-sdk-gate",
    "discovery",
    params={
        "sdk_version": param(
            "string",
            "@modelcontextprotocol/sdk version the client bundles; boolean property schemas "
            "are rejected from 1.24, outputSchema checked from 1.13.",
            "1.29.0",
            pattern=r"^\d+\.\d+(\.\d+)?$",
        ),
        "check_output_schema": param("boolean", "Apply the outputSchema type-object check.", True),
        "check_boolean_properties": param(
            "boolean",
            "Reject boolean property schemas (from 1.24); Claude Code lists them (observed).",
            True,
        ),
    },
)
def ts_sdk_gate(
    state: ListState,
    sdk_version: str = "1.29.0",
    check_output_schema: bool = True,
    check_boolean_properties: bool = True,
) -> ListState:
    """One tool failing the TS SDK's Zod ToolSchema rejects the whole list (docs/clients/sdks.md#typescript-sdk).

    ``ListToolsResultSchema`` parses the whole ``tools`` array, so one ``inputSchema``
    without ``type: "object"`` (or a boolean property schema from 1.24, or an
    ``outputSchema`` without ``type: "object"``) loses every tool of the server
    (claude-code#88049, #10030, opentokenz/mcpx#28).
    """
    if state.outcome != "ok":
        return state
    version = _version(sdk_version)
    for tool in state.tools:
        if tool.hidden:  # never parsed (e.g. on a page the client does not read)
            continue
        # Profiles share the initial ToolStates (frozen, and ``original`` never changes):
        # each tool is parsed once per SDK version, not once per profile.
        key = (id(tool), version, check_output_schema, check_boolean_properties)
        hit = _TS_SDK.get(key)
        if hit is None or hit[0] is not tool:
            hit = _TS_SDK[key] = (
                tool,
                _ts_sdk_problem(
                    tool.original, version, check_output_schema, check_boolean_properties
                ),
            )
        problem = hit[1]
        if problem is not None:
            ptr, why = problem
            return state.fail(
                "server-dropped",
                Finding(
                    code="list-rejected",
                    message=(
                        f"tool {label(tool)!r}: {why}; the MCP TypeScript SDK (Zod "
                        "ListToolsResultSchema) rejects the whole tools/list result, so the "
                        "client loses every tool of this server"
                    ),
                    pointer=ptr,
                    lost=True,
                    blast_radius="server",
                ),
                culprit=tool.index,
            )
    return state


@behaviour(
    "lenient-sdk-gate",
    "discovery",
    params={
        "check_output_schema": param(
            "boolean", "outputSchema, when present, must be an object.", True
        ),
    },
)
def lenient_sdk_gate(state: ListState, check_output_schema: bool = True) -> ListState:
    """Vercel AI SDK's own Zod gate: inputSchema must be an object, any ``type`` (docs/clients/vercel.md#vercel-ai-sdk, docs/clients/sdks.md#typescript-sdk).

    ``properties``, if present, must be an object; ``outputSchema`` any object. The parse
    covers the whole result, so a failure loses every tool of the server.
    """
    if state.outcome != "ok":
        return state
    for tool in state.tools:
        if tool.hidden:
            continue
        raw = tool.original
        why: str | None = None
        ptr = ""
        if not isinstance(raw, dict):
            why, ptr = "the tool is not a JSON object", ""
        elif not isinstance(raw.get("inputSchema"), dict):
            why, ptr = "inputSchema is missing or not an object", "/inputSchema"
        elif "properties" in raw["inputSchema"] and not isinstance(
            raw["inputSchema"]["properties"], dict
        ):
            why, ptr = "inputSchema.properties is not an object", "/inputSchema/properties"
        elif (
            check_output_schema
            and raw.get("outputSchema") is not None
            and not isinstance(raw["outputSchema"], dict)
        ):
            why, ptr = "outputSchema is not an object", "/outputSchema"
        if why:
            return state.fail(
                "server-dropped",
                Finding(
                    code="list-rejected",
                    message=f"tool {label(tool)!r}: {why}; the client's tools/list parse fails, "
                    "so it loses every tool of this server",
                    pointer=ptr,
                    lost=True,
                    blast_radius="server",
                ),
                culprit=tool.index,
            )
    return state


@behaviour(
    "server-name",
    "discovery",
    params={
        "pattern": param(
            "string",
            "Full-match regex a server name must satisfy.",
            "^[A-Za-z0-9_-]+$",
            format="regex",
        ),
        "on_invalid": param(
            ["server-dropped", "keep"], "What an invalid server name does.", "server-dropped"
        ),
    },
)
def server_name(
    state: ListState, pattern: str = "^[A-Za-z0-9_-]+$", on_invalid: str = "server-dropped"
) -> ListState:
    """A server whose configured name fails the client's rule never starts (Codex, docs/clients/openai.md#codex)."""
    if state.outcome != "ok" or on_invalid == "keep" or re.fullmatch(pattern, state.server):
        return state
    return state.fail(
        "server-dropped",
        Finding(
            code="server-name-invalid",
            message=f"server name {state.server!r} does not match {pattern}; the client fails "
            "this server's startup, so none of its tools are listed",
            lost=True,
            blast_radius="server",
        ),
    )


@behaviour(
    "max-tools",
    "discovery",
    params={
        "limit": param(
            "integer",
            "The most tools the client takes (128 is the widely reported "
            "OpenAI/VS Code figure, unverified).",
            128,
            minimum=0,
        ),
        "policy": param(
            ["drop-excess", "refuse-server", "session-broken"],
            "drop-excess: tools past the cap are not sent; refuse-server: the server is refused; "
            "session-broken: every request fails (JetBrains Copilot, microsoft/copilot-intellij-feedback#1842).",
            "drop-excess",
        ),
    },
)
def max_tools(state: ListState, limit: int = 128, policy: str = "drop-excess") -> ListState:
    """Cap the number of tools (Cursor 40 docs/clients/cursor-windsurf.md#cursor, Windsurf 50/100 refuses the server docs/clients/cursor-windsurf.md#windsurf).

    Clients count tools across all servers; the simulation sees one server, so this is
    the best case: the cap is reached only by this server's own tools.
    """
    if state.outcome != "ok":
        return state
    visible = [i for i, t in enumerate(state.tools) if not t.hidden]
    if len(visible) <= limit:
        return state
    if policy == V.SESSION_BROKEN.name:
        return state.fail(
            "session-broken",
            Finding(
                code="too-many-tools",
                message=f"the server offers {len(visible)} tools; over the client's limit of "
                f"{limit} every request fails",
                blast_radius="session",
            ),
        )
    if policy == "refuse-server":
        return state.fail(
            "server-dropped",
            Finding(
                code="too-many-tools",
                message=f"the server offers {len(visible)} tools; the client refuses a server "
                f"that would exceed its limit of {limit} tools",
                lost=True,
                blast_radius="server",
            ),
        )
    tools = list(state.tools)
    for rank, i in enumerate(visible[limit:], start=limit + 1):
        tools[i] = tools[i].hide(
            Finding(
                code="over-tool-cap",
                message=f"tool {rank} of {len(visible)}; the client sends only the first "
                f"{limit} tools",
                lost=True,
            )
        )
    return replace(state, tools=tuple(tools))


@behaviour(
    "combined-name-limit",
    "discovery",
    params={
        "limit": param("integer", "Maximum of len(server) + len(tool).", 60, minimum=1),
        "inclusive": param("boolean", "A sum equal to the limit is already filtered.", True),
    },
)
def combined_name_limit(state: ListState, limit: int = 60, inclusive: bool = True) -> ListState:
    """Filter tools whose server + tool name length reaches the limit (Cursor, docs/clients/cursor-windsurf.md#cursor).

    Cursor warns "Combined server and tool name length (N) exceeds 60 characters" with
    N = len(server) + len(tool), no separator, and N = 60 already filtered (awslabs/mcp#1283).
    """
    if state.outcome != "ok":
        return state
    tools = list(state.tools)
    for i, tool in enumerate(tools):
        if tool.hidden:
            continue
        n = len(state.server) + len(tool.server_name)
        if n > limit or (inclusive and n == limit):
            tools[i] = tool.hide(
                Finding(
                    code="name-too-long",
                    message=f"combined server and tool name length ({n}) exceeds {limit} "
                    f"characters ({state.server!r} + {tool.server_name!r}); the client filters "
                    "the tool out",
                    lost=True,
                )
            )
    return replace(state, tools=tuple(tools))
