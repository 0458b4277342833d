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
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
import threading
import time
import uuid
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mcp_matrix.calibrate.provider_limits import refusal
from mcp_matrix.core.jsontypes import JSON

FINAL_TEXT = "Calibration finished."
SECRET_HEADERS = (
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "cookie",
    "proxy-authorization",
)
MAX_BODY = 64 * 1024 * 1024


@dataclass(frozen=True)
class ScriptedCall:
    """One tool call the fake model makes: the server's tool name and the arguments to send."""

    tool: str
    arguments: object
    id: str = ""
    turn: int = 0  # the model turn that makes it: 0 first, n after n turns of tool calls


@dataclass(frozen=True)
class ModelTool:
    """One tool as a client offered it to its model (a flattened entry of the request)."""

    name: str  # the name the model must use to call it (namespace joined for Responses)
    description: str | None
    parameters: JSON
    namespace: str | None = None  # Responses-API namespace holding the tool, if any
    call_name: str = ""  # the name to put in a function call (inside a namespace: the plain name)
    raw: JSON = None

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "namespace": self.namespace,
        }


@dataclass
class RecordedRequest:
    """One request a client sent its model."""

    method: str
    path: str
    api: str
    stream: bool
    headers: dict[str, str]
    body: JSON
    answer: str = ""  # "tool-calls" | "text" | "listing" | "provider-refused"
    calls: list[dict] = field(default_factory=list)
    refusal: dict | None = None  # the provider limit the request broke (provider_limits on)

    def to_json(self) -> dict:
        out = {
            "method": self.method,
            "path": self.path,
            "api": self.api,
            "stream": self.stream,
            "headers": self.headers,
            "body": self.body,
            "answer": self.answer,
            "calls": self.calls,
        }
        if self.refusal is not None:
            out["refusal"] = self.refusal
        return out


