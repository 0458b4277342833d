"""Transport-independent message handling of the fault-injection server.

Written with the standard library only, because the point is to break the
protocol in ways the MCP SDK would refuse to produce.  `Connection.handle`
takes one decoded JSON-RPC message and returns a list of *actions* (what to
send, sleep, crash, hang, ...).  The stdio and HTTP transports carry them out
in order, so each fault is written once and shows up on both transports.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass, field

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"
SERVER_INFO = {"name": "faulty", "version": "0.1"}

# Modes that only make sense on Streamable HTTP (they break the HTTP layer).
HTTP_ONLY_MODES = (
    "http-500",
    "http-404",
    "http-405",
    "wrong-content-type",
    "sse-never-closes",
    "session-expires",
    "gzip-bomb",
)
MODES = (
    "ok",
    "crash-on-initialize",
    "crash-on-call",
    "hang",
    "hang-on-call",
    "slow",
    "stdout-noise",
    "invalid-json",
    "wrong-id",
    "list-error",
    "duplicate-names",
    "many-tools",
    "cursor-loop",
    "huge-response",
    "deep-schema",
    "ref-cycle",
    "bad-schemas",
    "huge-description",
    "hostile-names",
    "list-changed",
    "server-request",
    # hostile modes (issue 15, docs/security.md): each attacks one bound of the client
    "external-ref",
    "redos",
    "surrogates",
    "huge-enum",
    "pipe-holder",
    "request-flood",
    "huge-line",
    "bool-id",
    "early-response",
    "huge-id",
    "slow-exit",
) + HTTP_ONLY_MODES

# many-tools: 20 times the largest tool cap a profile models (128), over three pages (two full,
# one short), so every cap cuts the list and a client reads on past a full page.
MANY_TOOLS = 2_500
PAGE_SIZE = 1000
DEEP_LEVELS = 5000
REDOS_PATTERN = "^(a+)+$"
REDOS_EXAMPLE = "a" * 40 + "!"
# One that the regex module's own shortcuts do not rescue: it runs into the time budget.
REDOS_BUDGET_PATTERN = "^(a|aa)+$"
REDOS_BUDGET_EXAMPLE = "a" * 60 + "!"
HUGE_ENUM_VALUES = 1_000_000
HUGE_LINE_BYTES = 1024 * 1024 * 1024
HUGE_ID = "9" * 5000
HUGE_RESPONSE_CHARS = 20 * 1024 * 1024
HUGE_DESCRIPTION_CHARS = 1024 * 1024
KEEPALIVE_SECONDS = 0.5
SERVER_REQUEST_ID = "srv-1"


# --------------------------------------------------------------------------- actions


@dataclass
class Send:
    """Write one protocol message; `text` may be deliberately invalid JSON."""

    text: str
    is_response: bool = True


@dataclass
class Noise:
    """Write non-protocol text to stdout (banners and logs that corrupt stdio)."""

    text: str


@dataclass
class Sleep:
    """Wait before carrying out the following actions."""

    seconds: float


@dataclass
class Crash:
    """Write `reason` to stderr and exit the whole process with `code`."""

    reason: str
    code: int = 3


@dataclass
class Hang:
    """Never answer this request.

    `everything`: never answer anything again either (mode hang).
    `keepalive`: over HTTP, hold an SSE stream open with comment lines meanwhile.
    """

    everything: bool = False
    keepalive: bool = False


@dataclass
class Flood:
    """Write server-to-client requests for ever without reading stdin (a client must not stall)."""

    method: str = "roots/list"


@dataclass
class HugeLine:
    """Write ``prefix``, then ``size`` bytes of filler, then ``suffix``, as one line."""

    prefix: str
    size: int
    suffix: str


@dataclass
class AskClient:
    """Send a server-to-client request and wait for the client's answer before going on."""

    request_id: str
    text: str


# --------------------------------------------------------------------------- encoding

_RAW_TOKEN = "@@faulty-raw-json-{}@@"


def encode(message: object, raw: dict[str, str] | None = None) -> str:
    """Serialise a message; tokens named in `raw` are replaced by pre-built JSON text.

    The deep schema is thousands of levels deep: building it as a dict and calling
    json.dumps would hit Python's recursion limit, so it is kept as text.
    """
    text = json.dumps(message, separators=(",", ":"))
    for token, value in (raw or {}).items():
        text = text.replace(json.dumps(token), value)
    return text


