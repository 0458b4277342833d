"""Transport-independent handling of the probe server's JSON-RPC messages (standard library).

``Probe.handle(message)`` returns the answer (or ``None`` for a notification). ``tools/list``
answers with the tools exactly as loaded from the JSON file (one page, or pages of
``page_size``); ``tools/call`` answers with the arguments it received as JSON text, so the
tap and the client's tool result both show what arrived.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"
SERVER_INFO = {"name": "mcp-matrix-probe", "version": "1"}


@dataclass
class Probe:
    tools: list[Any]
    page_size: int = 0  # 0: every tool on one page
    calls: list[dict] = field(default_factory=list)

    def handle(self, message: Any) -> dict | list | None:
        if isinstance(message, list):
            answers = [a for a in (self.handle(m) for m in message) if a is not None]
            return answers or None
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return None  # a response to nothing we asked, or junk: nothing to answer
        method, params = message["method"], message.get("params")
        if "id" not in message:
            return None  # notifications (initialized, cancelled, roots/list_changed)
        msg_id = message["id"]
        params = params if isinstance(params, dict) else {}
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in SUPPORTED_VERSIONS else LATEST_VERSION
            return _result(
                msg_id,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": SERVER_INFO,
                },
            )
        if method == "ping":
            return _result(msg_id, {})
        if method == "tools/list":
            return _result(msg_id, self._page(params.get("cursor")))
        if method == "tools/call":
            return _result(msg_id, self._call(params))
        if method in ("prompts/list", "resources/list", "resources/templates/list"):
            key = {"prompts/list": "prompts", "resources/list": "resources"}.get(
                method, "resourceTemplates"
            )
            return _result(msg_id, {key: []})
        return {
            "jsonrpc": "2.0",
            "id": msg_id,
            "error": {"code": -32601, "message": f"Method not found: {method}"},
        }

    def _page(self, cursor: Any) -> dict:
        if not self.page_size:
            return {"tools": self.tools}
        start = int(cursor) if isinstance(cursor, str) and cursor.isdigit() else 0
        page = {"tools": self.tools[start : start + self.page_size]}
        if start + self.page_size < len(self.tools):
            page["nextCursor"] = str(start + self.page_size)
        return page

    def _call(self, params: dict) -> dict:
        name = params.get("name")
        arguments = params.get("arguments")
        self.calls.append(
            {"name": name, "arguments": arguments, "has_arguments": "arguments" in params}
        )
        known = any(isinstance(t, dict) and t.get("name") == name for t in self.tools)
        if not known:
            return {
                "content": [{"type": "text", "text": f"unknown tool {name!r}"}],
                "isError": True,
            }
        return {
            "content": [
                {"type": "text", "text": "received " + json.dumps(arguments, sort_keys=True)}
            ]
        }


def _result(msg_id: Any, result: Any) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def load_tools(path: str) -> list[Any]:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    tools = doc.get("tools") if isinstance(doc, dict) else doc
    if not isinstance(tools, list):
        raise ValueError(f"{path}: expected a JSON list of tools or an object with 'tools'")  # noqa: TRY004 (the caller reports every bad file as a ValueError)
    return tools