def mask_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers with every credential replaced by ``***`` (any key is accepted, none is kept)."""
    out = {}
    for key, value in headers:
        low = key.lower()
        secret = low in SECRET_HEADERS or "key" in low or "token" in low or "secret" in low
        out[low] = "***" if secret else value
    return out


# -- reading a request: which API, which tools, is it a follow-up turn -----------------------


def api_of(path: str) -> str | None:
    p = path.split("?", 1)[0].rstrip("/")
    if p.endswith("/messages") and "/v1" in p:
        return "anthropic"
    if p.endswith("/chat/completions"):
        return "openai-chat"
    if p.endswith("/responses"):
        return "openai-responses"
    if ":generateContent" in p or ":streamGenerateContent" in p:
        return "gemini"
    return None


def model_tools(api: str, body: JSON) -> list[ModelTool]:
    """The tools a request offers its model, flattened (Responses namespaces opened up)."""
    if not isinstance(body, dict):
        return []
    raw = body.get("tools")
    if not isinstance(raw, list):
        return []
    out: list[ModelTool] = _searched_tools(body) if api == "anthropic" else []
    for t in raw:
        if not isinstance(t, dict):
            continue
        if api == "anthropic":
            if isinstance(t.get("name"), str) and (
                "input_schema" in t or t.get("type") in (None, "custom")
            ):
                out.append(
                    ModelTool(
                        t["name"],
                        t.get("description"),
                        t.get("input_schema"),
                        call_name=t["name"],
                        raw=t,
                    )
                )
        elif api == "openai-chat":
            fn = t.get("function") if t.get("type") == "function" else None
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                out.append(
                    ModelTool(
                        fn["name"],
                        fn.get("description"),
                        fn.get("parameters"),
                        call_name=fn["name"],
                        raw=t,
                    )
                )
        elif api == "openai-responses":
            out.extend(_responses_tools(t))
        elif api == "gemini":
            for key in ("functionDeclarations", "function_declarations"):
                for fd in t.get(key) or []:
                    if isinstance(fd, dict) and isinstance(fd.get("name"), str):
                        params = fd.get(
                            "parametersJsonSchema",
                            fd.get("parameters_json_schema", fd.get("parameters")),
                        )
                        out.append(
                            ModelTool(
                                fd["name"],
                                fd.get("description"),
                                params,
                                call_name=fd["name"],
                                raw=fd,
                            )
                        )
    return out


SEARCH_ID = "toolu_search_"  # the fake model's own tool-search calls (deferred tools)
_FUNCTION = re.compile(r"<function>(.*?)</function>", re.DOTALL)


def _results(body: dict) -> list[dict]:
    out = []
    for m in body.get("messages") or []:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):
            out += [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"]
    return out


def _text(content: JSON) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return ""


def _searched_tools(body: dict) -> list[ModelTool]:
    """Tools whose schemas a tool search returned as text (``<function>{"description", "name",
    "parameters"}</function>`` lines, as ToolSearch's description says). Claude Code 2.1.332
    answers with ``tool_reference`` items instead and adds the loaded tools to ``tools``."""
    out = []
    for r in _results(body):
        if not str(r.get("tool_use_id", "")).startswith(SEARCH_ID):
            continue
        for block in _FUNCTION.findall(_text(r.get("content"))):
            try:
                doc = json.loads(block)
            except ValueError:
                continue
            if isinstance(doc, dict) and isinstance(doc.get("name"), str):
                out.append(
                    ModelTool(
                        doc["name"],
                        doc.get("description"),
                        doc.get("parameters"),
                        call_name=doc["name"],
                        raw=doc,
                    )
                )
    return out


def deferred_names(body: JSON) -> list[str]:
    """MCP tool names a request lists as deferred (named in the system text, schemas not loaded)."""
    system = body.get("system") if isinstance(body, dict) else None
    text = system if isinstance(system, str) else _text(system)
    for m in body.get("messages") or [] if isinstance(body, dict) else []:
        if isinstance(m, dict):
            text += "\n" + _text(m.get("content"))
    return list(dict.fromkeys(re.findall(r"^(mcp__[A-Za-z0-9_-]+)$", text, re.MULTILINE)))


def _responses_tools(t: dict, namespace: str | None = None) -> list[ModelTool]:
    kind = t.get("type")
    if kind == "function" and isinstance(t.get("name"), str):
        # A namespaced tool is written namespace__name (the Responses API keeps the two apart).
        full = (
            (namespace + ("" if namespace.endswith("_") else "__") + t["name"])
            if namespace
            else t["name"]
        )
        return [
            ModelTool(full, t.get("description"), t.get("parameters"), namespace, t["name"], raw=t)
        ]
    if kind == "namespace" and isinstance(t.get("name"), str):
        out = []
        for inner in t.get("tools") or []:
            if isinstance(inner, dict):
                out.extend(_responses_tools(inner, t["name"]))
        return out
    return []


def has_tool_result(api: str, body: JSON) -> bool:
    """Whether the conversation already holds the answer to a tool call (a follow-up turn)."""
    if not isinstance(body, dict):
        return False
    if api == "anthropic":  # a tool search's own result is not an answer to a probe call
        return any(not str(r.get("tool_use_id", "")).startswith(SEARCH_ID) for r in _results(body))
    elif api == "openai-chat":
        return any(
            isinstance(m, dict) and m.get("role") == "tool" for m in body.get("messages") or []
        )
    elif api == "openai-responses":
        items = body.get("input")
        if isinstance(items, list):
            return any(
                isinstance(i, dict) and str(i.get("type", "")).endswith("_call_output")
                for i in items
            )
        return bool(body.get("previous_response_id"))
    elif api == "gemini":
        for c in body.get("contents") or []:
            parts = c.get("parts") if isinstance(c, dict) else None
            if isinstance(parts, list) and any(
                isinstance(p, dict) and ("functionResponse" in p or "function_response" in p)
                for p in parts
            ):
                return True
    return False


def tool_turn(api: str, body: JSON) -> int:
    """How many turns of tool calls the conversation holds (the fake model's own tool
    searches not counted): the turn the next answer is."""
    if not isinstance(body, dict):
        return 0
    if api == "openai-responses":
        items = body.get("input")
        kinds = (
            [str(i.get("type", "")) for i in items if isinstance(i, dict)]
            if isinstance(items, list)
            else []
        )
        # a run of call items is one turn
        return sum(
            1
            for k, kind in enumerate(kinds)
            if kind.endswith("_call") and (k == 0 or not kinds[k - 1].endswith("_call"))
        )
    key = "contents" if api == "gemini" else "messages"
    entries = body.get(key)
    return sum(1 for m in entries if _calls_tools(api, m)) if isinstance(entries, list) else 0


def _calls_tools(api: str, message: JSON) -> bool:
    """Whether one message of the history is the model calling tools."""
    if not isinstance(message, dict):
        return False
    if api == "openai-chat":
        return message.get("role") == "assistant" and bool(message.get("tool_calls"))
    parts = message.get("parts" if api == "gemini" else "content")
    if not isinstance(parts, list):
        return False
    if api == "gemini":
        return any(
            isinstance(p, dict) and ("functionCall" in p or "function_call" in p) for p in parts
        )
    return message.get("role") == "assistant" and any(
        isinstance(c, dict)
        and c.get("type") == "tool_use"
        and not str(c.get("id", "")).startswith(SEARCH_ID)
        for c in parts
    )


def tools_off(api: str, body: JSON) -> bool:
    """Whether the request forbids tool calls (``tool_choice`` none; Gemini: mode NONE)."""
    if not isinstance(body, dict):
        return False
    choice = body.get("tool_choice")
    if api == "anthropic":
        return isinstance(choice, dict) and choice.get("type") == "none"
    if api in ("openai-chat", "openai-responses"):
        return choice == "none"
    if api == "gemini":
        config = body.get("toolConfig") or body.get("tool_config") or {}
        calling = config.get("functionCallingConfig") or config.get("function_calling_config")
        return isinstance(calling, dict) and str(calling.get("mode", "")).upper() == "NONE"
    return False


def match_tool(tools: Sequence[ModelTool], server_tool: str) -> ModelTool | None:
    """The model-facing tool that stands for ``server_tool``: the same name, or a name that
    ends with it after a separator (``mcp__probe__x``, ``probe_x``, a namespace)."""
    for t in tools:
        if t.call_name == server_tool or t.name == server_tool:
            return t
    for wanted in dict.fromkeys((server_tool, re.sub(r"[^A-Za-z0-9_-]", "_", server_tool))):
        pattern = re.compile(r"(^|[_.:/-])" + re.escape(wanted) + "$")
        candidates = [t for t in tools if pattern.search(t.call_name) or pattern.search(t.name)]
        if candidates:
            return min(candidates, key=lambda t: len(t.call_name))
    for t in (
        tools
    ):  # an over-long name shortened with an ellipsis (Gemini CLI: first 30 + "..." + last 30)
        head, sep, tail = t.call_name.partition("...")
        if sep and len(tail) >= 8 and server_tool.endswith(tail) and server_tool[:8] in head:
            return t
    # a name cut at a length limit ("probe-" + the first 58 characters): the tail after a
    # separator is a long enough start of the server's name, and only one tool has it
    cut = [
        t for t in tools if _cut_from(t.call_name, server_tool) or _cut_from(t.name, server_tool)
    ]
    return cut[0] if len(cut) == 1 else None


def correlate(
    tools: Sequence[ModelTool],
    server_tools: Sequence[dict],
    called: Mapping[str, str] | None = None,
) -> dict[str, ModelTool]:
    """Each server tool's model-facing tool, never by name alone.

    Why: clients rename tools (``API-get-user`` -> ``API_get_user``, ``probe.dotted`` ->
    ``probe-probe-dotted``, a long name cut and hashed); a renamed tool read by name would be
    "hidden" and a wrong hiding rule would agree. In order of evidence: ``called`` (a
    model-facing name -> the server tool the tap saw the client call for it), then the name
    (``match_tool``), then content: the one remaining model tool, in listing order, with the same
    root property names whose (non-empty) description holds the server's (clients add to a
    description, never replace it). A server tool nothing fits stays unmatched (absent)."""
    out: dict[str, ModelTool] = {}
    free = list(tools)

    def claim(server: str, hit: ModelTool | None) -> None:
        if hit is not None and server not in out and any(hit is t for t in free):
            out[server] = hit
            free.remove(hit)

    names = [n for t in server_tools if isinstance(n := t.get("name"), str)]
    for model_name, server in (called or {}).items():
        if server in names:
            claim(server, next((t for t in free if model_name in (t.name, t.call_name)), None))
    raws = {t["name"]: t for t in server_tools if isinstance(t.get("name"), str)}
    for server in names:
        if server not in out:
            hit = match_tool(free, server)
            # two tools that clean to one name (collide.a, collide_a): the content decides; a
            # tool that only looks like another (root_anyof_shapes merged into root_oneof's
            # properties and description) keeps its own name
            if (
                hit is None
                or _same_content(hit, raws[server])
                or not any(
                    _same_content(hit, other) and _may_be_named(hit, other["name"])
                    for other in server_tools
                    if other is not raws[server] and isinstance(other.get("name"), str)
                )
            ):
                claim(server, hit)
    for raw in server_tools:
        name = raw.get("name")
        if isinstance(name, str) and name not in out:
            claim(name, next((t for t in free if _same_content(t, raw)), None))
    return out


def _same_content(tool: ModelTool, raw: dict) -> bool:
    """The model tool carries the server tool's content: its root property names, its description."""

    def keys(schema: JSON) -> set | None:
        props = schema.get("properties") if isinstance(schema, dict) else None
        return set(props) if isinstance(props, dict) else None

    wanted = (raw.get("description") or "").strip()
    shown = tool.description if isinstance(tool.description, str) else ""
    # an empty description would fit every one of the client's own tools: not evidence
    return (
        bool(wanted)
        and wanted in shown
        and _holds(keys(tool.parameters), keys(raw.get("inputSchema")))
    )