def response(msg_id: object, result: object) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error(msg_id: object, code: int, message: str, data: object = None) -> dict:
    err: dict = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}


def deep_schema_text(levels: int = DEEP_LEVELS) -> str:
    """An object schema whose `properties` nest `levels` deep, built by concatenation."""
    head = '{"type":"object","properties":{"child":'
    return head * levels + '{"type":"string"}' + "}}" * levels


# --------------------------------------------------------------------------- tools


def _annotations(read_only: bool, destructive: bool = False, idempotent: bool = False) -> dict:
    return {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }


BASE_TOOLS: list[dict] = [
    {
        "name": "echo",
        "title": "Echo",
        "description": "Return the arguments unchanged, as text and as structured content.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to echo back."}},
            "required": ["text"],
        },
        "annotations": _annotations(read_only=True, idempotent=True),
    },
    {
        "name": "write_note",
        "title": "Write note",
        "description": "Save a note (nothing is really written; the call is only acknowledged).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "body": {"type": "string"},
            },
            "required": ["title", "body"],
        },
        "annotations": _annotations(read_only=False),
    },
    {
        "name": "delete_all",
        "title": "Delete all notes",
        "description": "Delete every note. Destructive (here it only pretends).",
        "inputSchema": {
            "type": "object",
            "properties": {"confirm": {"type": "boolean"}},
        },
        "annotations": _annotations(read_only=False, destructive=True, idempotent=True),
    },
    {
        "name": "slow_echo",
        "title": "Slow echo",
        "description": "Echo the text after waiting `seconds` (default 1, at most 30).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "seconds": {"type": "number", "minimum": 0, "maximum": 30, "default": 1},
            },
            "required": ["text"],
        },
        "annotations": _annotations(read_only=True, idempotent=True),
    },
]

_MANY_TEMPLATES: list[dict] = [
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "minimum": 1},
            "verbose": {"type": "boolean", "default": False},
        },
        "required": ["id"],
    },
    {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
            "mode": {"type": "string", "enum": ["fast", "full"]},
        },
    },
    {
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "value": {"type": "number"}},
                "required": ["field"],
            }
        },
    },
    {"type": "object", "properties": {}},
]


def many_tool(i: int) -> dict:
    return {
        "name": f"tool_{i:05d}",
        "description": f"Synthetic tool number {i} of {MANY_TOOLS}.",
        "inputSchema": _MANY_TEMPLATES[i % len(_MANY_TEMPLATES)],
        "annotations": {"readOnlyHint": i % 3 != 0},
    }


def external_ref_tool(i: int, ref: str) -> dict:
    """A tool whose input and output schemas point outside the document (a URL or a file)."""
    return {
        "name": f"ref_{i}",
        "description": f"inputSchema and outputSchema refer to {ref}.",
        "inputSchema": {
            "type": "object",
            "properties": {"doc": {"$ref": ref}},
            "required": ["doc"],
            "examples": [{"doc": {"a": 1}}],
        },
        "outputSchema": {"type": "object", "properties": {"doc": {"$ref": ref}}},
        "annotations": _annotations(read_only=True, idempotent=True),
    }


