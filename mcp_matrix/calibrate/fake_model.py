"""The fake model endpoint: a local HTTP server that speaks four model APIs, records what
each client sends its model, and answers with scripted tool calls, then a final text.

Why: what a client *does* to a tool (drops it, renames it, rewrites its schema, mangles its
arguments) is only visible in the request it builds for its model and in the call that
reaches the server. No LLM is needed: the answer is scripted, so a calibration run is
deterministic and offline.

APIs (CALIBRATION-CONTRACT.md), each streaming (SSE) and not, whatever the request asks:
- Anthropic Messages ``POST /v1/messages``
- OpenAI Chat Completions ``POST /v1/chat/completions``
- OpenAI Responses ``POST /v1/responses``
- Gemini ``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent``
  (also under ``/v1/``), and ``GET .../models`` listings.

Only the client may talk to it: every request must carry the run's key (``FakeModel.key``,
which the harness gives the client as its provider's API key, in ``x-api-key``,
``Authorization: Bearer``, ``x-goog-api-key``, ``api-key`` or ``?key=``). Anything else (a
hostile MCP server that found the endpoint's URL and forges model requests) is answered 401
and kept in ``refused``, never among the requests a calibration record is made of. A
compressed body is capped while it is decompressed (``MAX_BODY``), not only on the wire.

The turn logic is stateless: a request whose history already holds a tool result (or that
offers no tools) gets the final text; any other request with tools gets every scripted call
whose tool the request offers, in one turn. Side requests (titles, quota probes) therefore
get a harmless text. A script may span turns (``ScriptedCall.turn``): the calls of turn n go to
the request that follows n turns of tool calls. A request that turns tools off
(``tool_choice`` none, Gemini's mode NONE) gets the final text, as the providers answer it.

With ``provider_limits`` the endpoint refuses what the real provider refuses
(``mcp_matrix.calibrate.provider_limits``): an HTTP 400 in the provider's error shape, the
request kept with the limit it broke, so calibration sees what the user of the client sees.

Here is the endpoint (its script, key and records, and what it answers a request); a request is
read in ``model_requests``, served over HTTP in ``model_http``, and answered in its API's wire
format in ``model_answers``.
"""

from __future__ import annotations

import hmac
import re
import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any

from mcp_matrix.calibrate.model_http import ModelHandler, RecordedRequest
from mcp_matrix.calibrate.model_requests import (
    SEARCH_ID,
    ModelTool,
    correlate,
    deferred_names,
    has_tool_result,
    match_tool,
    model_tools,
    result_blocks,
    tool_turn,
    tools_off,
)
from mcp_matrix.core.jsontypes import JSON

FINAL_TEXT = "Calibration finished."


@dataclass(frozen=True)
class ScriptedCall:
    """One tool call the fake model makes: the server's tool name and the arguments to send."""

    tool: str
    arguments: object
    id: str = ""
    turn: int = 0  # the model turn that makes it: 0 first, n after n turns of tool calls


# -- the server -------------------------------------------------------------------------------


class FakeModel:
    """The endpoint: ``with FakeModel(calls) as model: ... model.url ... model.requests``."""

    def __init__(
        self,
        calls: Sequence[ScriptedCall] = (),
        final_text: str = FINAL_TEXT,
        model: str = "fake-model",
        tools: Sequence[str] = (),
        key: str | None = None,
        server_tools: Sequence[dict] = (),
        provider_limits: bool = False,
    ) -> None:
        """``key``: the API key every request must carry (a new random one when not given).
        ``server_tools``: the tools the server lists, so a renamed one is found by its content.
        ``provider_limits``: refuse what the real provider refuses, as it does (HTTP 400)."""
        self.key = key or new_key()
        self.provider_limits = provider_limits
        self.refused: list[RecordedRequest] = []
        self.calls = tuple(calls)
        self.server_tools = tuple(server_tools)
        self.tools = (
            tuple(tools)
            or tuple(t["name"] for t in self.server_tools if isinstance(t.get("name"), str))
            or tuple(c.tool for c in self.calls)
        )  # server tools to load when deferred
        self.final_text = final_text
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), ModelHandler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-model", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        if isinstance(host, bytes):  # typeshed allows it; an AF_INET server has a str host
            host = host.decode()
        return f"http://{host}:{port}"

    def start(self) -> FakeModel:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def requests_json(self) -> list[dict]:
        with self._lock:
            return [r.to_json() for r in self.requests]

    def refuse(self, req: RecordedRequest) -> None:
        with self._lock:
            self.refused.append(req)

    def refused_json(self) -> list[dict]:
        """The requests refused for a missing or wrong key (their bodies are not kept)."""
        with self._lock:
            return [r.to_json() for r in self.refused]

    def authorised(self, headers: Any, path: str) -> bool:
        """Whether a request carries this run's key, where the four APIs' clients put it."""
        given = [headers.get(h, "") for h in ("x-api-key", "x-goog-api-key", "api-key")]
        auth = headers.get("authorization", "")
        given.append(auth.split(None, 1)[1].strip() if " " in auth else auth)
        given += re.findall(r"[?&]key=([^&#]*)", path)
        expected = self.key.encode()
        return any(hmac.compare_digest(g.encode(), expected) for g in given if g)

    def offered_tools(self) -> tuple[str, list[ModelTool]] | None:
        """The tools of the richest request (the most tools): what the model was shown."""
        best = None
        with self._lock:
            for r in self.requests:
                tools = model_tools(r.api, r.body)
                if tools and (best is None or len(tools) > len(best[1])):
                    best = (r.api, tools)
        return best

    def plan(self, api: str, body: JSON) -> list[tuple[ScriptedCall, ModelTool]]:
        """The calls to make now: those of this turn (a one-turn script: none on a follow-up
        turn) that the request offers; none when the request turns tools off."""
        if tools_off(api, body):
            return []
        if any(c.turn for c in self.calls):
            turn = tool_turn(api, body)
            due = [c for c in self.calls if c.turn == turn]
        elif has_tool_result(api, body):
            return []
        else:
            due = list(self.calls)
        tools = model_tools(api, body)
        shown = correlate(tools, self.server_tools) if self.server_tools else {}
        out = []
        for call in due:
            tool = shown.get(call.tool) if self.server_tools else match_tool(tools, call.tool)
            if tool is not None:
                out.append((call, tool))
        search = match_tool(tools, "ToolSearch")
        searched = isinstance(body, dict) and any(
            str(r.get("tool_use_id", "")).startswith(SEARCH_ID) for r in result_blocks(body)
        )
        if api == "anthropic" and search is not None and not searched:
            # deferred tools (Claude Code's default): load every deferred probe tool first
            names = [
                n
                for n in deferred_names(body)
                if any(match_tool([ModelTool(n, None, None, call_name=n)], t) for t in self.tools)
            ]
            if names and len(names) > len(out):
                return [
                    (
                        ScriptedCall(
                            "ToolSearch",
                            {"query": "select:" + ",".join(names), "max_results": len(names)},
                            id=SEARCH_ID,
                        ),
                        search,
                    )
                ]
        return out


def new_key() -> str:
    """A per-run API key: what the client is configured with, and nobody else knows."""
    return "sk-mcp-matrix-" + secrets.token_hex(16)
