"""Smoke test of the fault-injection server: raw JSON-RPC, every read bounded.

The server is started as a subprocess (as the matrix does); stdout is read on a
thread into a queue so a silent or hung server fails the test instead of
blocking it.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading

import httpx
import pytest

SERVER = [sys.executable, "-m", "matrix_servers.faulty"]
TIMEOUT = 5.0
EOF = object()

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "smoke", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def request(msg_id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def call(msg_id, name, arguments):
    return request(msg_id, "tools/call", {"name": name, "arguments": arguments})


def _pump(stream, q: queue.Queue) -> None:
    for line in iter(stream.readline, b""):
        q.put(line.decode("utf-8", errors="replace").rstrip("\r\n"))
    q.put(EOF)


class Proc:
    """A server subprocess whose stdout and stderr lines arrive on queues."""

    def __init__(self, *args: str) -> None:
        self.p = subprocess.Popen(
            SERVER + list(args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.out: queue.Queue = queue.Queue()
        self.err: queue.Queue = queue.Queue()
        for stream, q in ((self.p.stdout, self.out), (self.p.stderr, self.err)):
            threading.Thread(target=_pump, args=(stream, q), daemon=True).start()

    def send(self, msg) -> None:
        text = msg if isinstance(msg, str) else json.dumps(msg)
        self.p.stdin.write(text.encode() + b"\n")
        self.p.stdin.flush()

    def line(self, timeout: float = TIMEOUT):
        try:
            return self.out.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no output within {timeout}s")

    def message(self, timeout: float = TIMEOUT) -> dict:
        line = self.line(timeout)
        assert line is not EOF, "server closed stdout"
        return json.loads(line)

    def silent_for(self, seconds: float) -> bool:
        try:
            self.out.get(timeout=seconds)
        except queue.Empty:
            return True
        return False

    def stderr_text(self) -> str:
        lines = []
        while True:
            try:
                item = self.err.get(timeout=TIMEOUT)
            except queue.Empty:
                break
            if item is EOF:
                break
            lines.append(item)
        return "\n".join(lines)

    def handshake(self) -> dict:
        self.send(INIT)
        first = self.message()
        self.send(INITIALIZED)
        return first

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(timeout=TIMEOUT)
        for s in (self.p.stdin, self.p.stdout, self.p.stderr):
            try:
                s.close()
            except OSError:
                pass


@pytest.fixture
def spawn():
    procs: list[Proc] = []

    def start(*args: str) -> Proc:
        proc = Proc(*args)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.kill()


# ----------------------------------------------------------------------------- stdio


def test_stdio_ok(spawn, tmp_path):
    record = tmp_path / "calls.jsonl"
    srv = spawn("--mode", "ok", "--record", str(record))
    init = srv.handshake()
    assert init["id"] == 1
    assert init["result"]["protocolVersion"] == "2025-06-18"
    assert init["result"]["serverInfo"] == {"name": "faulty", "version": "0.1"}
    assert init["result"]["capabilities"] == {"tools": {"listChanged": True}}

    srv.send(request(2, "tools/list"))
    tools = {t["name"]: t for t in srv.message()["result"]["tools"]}
    assert set(tools) == {"echo", "write_note", "delete_all", "slow_echo"}
    assert tools["echo"]["annotations"]["readOnlyHint"] is True
    assert tools["write_note"]["annotations"]["readOnlyHint"] is False
    assert tools["delete_all"]["annotations"]["destructiveHint"] is True

    srv.send(call(3, "echo", {"text": "hi"}))
    answer = srv.message()
    assert answer["id"] == 3
    assert answer["result"]["structuredContent"] == {"text": "hi"}
    assert json.loads(answer["result"]["content"][0]["text"]) == {"text": "hi"}

    srv.send(request(4, "ping"))
    assert srv.message() == {"jsonrpc": "2.0", "id": 4, "result": {}}
    srv.send(request(5, "resources/list"))
    assert srv.message()["error"]["code"] == -32601
    srv.send("this is not json")
    assert srv.message()["error"]["code"] == -32700

    recorded = [json.loads(x) for x in record.read_text().splitlines()]
    assert recorded == [{"name": "echo", "arguments": {"text": "hi"}}]

    srv.p.stdin.close()  # EOF ends a healthy server
    assert srv.p.wait(timeout=TIMEOUT) == 0


def test_stdio_unknown_version_gets_latest(spawn):
    srv = spawn("--mode", "ok")
    srv.send({**INIT, "params": {**INIT["params"], "protocolVersion": "1999-01-01"}})
    assert srv.message()["result"]["protocolVersion"] == "2025-11-25"


def test_stdio_crash_on_call(spawn, tmp_path):
    record = tmp_path / "calls.jsonl"
    srv = spawn("--mode", "crash-on-call", "--record", str(record))
    srv.handshake()
    srv.send(call(2, "delete_all", {}))
    assert srv.line() is EOF
    assert srv.p.wait(timeout=TIMEOUT) == 3
    assert "fatal" in srv.stderr_text()
    assert json.loads(record.read_text())["name"] == "delete_all"


def test_stdio_crash_on_initialize(spawn):
    srv = spawn("--mode", "crash-on-initialize")
    srv.send(INIT)
    assert srv.line() is EOF
    assert srv.p.wait(timeout=TIMEOUT) == 3
    assert "boom during initialize" in srv.stderr_text()


def test_stdio_hang_survives_eof(spawn):
    srv = spawn("--mode", "hang")
    srv.send(INIT)
    assert srv.silent_for(0.3)
    srv.p.stdin.close()
    with pytest.raises(subprocess.TimeoutExpired):
        srv.p.wait(timeout=0.3)


def test_stdio_faults_on_the_wire(spawn):
    noisy = spawn("--mode", "stdout-noise")
    assert noisy.line() == "Server starting..."
    noisy.send(request(7, "tools/list"))
    lines = [noisy.line(), noisy.line(), noisy.line()]  # banner, log line, answer
    assert json.loads(lines[-1])["id"] == 7
    assert not lines[0].startswith("{")

    broken = spawn("--mode", "invalid-json")
    broken.handshake()
    broken.send(request(2, "tools/list"))
    with pytest.raises(json.JSONDecodeError):
        json.loads(broken.line())

    wrong = spawn("--mode", "wrong-id")
    wrong.handshake()
    wrong.send(call(9, "echo", {"text": "x"}))
    assert wrong.message()["id"] != 9

    failing = spawn("--mode", "list-error")
    failing.handshake()
    failing.send(request(2, "tools/list"))
    assert failing.message()["error"] == {
        "code": -32603,
        "message": "database unavailable",
        "data": {"retry": False},
    }


def test_stdio_list_changed(spawn):
    srv = spawn("--mode", "list-changed")
    srv.handshake()
    assert srv.message()["method"] == "notifications/tools/list_changed"
    srv.send(request(2, "tools/list"))
    assert "echo_v2" in [t["name"] for t in srv.message()["result"]["tools"]]


def test_stdio_server_request(spawn):
    srv = spawn("--mode", "server-request")
    srv.handshake()
    srv.send(call(2, "echo", {"text": "x"}))
    ask = srv.message()
    assert ask["method"] == "roots/list" and ask["id"] == "srv-1"
    assert srv.silent_for(0.2)  # the call waits for our answer
    srv.send({"jsonrpc": "2.0", "id": "srv-1", "result": {"roots": []}})
    assert srv.message()["id"] == 2


def test_stdio_many_tools_pages(spawn):
    srv = spawn("--mode", "many-tools")
    srv.handshake()
    names, cursor, pages = [], None, 0
    while True:
        srv.send(request(10 + pages, "tools/list", {"cursor": cursor} if cursor else {}))
        result = srv.message()["result"]
        names += [t["name"] for t in result["tools"]]
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert pages == 3 and len(names) == 2_500 == len(set(names))  # 1,000 + 1,000 + 500
    assert "tool_00000" in names


def test_stdio_schema_faults(spawn):
    deep = spawn("--mode", "deep-schema")
    deep.handshake()
    deep.send(request(2, "tools/list"))
    line = deep.line()
    assert line.count('"properties"') > 5000
    with pytest.raises(RecursionError):
        json.loads(line)

    bad = spawn("--mode", "bad-schemas")
    bad.handshake()
    bad.send(request(2, "tools/list"))
    tools = {t["name"]: t for t in bad.message()["result"]["tools"]}
    assert tools["true_schema"]["inputSchema"] is True
    assert tools["string_schema"]["inputSchema"] == "string"
    assert tools["null_schema"]["inputSchema"] is None
    assert tools["list_schema"]["inputSchema"] == []
    assert "inputSchema" not in tools["missing_schema"]
    assert "type" not in tools["anyof_root"]["inputSchema"]

    hostile = spawn("--mode", "hostile-names")
    hostile.handshake()
    hostile.send(request(2, "tools/list"))
    names = [t["name"] for t in hostile.message()["result"]["tools"]]
    assert "<script>alert(1)</script>" in names and "new\nline" in names


def test_http_only_mode_refused_on_stdio(spawn):
    srv = spawn("--mode", "http-500")
    assert srv.p.wait(timeout=TIMEOUT) == 2


# ----------------------------------------------------------------------------- HTTP

ACCEPT = {"Accept": "application/json, text/event-stream"}


def start_http(spawn, mode: str) -> str:
    srv = spawn("--mode", mode, "--transport", "http", "--port", "0")
    line = srv.line()
    assert line is not EOF and line.startswith("MCP_MATRIX_LISTENING http://127.0.0.1:")
    url = line.split(" ", 1)[1]
    assert url.endswith("/mcp")
    return url


def sse_messages(text: str) -> list[dict]:
    messages = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = [ln[5:].lstrip() for ln in block.split("\n") if ln.startswith("data:")]
        if data and "".join(data):
            messages.append(json.loads("\n".join(data)))
    return messages


def test_http_ok(spawn):
    url = start_http(spawn, "ok")
    with httpx.Client(timeout=TIMEOUT, headers=ACCEPT) as client:
        r = client.post(url, json=INIT)
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        assert "event: message\r\ndata: " in r.text
        [init] = sse_messages(r.text)
        assert init["result"]["protocolVersion"] == "2025-06-18"
        sid = r.headers["mcp-session-id"]
        headers = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}

        r = client.post(url, json=INITIALIZED, headers=headers)
        assert r.status_code == 202 and r.content == b""

        assert client.post(url, json=request(2, "tools/list")).status_code == 400  # no session

        r = client.post(url, json=request(2, "tools/list"), headers=headers)
        [listing] = sse_messages(r.text)
        assert {t["name"] for t in listing["result"]["tools"]} >= {"echo", "delete_all"}

        r = client.post(
            url,
            json=call(3, "echo", {"text": "hi"}),
            headers={**headers, "Accept": "application/json"},
        )
        assert r.headers["content-type"] == "application/json"
        assert r.json()["result"]["structuredContent"] == {"text": "hi"}

        assert client.delete(url, headers=headers).status_code == 200
        assert client.post(url, json=request(4, "ping"), headers=headers).status_code == 404


def test_http_500(spawn):
    url = start_http(spawn, "http-500")
    r = httpx.post(url, json=INIT, headers=ACCEPT, timeout=TIMEOUT)
    assert r.status_code == 500
    assert r.headers["content-type"].startswith("text/plain")


def _session(client: httpx.Client, url: str) -> dict:
    r = client.post(url, json=INIT)
    headers = {"Mcp-Session-Id": r.headers["mcp-session-id"]}
    assert client.post(url, json=INITIALIZED, headers=headers).status_code == 202
    return headers


def test_http_session_expires(spawn):
    url = start_http(spawn, "session-expires")
    with httpx.Client(timeout=TIMEOUT, headers=ACCEPT) as client:
        headers = _session(client, url)
        assert client.post(url, json=request(2, "tools/list"), headers=headers).status_code == 200
        assert client.post(url, json=request(3, "tools/list"), headers=headers).status_code == 404


def test_http_sse_never_closes(spawn):
    url = start_http(spawn, "sse-never-closes")
    with httpx.Client(timeout=TIMEOUT, headers=ACCEPT) as client:
        headers = _session(client, url)
        body = call(2, "echo", {"text": "x"})
        with client.stream("POST", url, json=body, headers=headers) as r:
            assert r.headers["content-type"] == "text/event-stream"
            lines = r.iter_lines()
            keepalives = [ln for ln in (next(lines) for _ in range(4)) if ln]
            assert keepalives and all(ln.startswith(":") for ln in keepalives)


def test_http_server_request(spawn):
    url = start_http(spawn, "server-request")
    with httpx.Client(timeout=TIMEOUT, headers=ACCEPT) as client:
        headers = _session(client, url)
        body = call(2, "echo", {"text": "x"})
        with client.stream("POST", url, json=body, headers=headers) as r:
            chunks = r.iter_text()
            seen = ""
            while "srv-1" not in seen:
                seen += next(chunks)
            [ask] = sse_messages(seen)
            assert ask["method"] == "roots/list"
            answer = {"jsonrpc": "2.0", "id": "srv-1", "result": {"roots": []}}
            assert client.post(url, json=answer, headers=headers).status_code == 202
            rest = seen + "".join(chunks)
        assert sse_messages(rest)[-1]["id"] == 2
