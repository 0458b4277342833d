"""Wiring: the low-level SDK ``Server`` around the schemas, identity rules and backend.

The low-level ``Server`` is used (not ``MCPServer``) so every ``inputSchema`` on the
wire is exactly the JSON in :mod:`.schemas`.

Call handling, in order:

1. unknown tool name -> JSON-RPC error ``-32602`` (``INVALID_PARAMS``, "Unknown tool"),
   raised as ``MCPError``; the SDK turns it into a JSON-RPC error response;
2. identity resolution (:mod:`.identity`) for the six identity tools;
3. validation of the arguments against the tool's own ``inputSchema`` (jsonschema);
4. the handler, which is the first and only place that touches the backend.

Steps 2 and 3 fail with a tool error result (``isError: true``) whose text tells the
model what to pass, never with a JSON-RPC error, and never after a backend call.
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from . import schemas
from .backend import Backend
from .identity import Rejected, resolve_identity

SERVER_NAME = "matrix-memory"
SERVER_VERSION = "0.1.0"

Handler = Callable[[Backend, str, dict[str, Any]], dict[str, Any]]


# --- tool handlers: (backend, resolved agent_id, validated arguments) -> structuredContent


def _memory_store(backend: Backend, agent_id: str, args: dict[str, Any]) -> dict[str, Any]:
    memory = backend.store(
        agent_id, args["content"], list(args.get("tags", [])), float(args.get("importance", 0.5))
    )
    return {"agent_id": agent_id, "memory": memory}


def _memory_recall(backend: Backend, agent_id: str, args: dict[str, Any]) -> dict[str, Any]:
    memories = backend.recall(
        agent_id, args.get("query"), list(args.get("tags", [])), int(args.get("limit", 10))
    )
    return {"agent_id": agent_id, "count": len(memories), "memories": memories}


def _memory_forget(backend: Backend, agent_id: str, args: dict[str, Any]) -> dict[str, Any]:
    deleted = backend.forget(agent_id, args["memory_id"])
    return {"agent_id": agent_id, "memory_id": args["memory_id"], "deleted": deleted}


def _summarize(action: str, memories: list[dict[str, Any]], text: str | None) -> str:
    if action == "summarize":
        if not memories:
            return "No memories to summarize."
        digest = "; ".join(m["content"] for m in memories[:5])
        more = f" (and {len(memories) - 5} more)" if len(memories) > 5 else ""
        return f"{len(memories)} memories: {digest}{more}"
    if action == "consolidate":
        seen: dict[str, list[int]] = {}
        for memory in memories:
            seen.setdefault(memory["content"].strip().casefold(), []).append(memory["id"])
        groups = [ids for ids in seen.values() if len(ids) > 1]
        if not groups:
            return f"No duplicates among {len(memories)} memories."
        listed = ", ".join("/".join(str(i) for i in sorted(ids)) for ids in groups)
        return f"{len(groups)} duplicate groups among {len(memories)} memories: {listed}"
    return f"Critique of {len(memories)} memories: {text or '(no critique text given)'}"


def _memory_reflect(backend: Backend, agent_id: str, args: dict[str, Any]) -> dict[str, Any]:
    action = args["action"]
    target = args.get("target")
    memories = [
        m
        for m in backend.recall(agent_id, None, [], 1000)
        if target is None or target.casefold() in m["content"].casefold() or target in m["tags"]
    ]
    confidence = float(args.get("confidence", 0.5))
    summary = _summarize(action, memories, args.get("text"))
    reflection_id = backend.add_reflection(
        agent_id, action, args.get("text"), target, confidence, summary
    )
    return {
        "reflection_id": reflection_id,
        "agent_id": agent_id,
        "action": action,
        "summary": summary,
        "memories_considered": len(memories),
        "confidence": confidence,
    }


def _checkpoint_save(backend: Backend, agent_id: str, args: dict[str, Any]) -> dict[str, Any]:
    return backend.save_checkpoint(agent_id, args.get("name", "default"), args["state"])


def _checkpoint_resume(backend: Backend, agent_id: str, args: dict[str, Any]) -> dict[str, Any]:
    name = args.get("name", "default")
    checkpoint = backend.load_checkpoint(agent_id, name)
    if checkpoint is None:
        return {
            "found": False,
            "agent_id": agent_id,
            "name": name,
            "reason": f"No checkpoint named {name!r} has been saved for this agent_id.",
        }
    return {"found": True, **checkpoint}


def _memory_stats(backend: Backend, _agent_id: str, _args: dict[str, Any]) -> dict[str, Any]:
    return dict(backend.stats())


HANDLERS: dict[str, Handler] = {
    schemas.MEMORY_STORE: _memory_store,
    schemas.MEMORY_RECALL: _memory_recall,
    schemas.MEMORY_FORGET: _memory_forget,
    schemas.MEMORY_REFLECT: _memory_reflect,
    schemas.CHECKPOINT_SAVE: _checkpoint_save,
    schemas.CHECKPOINT_RESUME: _checkpoint_resume,
    schemas.MEMORY_STATS: _memory_stats,
}


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _schema_problems(tool: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    import jsonschema  # here, at the first call: a session that only lists tools never needs it

    validator = jsonschema.Draft202012Validator(tool["inputSchema"])
    problems = []
    for err in sorted(validator.iter_errors(arguments), key=lambda e: list(map(str, e.path))):
        where = "/".join(str(p) for p in err.path)
        problems.append(f"{where}: {err.message}" if where else err.message)
    return problems


def call_tool(
    tools: dict[str, dict[str, Any]],
    backend: Backend,
    name: str,
    arguments: dict[str, Any] | None,
) -> types.CallToolResult:
    """Run one tools/call; transport-independent, so tests can call it directly.

    Raises ``MCPError(INVALID_PARAMS)`` for an unknown tool name; every other
    failure is a tool error result.
    """
    tool = tools.get(name)
    if tool is None:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"Unknown tool: {name}. Available tools: {', '.join(tools)}.",
        )
    args = dict(arguments or {})

    agent_id = ""
    if name in schemas.IDENTITY_TOOLS:
        identity = resolve_identity(name, args, accept_alias=schemas.IDENTITY_TOOLS[name])
        if isinstance(identity, Rejected):
            return _error(identity.message)
        agent_id = identity.agent_id

    problems = _schema_problems(tool, args)
    if problems:
        return _error(
            f"Invalid arguments for {name}: {'; '.join(problems)}. "
            f"Check the tool's input schema and call again. Nothing was read or written."
        )

    try:
        structured = HANDLERS[name](backend, agent_id, args)
    except sqlite3.Error as exc:
        return _error(f"{name} failed in the memory store: {exc}")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(structured, ensure_ascii=False))],
        structured_content=structured,
    )


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


def _decode_cursor(cursor: str, total: int) -> int:
    try:
        offset = json.loads(base64.urlsafe_b64decode(cursor.encode()))["offset"]
    except (ValueError, KeyError, TypeError) as exc:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid cursor: {cursor!r}") from exc
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset < total:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid cursor: {cursor!r}")
    return offset


def list_tools_page(
    tools: list[dict[str, Any]], cursor: str | None, page_size: int | None
) -> types.ListToolsResult:
    """One tools/list page; ``nextCursor`` is an opaque token, absent on the last page."""
    offset = 0 if cursor is None else _decode_cursor(cursor, len(tools))
    size = page_size or len(tools)
    page = tools[offset : offset + size]
    next_offset = offset + size
    return types.ListToolsResult(
        tools=[types.Tool.model_validate(t) for t in page],
        next_cursor=_encode_cursor(next_offset) if next_offset < len(tools) else None,
    )


_log_lock = threading.Lock()


def log_call(path: str, ctx: ServerRequestContext[Any], name: str, arguments: Any) -> None:
    """Append one JSON line per tools/call received (before it is handled), flushed at once:
    which client sent it (clientInfo name/version, absent in the 2026-07-28 era), from which
    server process, so a test can count what reached the server per session and per client."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    line = json.dumps(
        {
            "tool": name,
            "arguments": arguments,
            "client": f"{info.name}/{info.version}" if info is not None else None,
            "pid": os.getpid(),
        },
        ensure_ascii=False,
    )
    with _log_lock, open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
        fh.flush()


def build_server(
    backend: Backend,
    *,
    schema: schemas.SchemaVariant = "flat",
    page_size: int | None = None,
    call_log: str | None = None,
) -> Server[Any]:
    """The MCP server over ``backend`` (inject a spy or fake here in tests); ``call_log``: a file
    that gets one line per tools/call received (``log_call``)."""
    if page_size is not None and page_size < 1:
        raise ValueError("page_size must be at least 1")
    definitions = schemas.tool_definitions(schema)
    by_name = {t["name"]: t for t in definitions}

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return list_tools_page(definitions, params.cursor if params else None, page_size)

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if call_log:
            log_call(call_log, ctx, params.name, params.arguments)
        return call_tool(by_name, backend, params.name, params.arguments)

    def input_schema(name: str) -> dict[str, Any] | None:
        tool = by_name.get(name)
        return tool["inputSchema"] if tool else None

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=(
            "Long-term memory for agents. Every tool except memory_stats needs agent_id, "
            "the agent's namespace."
        ),
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