def _may_be_named(tool: ModelTool, server_tool: str) -> bool:
    """``tool`` could carry ``server_tool``'s name: ``match_tool``'s rules, or invalid characters
    cleaned to ``-`` (Copilot CLI: ``clash.c`` -> ``probe-clash-c``), or ``-`` cleaned to ``_`` too
    (smolagents, Codex, OpenAI Agents JS: ``clash-c`` -> ``clash_c``)."""
    if match_tool([tool], server_tool) is tool:
        return True
    for cleaned in (
        re.sub(r"[^A-Za-z0-9_-]", "-", server_tool),
        re.sub(r"[^A-Za-z0-9_]", "_", server_tool),
    ):
        if re.search(r"(^|[_.:/-])" + re.escape(cleaned) + "$", tool.call_name):
            return True
    return False


def _holds(shown: set | None, served: set | None) -> bool:
    """The offered root properties hold the server's: equal, or more where the client adds its own
    (Gemini CLI's wait_for_previous); a server tool with none matches only a tool with none."""
    if shown is None or served is None:
        return shown == served
    return shown == served or (bool(served) and served <= shown)


def _cut_from(name: str, server_tool: str, least: int = 24) -> bool:
    for m in re.finditer(r"(^|[_.:/-])", name):
        tail = name[m.end() :]
        if len(tail) >= least and len(tail) < len(server_tool) and server_tool.startswith(tail):
            return True
    return False


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
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
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
            str(r.get("tool_use_id", "")).startswith(SEARCH_ID) for r in _results(body)
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


