"""Reading a request a client sent its model: which API, which tools it offers, which turn it is.

The fake model endpoint (``mcp_matrix.calibrate.fake_model``) plans its answer from these, and a
calibration record (``record``) ties each tool the model was shown back to the server's tool by
its content (``correlate``), since clients rename tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcp_matrix.core.jsontypes import JSON


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


def result_blocks(body: dict) -> list[dict]:
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
    for r in result_blocks(body):
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
        return any(
            not str(r.get("tool_use_id", "")).startswith(SEARCH_ID) for r in result_blocks(body)
        )
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
    if not isinstance(entries, list):
        return 0
    return sum(1 for m in entries if _calls_tools(api, m)) or (
        sum(_text_steps(m) for m in entries) if api == "openai-chat" else 0
    )


# smolagents' ToolCallingAgent replays each step as text, never as tool_calls or tool messages
# (smolagents 1.26.0 memory.py ActionStep.to_messages, models.py tool_role_conversions): a step
# that ran its calls says 'Calling tools:' (assistant), one whose call failed, even before it was
# sent, says 'Error: ... Now let's retry: ...' (user). Messages of one role in a row are merged
# into one, so the steps are counted in the text.
_TEXT_STEP = re.compile(
    r"^(Calling tools:\n\[|Now let's retry: take care not to repeat previous errors!)", re.MULTILINE
)


def _text_steps(message: JSON) -> int:
    """How many smolagents steps one Chat Completions message replays as text."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        content = "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return len(_TEXT_STEP.findall(content)) if isinstance(content, str) else 0


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
    raws = {t["name"]: t for t in server_tools if isinstance(t.get("name"), str)}
    for model_name, server in (called or {}).items():
        if server in names:
            named = [t for t in free if model_name in (t.name, t.call_name)]
            # two offered tools under that one name (LlamaIndex shows collide.a and collide_a
            # both as collide_a): the call names neither, the server tool's content decides
            same = [t for t in named if _same_content(t, raws[server])]
            claim(server, next(iter(same or named), None))
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