def _extra_tools(mode: str) -> list[dict]:
    """Tools a mode lists after the base tools."""
    if mode == "duplicate-names":
        return [
            {
                "name": "echo",
                "description": "A second tool named echo, with a different schema.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"count": {"type": "integer"}},
                    "required": ["count"],
                },
            }
        ]
    if mode == "deep-schema":
        return [
            {
                "name": "deep",
                "description": f"inputSchema nests properties {DEEP_LEVELS} levels deep.",
                "inputSchema": _RAW_TOKEN.format("deep"),
            }
        ]
    if mode == "ref-cycle":
        return [
            {
                "name": "tree",
                "description": "A node's children are nodes ($defs self reference).",
                "inputSchema": {
                    "type": "object",
                    "properties": {"root": {"$ref": "#/$defs/node"}},
                    "$defs": {
                        "node": {
                            "type": "object",
                            "properties": {
                                "value": {"type": "string"},
                                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                            },
                        }
                    },
                },
            },
            {
                "name": "self_ref",
                "description": "A property refers to the root schema directly.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"again": {"$ref": "#"}, "label": {"type": "string"}},
                },
            },
            {
                "name": "ref_loop",
                "description": "Two definitions refer only to each other (never resolves).",
                "inputSchema": {
                    "type": "object",
                    "properties": {"x": {"$ref": "#/$defs/a"}},
                    "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                },
            },
        ]
    if mode == "bad-schemas":
        bad: list[tuple[str, object]] = [
            ("array_root", {"type": "array", "items": {"type": "string"}}),
            (
                "anyof_root",
                {
                    "anyOf": [
                        {"type": "object", "properties": {"a": {"type": "string"}}},
                        {"type": "object", "properties": {"b": {"type": "integer"}}},
                    ]
                },
            ),
            ("true_schema", True),
            ("string_schema", "string"),
            ("null_schema", None),
            ("list_schema", []),
        ]
        tools = [
            {"name": n, "description": f"inputSchema is {json.dumps(s)}", "inputSchema": s}
            for n, s in bad
        ]
        tools.append({"name": "missing_schema", "description": "Has no inputSchema at all."})
        tools.append(
            {
                "name": "good_tool",
                "description": "A well-formed tool among the bad ones.",
                "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
            }
        )
        return tools
    if mode == "redos":
        return [
            {
                "name": "redos",
                "description": "A pattern that backtracks catastrophically on its own example.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"s": {"type": "string", "pattern": REDOS_PATTERN}},
                    "required": ["s"],
                    "examples": [{"s": REDOS_EXAMPLE}],
                },
                "annotations": _annotations(read_only=True, idempotent=True),
            },
            {
                "name": "redos_budget",
                "description": "A pattern whose match on its example runs out of any budget.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"s": {"type": "string", "pattern": REDOS_BUDGET_PATTERN}},
                    "required": ["s"],
                    "examples": [{"s": REDOS_BUDGET_EXAMPLE}],
                },
                "annotations": _annotations(read_only=True, idempotent=True),
            },
        ]
    if mode == "surrogates":
        return [
            {
                "name": "lone\ud800surrogate",
                "description": "A lone surrogate \udfff in the description and the result.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"t\ud800": {"type": "string", "default": "\udc00"}},
                },
                "annotations": _annotations(read_only=True, idempotent=True),
            }
        ]
    if mode == "huge-enum":
        return [
            {
                "name": "huge_enum",
                "description": f"An enum of {HUGE_ENUM_VALUES} values.",
                "inputSchema": _RAW_TOKEN.format("enum"),
                "annotations": _annotations(read_only=True, idempotent=True),
            }
        ]
    if mode == "huge-description":
        line = "This description is deliberately enormous to test client limits. "
        text = (line * (HUGE_DESCRIPTION_CHARS // len(line) + 1))[:HUGE_DESCRIPTION_CHARS]
        return [
            {
                "name": "verbose_tool",
                "description": text,
                "inputSchema": {"type": "object", "properties": {}},
            }
        ]
    if mode == "hostile-names":
        names_and_descriptions = [
            ("<script>alert(1)</script>", "<img src=x onerror=alert(1)> HTML in a description."),
            ("a|b|c", "| col | col |\n|---|---|\n| markdown | table |"),
            ("quote\"tool'", "Quotes \" and ' and `backticks` and \\ backslashes."),
            ("new\nline", "# Heading\n\n```\ncode fence never closed"),
            ("\x1b[31mred\x07", "[click me](javascript:alert(1)) \x1b[2J terminal escapes"),
        ]
        return [
            {
                "name": n,
                "description": d,
                "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
            }
            for n, d in names_and_descriptions
        ]
    return []


ECHO_V2 = {
    "name": "echo_v2",
    "description": "Echo, second version; appears after notifications/tools/list_changed.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "annotations": _annotations(read_only=True, idempotent=True),
}

# --------------------------------------------------------------------------- record

_record_lock = threading.Lock()


def record_call(path: str | None, name: object, arguments: object) -> None:
    """Append one line per tools/call, flushed at once: tests use it to prove what ran."""
    if not path:
        return
    line = json.dumps({"name": name, "arguments": arguments}) + "\n"
    with _record_lock, open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()


def log(text: str) -> None:
    """Diagnostics go to stderr; stdout belongs to the protocol."""
    sys.stderr.write(f"faulty: {text}\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------- connection


@dataclass
class Connection:
    """State of one client connection (the stdio process, or one HTTP session)."""

    mode: str = "ok"
    delay: float = 2.0
    record: str | None = None
    refs: tuple[str, ...] = ()
    list_changed_sent: bool = False
    raw: dict[str, str] = field(default_factory=dict)
    _tools: tuple | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.mode == "deep-schema":
            self.raw[_RAW_TOKEN.format("deep")] = deep_schema_text()
        if self.mode == "huge-enum":
            values = ",".join(f'"v{i}"' for i in range(HUGE_ENUM_VALUES))
            self.raw[_RAW_TOKEN.format("enum")] = (
                '{"type":"object","properties":{"choice":{"enum":[' + values + "]}}}"
            )

    # -- tools --------------------------------------------------------------

    def tools(self) -> list[dict]:
        # Built once per state: many-tools would otherwise rebuild its tools on every call.
        key = self.list_changed_sent
        if self._tools is None or self._tools[0] != key:
            tools = list(BASE_TOOLS) + _extra_tools(self.mode)
            if self.mode == "many-tools":
                # Exactly MANY_TOOLS in all, the base tools first so echo works.
                tools += [many_tool(i) for i in range(MANY_TOOLS - len(tools))]
            if self.mode == "list-changed" and self.list_changed_sent:
                tools.append(ECHO_V2)
            if self.mode == "external-ref":
                tools += [external_ref_tool(i, ref) for i, ref in enumerate(self.refs)]
            self._tools = (key, tools, {t["name"] for t in tools})
        return self._tools[1]

    def tool_names(self) -> set:
        self.tools()
        return self._tools[2]

    # -- dispatch -----------------------------------------------------------

    def handle_text(self, text: str) -> list:
        """Decode one incoming message; a parse error is answered with -32700."""
        try:
            message = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return [Send(encode(error(None, -32700, f"Parse error: {exc}")))]
        return self.handle(message)

    def handle(self, message: object) -> list:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return [Send(encode(error(None, -32600, "Invalid Request")))]
        method = message.get("method")
        if not isinstance(method, str):
            # A response from the client; only the server-request mode expects one.
            if "id" in message and ("result" in message or "error" in message):
                log(f"unexpected client response: {encode(message)[:200]}")
            else:
                return [Send(encode(error(message.get("id"), -32600, "Invalid Request")))]
            return []
        if "id" not in message:
            return self._notification(method, message.get("params"))
        msg_id = message["id"]
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return self._answer(error(msg_id, -32602, "params must be an object"))
        return self._request(msg_id, method, params or {})

    def _answer(self, message: dict, raw: bool = False) -> list:
        """The response to a request, with the mode's delay and noise around it."""
        actions: list = []
        if self.mode == "slow":
            actions.append(Sleep(self.delay))
        if self.mode == "stdout-noise":
            actions.append(Noise(f"DEBUG answering request {message.get('id')!r}"))
        actions.append(Send(encode(message, self.raw if raw else None)))
        return actions

    def _notification(self, method: str, params: object) -> list:
        if method == "notifications/initialized":
            if self.mode == "stdout-noise":
                return [Noise("INFO client initialized, DEBUG loaded 4 tools")]
            if self.mode == "list-changed" and not self.list_changed_sent:
                self.list_changed_sent = True
                note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
                return [Send(encode(note), is_response=False)]
        return []

    def _request(self, msg_id: object, method: str, params: dict) -> list:
        if method == "initialize":
            return self._initialize(msg_id, params)
        if method == "ping":
            return self._answer(response(msg_id, {}))
        if method == "tools/list":
            return self._tools_list(msg_id, params)
        if method == "tools/call":
            return self._tools_call(msg_id, params)
        return self._answer(error(msg_id, -32601, f"Method not found: {method}"))

    def _initialize(self, msg_id: object, params: dict) -> list:
        if self.mode == "crash-on-initialize":
            return [Crash("fatal: boom during initialize")]
        if self.mode == "hang":
            return [Hang(everything=True)]
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": dict(SERVER_INFO),
        }
        if self.mode == "bool-id" and msg_id == 1:
            return self._answer(response(True, result))  # true is not 1 on the wire
        return self._answer(response(msg_id, result))

    def _tools_list(self, msg_id: object, params: dict) -> list:
        if self.mode == "invalid-json":
            truncated = '{"jsonrpc": "2.0", "id": ' + json.dumps(msg_id) + ', "result": {"tools": ['
            return self._delayed([Send(truncated)])
        if self.mode == "list-error":
            return self._answer(error(msg_id, -32603, "database unavailable", {"retry": False}))
        tools = self.tools()
        cursor = params.get("cursor")
        if self.mode == "cursor-loop":
            return self._answer(response(msg_id, {"tools": tools, "nextCursor": "again"}))
        if self.mode == "many-tools":
            start = 0
            if cursor is not None:
                if not (isinstance(cursor, str) and cursor.startswith("page-")):
                    return self._answer(error(msg_id, -32602, f"Invalid cursor: {cursor!r}"))
                try:
                    start = int(cursor[5:])
                except ValueError:
                    return self._answer(error(msg_id, -32602, f"Invalid cursor: {cursor!r}"))
            page: dict = {"tools": tools[start : start + PAGE_SIZE]}
            if start + PAGE_SIZE < len(tools):
                page["nextCursor"] = f"page-{start + PAGE_SIZE}"
            return self._answer(response(msg_id, page))
        if self.mode == "early-response" and isinstance(msg_id, int):
            # The answer and a "response" to the next request, in one write: the second one
            # reaches the client before the request it claims to answer was ever sent.
            forged = {"content": [{"type": "text", "text": "forged"}], "isError": False}
            both = (
                encode(response(msg_id, {"tools": tools}))
                + "\n"
                + encode(response(msg_id + 1, forged))
            )
            return [Send(both)]
        return self._answer(response(msg_id, {"tools": tools}), raw=True)

    def _delayed(self, actions: list) -> list:
        return ([Sleep(self.delay)] if self.mode == "slow" else []) + actions

    def _tools_call(self, msg_id: object, params: dict) -> list:
        name = params.get("name")
        arguments = params.get("arguments")
        record_call(self.record, name, arguments)
        if self.mode == "crash-on-call":
            return [Crash(f"fatal: boom during tools/call {name!r}")]
        if self.mode == "hang-on-call":
            return [Hang()]
        if self.mode == "request-flood":
            return [Flood()]
        if self.mode == "huge-line" and name == "echo":
            head = encode(response(msg_id, {"content": [{"type": "text", "text": "@"}]}))
            prefix, suffix = head.split("@", 1)
            return [HugeLine(prefix, HUGE_LINE_BYTES, suffix)]
        if self.mode == "sse-never-closes":
            return [Hang(keepalive=True)]
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return self._answer(error(msg_id, -32602, "arguments must be an object"))
        known = self.tool_names()
        if name not in known:
            return self._answer(error(msg_id, -32602, f"Unknown tool: {name!r}"))

        prefix: list = []
        if self.mode == "server-request":
            ask = {
                "jsonrpc": "2.0",
                "id": SERVER_REQUEST_ID,
                "method": "roots/list",
                "params": {},
            }
            prefix.append(AskClient(SERVER_REQUEST_ID, encode(ask)))
        result = self._call_result(name, arguments)
        if isinstance(result, list):  # slow_echo: actions before the answer
            sleep, result = result
            prefix.append(sleep)
        answer = response(msg_id, result)
        if self.mode == "huge-id":  # a stray response with a valid 5,000-digit id first
            prefix.append(Send('{"jsonrpc":"2.0","id":' + HUGE_ID + ',"result":{}}'))
        if self.mode == "wrong-id":
            answer["id"] = msg_id + 1000 if isinstance(msg_id, int) else f"{msg_id}-wrong"
        return prefix + self._answer(answer)

    def _call_result(self, name: str, arguments: dict) -> object:
        def text(t: str) -> dict:
            return {"content": [{"type": "text", "text": t}], "isError": False}

        if self.mode == "surrogates":
            result = text("lone surrogates: \ud800 and \udfff")
            result["structuredContent"] = {"s\udc00": "\ud800"}
            return result
        if name in ("echo", "echo_v2") or name.startswith("ref_"):
            if self.mode == "huge-response" and name == "echo":
                chunk = "0123456789abcdef" * 64 + "\n"
                body = (chunk * (HUGE_RESPONSE_CHARS // len(chunk) + 1))[:HUGE_RESPONSE_CHARS]
                return text(body)
            result = text(json.dumps(arguments))
            result["structuredContent"] = arguments
            return result
        if name == "write_note":
            return text(f"Saved note {arguments.get('title')!r} (not really).")
        if name == "delete_all":
            return text("Deleted 0 notes (nothing was really deleted).")
        if name == "slow_echo":
            seconds = arguments.get("seconds", 1)
            if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
                seconds = 1
            seconds = min(max(float(seconds), 0.0), 30.0)
            return [Sleep(seconds), text(str(arguments.get("text", "")))]
        return text(f"called {name} with {json.dumps(arguments)}")

    def client_answered(self, message: dict) -> None:
        """Note the client's answer to our server-to-client request (for the record)."""
        log(f"server-request: client answered {SERVER_REQUEST_ID} with {encode(message)[:500]}")