def _call_id(i: int) -> str:
    return f"call_{i}_{uuid.uuid4().hex[:12]}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mcp-matrix-fake-model"

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    @property
    def fake(self) -> FakeModel:
        return self.server.fake  # type: ignore[attr-defined]

    def _json(self, status: int, doc: object) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _refused(self, body_bytes: int = 0) -> bool:
        """Answer 401 and keep the request aside when it lacks the run's key."""
        if self.fake.authorised(self.headers, self.path):
            return False
        self.fake.refuse(
            RecordedRequest(
                self.command,
                self.path,
                "refused",
                False,
                mask_headers(self.headers.items()),
                {"bytes": body_bytes},
                "refused",
            )
        )
        self._json(401, {"error": {"message": "wrong or missing API key", "type": "auth"}})
        return True

    def do_GET(self) -> None:
        if self._refused():
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        self.fake.record(
            RecordedRequest(
                "GET",
                self.path,
                "listing",
                False,
                mask_headers(self.headers.items()),
                None,
                "listing",
            )
        )
        model = self.fake.model
        if path.endswith("/models"):
            self._json(
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": model,
                            "object": "model",
                            "created": 0,
                            "owned_by": "mcp-matrix",
                            "type": "model",
                            "display_name": model,
                        }
                    ],
                    "models": [
                        {
                            "name": f"models/{model}",
                            "displayName": model,
                            "supportedGenerationMethods": [
                                "generateContent",
                                "streamGenerateContent",
                            ],
                        }
                    ],
                    "has_more": False,
                    "first_id": model,
                    "last_id": model,
                },
            )
        elif "/models/" in path:
            self._json(
                200, {"id": model, "object": "model", "name": f"models/{model}", "type": "model"}
            )
        else:
            self._json(
                404, {"error": {"message": f"no such endpoint: GET {path}", "type": "not_found"}}
            )

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if self._refused(length):  # before reading: a forged body is never held
            self.close_connection = True
            return
        if length > MAX_BODY:
            self._json(413, {"error": {"message": "request too large"}})
            return
        raw = self.rfile.read(length) if length else self._read_chunked()
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            try:
                decoded = gunzip_capped(raw, MAX_BODY)
            except (zlib.error, EOFError):
                self._json(400, {"error": {"message": "not a valid gzip body"}})
                return
            if decoded is None:
                self._json(413, {"error": {"message": "request too large once decompressed"}})
                return
            raw = decoded
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        api = api_of(self.path)
        stream = _wants_stream(api, self.path, body)
        rec = RecordedRequest(
            "POST", self.path, api or "unknown", stream, mask_headers(self.headers.items()), body
        )
        self.fake.record(rec)
        refused = refusal(api, body) if api and self.fake.provider_limits else None
        if refused is not None:
            rec.answer, rec.refusal = "provider-refused", refused.to_json()
            self._json(refused.status, refused.body)
            return
        if api is None:
            if self.path.split("?", 1)[0].rstrip("/").endswith("count_tokens"):
                self._json(200, {"input_tokens": 10})
                return
            self._json(
                404,
                {"error": {"message": f"no such endpoint: POST {self.path}", "type": "not_found"}},
            )
            return
        planned = self.fake.plan(api, body)
        rec.answer = "tool-calls" if planned else "text"
        calls = [(c, t, _call_id(i)) for i, (c, t) in enumerate(planned)]
        rec.calls = [
            {"tool": c.tool, "model_name": t.name, "id": cid, "arguments": c.arguments}
            for c, t, cid in calls
        ]
        model = self.fake.model
        if isinstance(body, dict) and isinstance(body.get("model"), str):
            model = body["model"]
        if api == "gemini":
            model = self.path.split("/models/", 1)[-1].split(":", 1)[0] or model
        writer = {
            "anthropic": _anthropic,
            "openai-chat": _chat,
            "openai-responses": _responses,
            "gemini": _gemini,
        }[api]
        writer(self, stream, model, calls, self.fake.final_text)

    def _read_chunked(self) -> bytes:
        if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
            return b""
        out = b""
        while True:
            size = int(self.rfile.readline().strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return out
            out += self.rfile.read(size)
            self.rfile.readline()
            if len(out) > MAX_BODY:
                return out

    # SSE helpers
    def start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def event(self, data: object, name: str | None = None) -> None:
        text = (
            f"event: {name}\n" if name else ""
        ) + f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
        self.wfile.write(text.encode())
        self.wfile.flush()


def gunzip_capped(raw: bytes, cap: int) -> bytes | None:
    """A gzip body (one member or several) decompressed, or None past ``cap`` bytes: decoded in
    steps of at most what is left of the cap, so a 1 MB body that inflates to 1 GiB never
    does. zstd and br bodies stay undecoded (not in the standard library)."""
    out = bytearray()
    data = raw
    while data:
        member = zlib.decompressobj(wbits=31)
        while True:
            chunk = member.decompress(data, cap + 1 - len(out))
            out += chunk
            if len(out) > cap:
                return None
            data = member.unconsumed_tail
            if member.eof or not (chunk or data):
                break
        if not member.eof:
            raise EOFError("the gzip body ended early")
        data = member.unused_data.lstrip(b"\0")  # members may be padded with zeros
    return bytes(out)


def _wants_stream(api: str | None, path: str, body: JSON) -> bool:
    if api == "gemini":
        return ":streamGenerateContent" in path
    return bool(isinstance(body, dict) and body.get("stream"))


# -- the four wire formats ------------------------------------------------------------------------

USAGE_ANTHROPIC = {
    "input_tokens": 10,
    "output_tokens": 5,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}


def _anthropic(h: _Handler, stream: bool, model: str, calls: list, final: str) -> None:
    msg_id = f"msg_{uuid.uuid4().hex[:20]}"
    blocks = [
        {
            "type": "tool_use",
            "id": (c.id + cid[5:]) if c.id == SEARCH_ID else cid.replace("call_", "toolu_"),
            "name": t.call_name,
            "input": c.arguments,
        }
        for c, t, cid in calls
    ]
    if not blocks:
        blocks = [{"type": "text", "text": final}]
    stop = "tool_use" if calls else "end_turn"
    message = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": USAGE_ANTHROPIC,
    }
    if not stream:
        h._json(200, message)
        return
    h.start_sse()
    h.event(
        {
            "type": "message_start",
            "message": {
                **message,
                "content": [],
                "stop_reason": None,
                "usage": {**USAGE_ANTHROPIC, "output_tokens": 1},
            },
        },
        "message_start",
    )
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            h.event(
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            )
            h.event(
                {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "text_delta", "text": b["text"]},
                },
                "content_block_delta",
            )
        else:
            h.event(
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {
                        "type": "tool_use",
                        "id": b["id"],
                        "name": b["name"],
                        "input": {},
                    },
                },
                "content_block_start",
            )
            h.event(
                {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])},
                },
                "content_block_delta",
            )
        h.event({"type": "content_block_stop", "index": i}, "content_block_stop")
    h.event(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        "message_delta",
    )
    h.event({"type": "message_stop"}, "message_stop")


def _chat(h: _Handler, stream: bool, model: str, calls: list, final: str) -> None:
    cid0 = f"chatcmpl-{uuid.uuid4().hex[:20]}"
    created = int(time.time())
    tool_calls = [
        {
            "id": cid,
            "type": "function",
            "function": {"name": t.call_name, "arguments": json.dumps(c.arguments)},
        }
        for c, t, cid in calls
    ]
    finish = "tool_calls" if calls else "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if not stream:
        message: dict = {"role": "assistant", "content": None if calls else final}
        if tool_calls:
            message["tool_calls"] = tool_calls
        h._json(
            200,
            {
                "id": cid0,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            },
        )
        return
    h.start_sse()

    def chunk(delta: dict, finish_reason: str | None = None, **extra: JSON) -> dict:
        return {
            "id": cid0,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            **extra,
        }

    h.event(chunk({"role": "assistant", "content": ""}))
    if calls:
        for i, tc in enumerate(tool_calls):
            h.event(chunk({"tool_calls": [{"index": i, **tc}]}))
    else:
        h.event(chunk({"content": final}))
    h.event(chunk({}, finish))
    h.event(
        {
            "id": cid0,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": usage,
        }
    )
    h.event("[DONE]")


def _responses(h: _Handler, stream: bool, model: str, calls: list, final: str) -> None:
    rid = f"resp_{uuid.uuid4().hex[:20]}"
    output = []
    for c, t, cid in calls:
        item = {
            "type": "function_call",
            "id": f"fc_{cid}",
            "call_id": cid,
            "name": t.call_name,
            "arguments": json.dumps(c.arguments),
            "status": "completed",
        }
        if t.namespace:
            item["namespace"] = t.namespace
        output.append(item)
    if not calls:
        output.append(
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:12]}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": final, "annotations": []}],
            }
        )
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    response = {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": output,
        "usage": usage,
        "error": None,
        "incomplete_details": None,
    }
    if not stream:
        h._json(200, response)
        return
    h.start_sse()
    seq = iter(range(10_000))
    h.event(
        {
            "type": "response.created",
            "sequence_number": next(seq),
            "response": {**response, "status": "in_progress", "output": []},
        },
        "response.created",
    )
    for i, item in enumerate(output):
        h.event(
            {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": i,
                "item": {**item, "status": "in_progress"},
            },
            "response.output_item.added",
        )
        if item["type"] == "function_call":
            h.event(
                {
                    "type": "response.function_call_arguments.delta",
                    "sequence_number": next(seq),
                    "output_index": i,
                    "item_id": item["id"],
                    "delta": item["arguments"],
                },
                "response.function_call_arguments.delta",
            )
            h.event(
                {
                    "type": "response.function_call_arguments.done",
                    "sequence_number": next(seq),
                    "output_index": i,
                    "item_id": item["id"],
                    "arguments": item["arguments"],
                },
                "response.function_call_arguments.done",
            )
        else:
            h.event(
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "output_index": i,
                    "item_id": item["id"],
                    "content_index": 0,
                    "delta": final,
                },
                "response.output_text.delta",
            )
        h.event(
            {
                "type": "response.output_item.done",
                "sequence_number": next(seq),
                "output_index": i,
                "item": item,
            },
            "response.output_item.done",
        )
    h.event(
        {"type": "response.completed", "sequence_number": next(seq), "response": response},
        "response.completed",
    )


def _gemini(h: _Handler, stream: bool, model: str, calls: list, final: str) -> None:
    parts: list[dict[str, object]] = [
        {"functionCall": {"name": t.call_name, "args": c.arguments, "id": cid}}
        for c, t, cid in calls
    ]
    if not parts:
        parts = [{"text": final}]
    doc = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
        "responseId": uuid.uuid4().hex[:16],
    }
    if not stream:
        h._json(200, doc)
        return
    if "alt=sse" not in h.path:
        h._json(200, [doc])  # the JSON-array form of streamGenerateContent
        return
    h.start_sse()
    h.event(doc)
