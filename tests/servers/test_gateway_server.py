"""The reference gateway server: raw twins (docs/design.md#a-raw-twin-for-write-tools), validation, storage."""

from __future__ import annotations

import copy
import json
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from matrix_servers.gateway import schemas
from matrix_servers.gateway.backend import GatewayBackend
from matrix_servers.gateway.gateway import Gateway
from matrix_servers.gateway.server import build_server, call_tool
from matrix_servers.gateway.validation import describe_expected
from mcp import Client, MCPError, StdioServerParameters

from tests.servers.conftest import RAW_HANDSHAKE

CALL_TIMEOUT = 30.0
SESSION_TIMEOUT = 60.0
STARTUP_TIMEOUT = 90.0  # a bound on a failure only: a Python server at load 18 took over 30 s
LISTENING_LINE = re.compile(r"^MCP_MATRIX_LISTENING (http://127\.0\.0\.1:(\d+)/mcp)$")

KINDS = ["memory_write", "dispatch_record", "context_feedback"]
EXPECTED_TOOLS = [
    "memory_write",
    "memory_write_raw",
    "dispatch_record",
    "dispatch_record_raw",
    "context_feedback",
    "context_feedback_raw",
    "gateway_records",
]
V1_FIELDS = {
    "memory_write": ["agent_id", "text", "importance", "tags", "pinned"],
    "dispatch_record": ["dispatch_id", "recipients", "urgent", "details"],
    "context_feedback": ["context_id", "rating", "helpful", "notes"],
}
ADDED_IN_V2 = {
    "memory_write": "source",
    "dispatch_record": "priority",
    "context_feedback": "labels",
}

# Every v1 field of each kind, with values of every type the schemas use.
FULL_V1: dict[str, dict[str, Any]] = {
    "memory_write": {
        "agent_id": "research-bot",
        "text": "The user prefers °C — and lives in 東京",
        "importance": 0.75,
        "tags": ["prefs", "units"],
        "pinned": True,
    },
    "dispatch_record": {
        "dispatch_id": "d-2026-11-04-1",
        "recipients": ["ops@example.com", "oncall"],
        "urgent": False,
        "details": {
            "subject": "Disk full on db-1",
            "body": "db-1 is at 97%",
            "attachments": [{"name": "df.txt", "size_bytes": 512}, {"name": "du.txt"}],
        },
    },
    "context_feedback": {
        "context_id": "ctx-42",
        "rating": 4,
        "helpful": True,
        "notes": "mostly right",
    },
}
V2_VALUES: dict[str, Any] = {
    "memory_write": "user",
    "dispatch_record": "high",
    "context_feedback": ["stale", "partial"],
}
MINIMAL: dict[str, dict[str, Any]] = {
    "memory_write": {"agent_id": "a", "text": "likes tea"},
    "dispatch_record": {"dispatch_id": "d-1", "recipients": ["x"], "details": {"subject": "s"}},
    "context_feedback": {"context_id": "c-1", "rating": 5},
}


def full_record(kind: str, version: int) -> dict[str, Any]:
    record = copy.deepcopy(FULL_V1[kind])
    if version >= 2:
        record[ADDED_IN_V2[kind]] = copy.deepcopy(V2_VALUES[kind])
    return record


def twin_schema_literal(kind: str) -> dict[str, Any]:
    """The twin schema exactly as the raw-twin rule spells it (docs/design.md#a-raw-twin-for-write-tools)."""
    return {
        "type": "object",
        "properties": {
            "payload": {
                "type": "string",
                "description": (
                    "The whole record as a JSON-serialised object; validated server-side "
                    f"against the current {kind} schema."
                ),
            }
        },
        "required": ["payload"],
        "additionalProperties": False,
    }


class RecordingGateway(Gateway):
    """A real gateway that also records every record handed to :meth:`submit`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.submitted: list[tuple[str, Any, str]] = []

    def submit(self, kind: str, record: Any, *, via: str) -> Any:
        self.submitted.append((kind, copy.deepcopy(record), via))
        return super().submit(kind, record, via=via)


@pytest.fixture(params=schemas.SCHEMA_VERSIONS, ids=lambda v: f"v{v}")
def version(request: pytest.FixtureRequest) -> int:
    return request.param


@pytest.fixture
def gateway(tmp_path: Path, version: int) -> Iterator[RecordingGateway]:
    backend = GatewayBackend(tmp_path / "gateway.db")
    yield RecordingGateway(backend, version)
    backend.close()


@pytest.fixture
def call(gateway: RecordingGateway, version: int) -> Callable[[str, Any], Any]:
    tools = {t["name"]: t for t in schemas.tool_definitions(version)}

    def run(name: str, arguments: Any) -> Any:
        return call_tool(gateway, tools, name, arguments)

    return run


def error_text(result: Any) -> str:
    assert result.is_error is True, result
    assert result.structured_content is None
    return result.content[0].text


def stored_records(call: Callable[[str, Any], Any], **filters: Any) -> list[dict[str, Any]]:
    result = call("gateway_records", filters)
    assert result.is_error is False, result
    return result.structured_content["records"]


def raw(record: Any) -> dict[str, str]:
    return {"payload": json.dumps(record)}


# --- tool definitions


def test_tools_are_listed_in_a_fixed_order(version):
    assert [t["name"] for t in schemas.tool_definitions(version)] == EXPECTED_TOOLS


def test_twin_schemas_are_the_decision_records_one_string_in_every_version():
    for kind in KINDS:
        literal = json.dumps(twin_schema_literal(kind))
        for version in schemas.SCHEMA_VERSIONS:
            tools = {t["name"]: t for t in schemas.tool_definitions(version)}
            assert json.dumps(tools[f"{kind}_raw"]["inputSchema"]) == literal


def test_version_2_adds_exactly_one_optional_field_per_rich_tool():
    v1 = {t["name"]: t for t in schemas.tool_definitions(1)}
    v2 = {t["name"]: t for t in schemas.tool_definitions(2)}
    for kind in KINDS:
        before, after = v1[kind]["inputSchema"], v2[kind]["inputSchema"]
        assert list(before["properties"]) == V1_FIELDS[kind]
        assert list(after["properties"]) == [*V1_FIELDS[kind], ADDED_IN_V2[kind]]
        assert before["required"] == after["required"]
        assert ADDED_IN_V2[kind] not in after["required"]
        assert {k: v for k, v in after.items() if k != "properties"} == {
            k: v for k, v in before.items() if k != "properties"
        }


def _walk(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _walk(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _walk(value)


def test_rich_schemas_are_strict_and_rich(version):
    types_seen: set[str] = set()
    for kind in KINDS:
        schema = schemas.record_schema(kind, version)
        jsonschema.Draft202012Validator.check_schema(schema)
        for node in _walk(schema):
            if node.get("type") == "object":
                assert node["additionalProperties"] is False, (kind, node)
            if node.get("type") == "array":
                assert "type" in node["items"], (kind, node)
            if isinstance(node.get("type"), str):
                types_seen.add(node["type"])
    assert {"string", "number", "integer", "boolean", "array", "object"} <= types_seen


def test_annotations_descriptions_and_output_schemas(version):
    tools = {t["name"]: t for t in schemas.tool_definitions(version)}
    for kind in KINDS:
        for name in (kind, f"{kind}_raw"):
            annotations = tools[name]["annotations"]
            assert annotations["readOnlyHint"] is False
            assert annotations["destructiveHint"] is False
        assert "Preferred write path" in tools[f"{kind}_raw"]["description"]
        assert f"prefer {kind}_raw" in tools[kind]["description"]
        # The twin's description lists the current fields; its schema never changes.
        listed = f"{ADDED_IN_V2[kind]} (" in tools[f"{kind}_raw"]["description"]
        assert listed is (version == 2)
    reader = tools["gateway_records"]["annotations"]
    assert reader["readOnlyHint"] is True
    assert reader["idempotentHint"] is True
    for tool in tools.values():
        assert tool["outputSchema"]["type"] == "object"


# --- the write paths, in process with a recording gateway


def test_rich_tool_and_twin_store_the_same_record(call, gateway, version):
    for kind in KINDS:
        record = full_record(kind, version)
        rich = call(kind, copy.deepcopy(record))
        twin = call(f"{kind}_raw", raw(record))
        assert rich.is_error is False, rich
        assert twin.is_error is False, twin
        assert rich.structured_content["stored"] == twin.structured_content["stored"] == record
        assert (rich.structured_content["via"], twin.structured_content["via"]) == ("rich", "raw")
        assert json.loads(twin.content[0].text) == twin.structured_content
        output_schema = {t["name"]: t for t in schemas.tool_definitions(version)}[kind][
            "outputSchema"
        ]
        jsonschema.validate(twin.structured_content, output_schema)
    rows = stored_records(call)
    assert [(r["kind"], r["via"]) for r in rows] == [(k, v) for k in KINDS for v in ("rich", "raw")]
    assert all(r["schema_version"] == version for r in rows)


@pytest.mark.parametrize("kind", KINDS)
def test_the_twin_hands_the_whole_parsed_payload_to_the_gateway(call, gateway, kind):
    # Valid or not, known fields or not: the gateway gets exactly what was sent.
    for record in (
        full_record(kind, 2),
        {**full_record(kind, 2), "not_a_field": {"nested": [1, "two", None]}},
        {"only": "junk"},
    ):
        gateway.submitted.clear()
        call(f"{kind}_raw", raw(record))
        assert gateway.submitted == [(kind, record, "raw")]


def test_v2_twin_stores_every_field_including_the_new_one(tmp_path):
    gateway = Gateway(GatewayBackend(tmp_path / "v2.db"), 2)
    tools = {t["name"]: t for t in schemas.tool_definitions(2)}
    for kind in KINDS:
        record = full_record(kind, 2)
        result = call_tool(gateway, tools, f"{kind}_raw", raw(record))
        assert result.is_error is False, result
    rows = gateway.records()
    assert [r["stored"] for r in rows] == [full_record(k, 2) for k in KINDS]
    for row, kind in zip(rows, KINDS):
        assert list(row["stored"]) == [*V1_FIELDS[kind], ADDED_IN_V2[kind]]


@pytest.mark.parametrize("kind", KINDS)
def test_v1_rejects_the_v2_field_loudly_through_both_paths(tmp_path, kind):
    gateway = Gateway(GatewayBackend(tmp_path / "v1.db"), 1)
    tools = {t["name"]: t for t in schemas.tool_definitions(1)}
    record = full_record(kind, 2)
    field = ADDED_IN_V2[kind]
    for name, arguments in ((f"{kind}_raw", raw(record)), (kind, record)):
        text = error_text(call_tool(gateway, tools, name, arguments))
        assert text.startswith(f"{name} rejected the {kind} record (schema version 1): ")
        assert f"{field}: unknown field, not in the {kind} schema (version 1)" in text
        assert "Nothing was stored" in text
    assert gateway.records() == []


def test_stringified_array_and_boolean_are_rejected_never_coerced(call, gateway):
    record = {**MINIMAL["dispatch_record"], "recipients": '["a","b"]', "urgent": "true"}
    text = error_text(call("dispatch_record", record))
    assert (
        'recipients: expected an array of strings, got a string \'["a","b"]\' '
        "(JSON text inside a string: send the array itself, not its serialisation)"
    ) in text
    assert (
        "urgent: expected a boolean (true or false), got a string 'true' "
        "(a quoted boolean: send true without quotes)"
    ) in text
    memory = {**MINIMAL["memory_write"], "tags": '["x"]', "pinned": "false", "importance": "0.5"}
    text = error_text(call("memory_write", memory))
    assert "tags: expected an array of strings, got a string '[\"x\"]'" in text
    assert "pinned: expected a boolean (true or false), got a string 'false'" in text
    assert "importance: expected a number from 0 to 1, got a string '0.5'" in text
    feedback = {**MINIMAL["context_feedback"], "rating": "4", "helpful": 1}
    text = error_text(call("context_feedback", feedback))
    assert "rating: expected an integer from 1 to 5, got a string '4'" in text
    assert "helpful: expected a boolean (true or false), got the number 1" in text
    # The same record through the twin gets the same verdict from the same gateway.
    twin = error_text(call("dispatch_record_raw", raw(record)))
    assert "recipients: expected an array of strings" in twin
    assert stored_records(call) == []


@pytest.mark.parametrize(
    ("record", "fragment"),
    [
        ({}, "agent_id: required field is missing (expected a non-empty string)"),
        (
            {"agent_id": "", "text": "t"},
            "agent_id: expected a non-empty string, got an empty string",
        ),
        (
            {"agent_id": "a", "text": "t", "importance": 2},
            "importance: expected a number from 0 to 1, got the number 2",
        ),
        (
            {"agent_id": "a", "text": "t", "tags": ["ok", 3]},
            "tags[1]: expected a string, got the number 3",
        ),
        ({"agent_id": "a", "text": "t", "colour": "red"}, "colour: unknown field"),
    ],
    ids=["missing", "empty-string", "out-of-range", "array-item", "unknown"],
)
def test_memory_write_problems_name_the_field(call, record, fragment):
    text = error_text(call("memory_write_raw", raw(record)))
    assert fragment in text
    assert stored_records(call) == []


def test_nested_problems_name_the_nested_path(call, version):
    record = {
        **MINIMAL["dispatch_record"],
        "recipients": [],
        "details": {"attachments": [{"name": "a", "size_bytes": -1, "mime": "x"}]},
    }
    text = error_text(call("dispatch_record", record))
    assert "recipients: expected at least 1 item, got an empty array" in text
    assert "details.subject: required field is missing (expected a non-empty string)" in text
    assert "details.attachments[0].size_bytes: expected an integer of at least 0" in text
    assert "details.attachments[0].mime: unknown field" in text
    assert text.count("required field is missing") == 1


def test_a_wrong_v2_value_is_named_on_v2(tmp_path):
    gateway = Gateway(GatewayBackend(tmp_path / "v2.db"), 2)
    tools = {t["name"]: t for t in schemas.tool_definitions(2)}
    record = {**MINIMAL["dispatch_record"], "priority": "urgent"}
    text = error_text(call_tool(gateway, tools, "dispatch_record_raw", raw(record)))
    assert 'priority: expected one of "low", "normal", "high", got a string \'urgent\'' in text
    labels = {**MINIMAL["context_feedback"], "labels": "stale"}
    text = error_text(call_tool(gateway, tools, "context_feedback", labels))
    assert "labels: expected an array of strings, got a string 'stale'" in text


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"payload": '{"context_id": "c", rating: 3}'}, "payload is not valid JSON: Expecting"),
        ({"payload": '{"context_id": "c",'}, "payload is not valid JSON"),
        ({"payload": ""}, "payload is empty"),
        (
            {"payload": "[1, 2]"},
            "payload must be a JSON object holding the whole record, got a JSON array",
        ),
        ({"payload": '"{}"'}, "got a JSON string (the record was serialised twice"),
        ({"payload": "null"}, "got a JSON null"),
        ({"payload": '{"rating": 1, "rating": 2}'}, 'payload repeats the field "rating"'),
        ({"payload": '{"rating": NaN}'}, "payload contains NaN"),
        (
            {"payload": {"context_id": "c", "rating": 3}},
            "payload: expected a string, got an object. Serialise the record",
        ),
        ({"payload": 7}, "payload: expected a string, got the number 7"),
        ({}, "context_feedback_raw needs payload"),
        ({"payload": "{}", "rating": 3}, "unknown argument(s): rating"),
    ],
    ids=[
        "unquoted-key",
        "truncated",
        "empty",
        "array",
        "double-serialised",
        "null",
        "duplicate-key",
        "nan",
        "object-not-string",
        "number",
        "no-payload",
        "extra-argument",
    ],
)
def test_bad_twin_payloads_are_legible_tool_errors(call, gateway, arguments, fragment):
    text = error_text(call("context_feedback_raw", arguments))
    assert text.startswith("context_feedback_raw")
    assert fragment in text
    assert "Nothing was stored" in text
    assert gateway.submitted == []
    assert stored_records(call) == []


def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(call):
    with pytest.raises(MCPError) as caught:
        call("memory_delete", {})
    assert caught.value.code == -32602


def test_gateway_records_filters_by_kind_and_limits(call):
    for kind in KINDS:
        call(f"{kind}_raw", raw(MINIMAL[kind]))
        call(kind, MINIMAL[kind])
    assert [r["kind"] for r in stored_records(call, kind="dispatch_record")] == [
        "dispatch_record"
    ] * 2
    assert [r["id"] for r in stored_records(call, limit=2)] == [1, 2]
    text = error_text(call("gateway_records", {"kind": "nope", "limit": 0}))
    assert "kind: expected one of" in text
    assert "limit: expected an integer from 1 to 1000, got the number 0" in text


def test_describe_expected_covers_the_schema_shapes():
    assert (
        describe_expected({"type": "array", "items": {"type": "object"}}) == "an array of objects"
    )
    assert describe_expected({"type": "integer", "minimum": 0}) == "an integer of at least 0"
    assert describe_expected({"type": "object"}) == "an object"


# --- in-process SDK client


@pytest.mark.anyio
async def test_the_sdk_delivers_a_twin_call_to_the_gateway_whole(tmp_path):
    gateway = RecordingGateway(GatewayBackend(tmp_path / "sdk.db"), 2)
    record = full_record("dispatch_record", 2)
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(build_server(gateway), mode="legacy") as client:
            result = await client.call_tool("dispatch_record_raw", raw(record))
    assert result.is_error is False
    assert gateway.submitted == [("dispatch_record", record, "raw")]


# --- end to end: real subprocesses, official SDK client


def server_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "matrix_servers.gateway", *args]


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


class HttpGateway:
    def __init__(self, proc: subprocess.Popen[str], url: str, line: str) -> None:
        self.proc = proc
        self.url = url
        self.line = line


@pytest.fixture
def http_gateway(tmp_path: Path) -> Iterator[Callable[..., HttpGateway]]:
    """Factory: ``http_gateway("--version", "1")`` starts an HTTP gateway on port 0."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> HttpGateway:
        stderr_path = tmp_path / f"gateway-http-{len(started)}.stderr"
        with stderr_path.open("w") as stderr:
            proc = subprocess.Popen(
                server_command("--transport", "http", "--port", "0", *args),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        started.append(proc)
        lines: queue.Queue[str] = queue.Queue()
        stdout = proc.stdout
        assert stdout is not None
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=STARTUP_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"no listening line within {STARTUP_TIMEOUT}s: {stderr_path.read_text()}")
        match = LISTENING_LINE.match(line.rstrip("\n"))
        if match is None:
            pytest.fail(f"unexpected first stdout line {line!r}: {stderr_path.read_text()}")
        return HttpGateway(proc, match.group(1), line)

    yield start
    for proc in started:
        _stop(proc)


def stdio_client(tmp_path: Path, version: int) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "matrix_servers.gateway",
            "--version",
            str(version),
            "--db",
            str(tmp_path / f"stdio-v{version}.db"),
        ],
    )
    return Client(params, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)


def http_client(url: str) -> Client:
    return Client(url, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)


async def read_back(client: Client, **filters: Any) -> list[dict[str, Any]]:
    result = await client.call_tool("gateway_records", filters)
    assert result.is_error is False, result
    return result.structured_content["records"]


async def check_gateway(client: Client, version: int) -> dict[str, Any]:
    """The whole contract over one live connection; returns the twin schemas it saw."""
    assert client.server_info.name == "matrix-gateway"
    listing = await client.list_tools(cache_mode="bypass")
    tools = {t.name: t for t in listing.tools}
    assert list(tools) == EXPECTED_TOOLS
    for kind in KINDS:
        fields = list(tools[kind].input_schema["properties"])
        expected = V1_FIELDS[kind] + ([ADDED_IN_V2[kind]] if version == 2 else [])
        assert fields == expected
        assert tools[kind].input_schema == schemas.record_schema(kind, version)
        assert tools[f"{kind}_raw"].input_schema == twin_schema_literal(kind)
        assert tools[kind].annotations.read_only_hint is False
        assert tools[kind].annotations.destructive_hint is False
        assert tools[f"{kind}_raw"].annotations.read_only_hint is False
        assert tools[f"{kind}_raw"].annotations.destructive_hint is False
    assert tools["gateway_records"].annotations.read_only_hint is True
    assert tools["gateway_records"].annotations.idempotent_hint is True

    # A valid record via the rich tool and via the twin is stored identically.
    for kind in KINDS:
        rich = await client.call_tool(kind, MINIMAL[kind])
        twin = await client.call_tool(f"{kind}_raw", raw(MINIMAL[kind]))
        assert rich.is_error is False and twin.is_error is False, (rich, twin)
        assert rich.structured_content["stored"] == twin.structured_content["stored"]
    rows = await read_back(client)
    assert [r["stored"] for r in rows] == [MINIMAL[k] for k in KINDS for _ in range(2)]

    # Twins forward the whole payload: every field of this version arrives.
    for kind in KINDS:
        result = await client.call_tool(f"{kind}_raw", raw(full_record(kind, version)))
        assert result.is_error is False, result
        stored = (await read_back(client, kind=kind))[-1]
        assert stored["id"] == result.structured_content["id"]
        assert stored["via"] == "raw"
        assert stored["stored"] == full_record(kind, version)
        assert list(stored["stored"]) == list(full_record(kind, version))

    # On v1 the v2 field is rejected by the gateway, loudly, on both paths.
    if version == 1:
        before = len(await read_back(client))
        for kind in KINDS:
            field = ADDED_IN_V2[kind]
            for name, arguments in (
                (f"{kind}_raw", raw(full_record(kind, 2))),
                (kind, full_record(kind, 2)),
            ):
                result = await client.call_tool(name, arguments)
                assert result.is_error is True
                assert f"{field}: unknown field" in result.content[0].text
        assert len(await read_back(client)) == before

    # Stringified array and boolean: loud, legible, never coerced.
    bad = {**MINIMAL["dispatch_record"], "recipients": '["a","b"]', "urgent": "true"}
    result = await client.call_tool("dispatch_record", bad)
    assert result.is_error is True
    text = result.content[0].text
    assert 'recipients: expected an array of strings, got a string \'["a","b"]\'' in text
    assert "urgent: expected a boolean (true or false), got a string 'true'" in text

    # Invalid JSON in a twin payload.
    result = await client.call_tool("memory_write_raw", {"payload": '{"agent_id": "a", text}'})
    assert result.is_error is True
    assert "payload is not valid JSON" in result.content[0].text

    with pytest.raises(MCPError) as caught:
        await client.call_tool("no_such_tool", {})
    assert caught.value.code == -32602
    return {kind: tools[f"{kind}_raw"].input_schema for kind in KINDS}


@pytest.mark.anyio
async def test_stdio_gateway_end_to_end(tmp_path, version):
    with anyio.fail_after(SESSION_TIMEOUT):
        async with stdio_client(tmp_path, version) as client:
            await check_gateway(client, version)


@pytest.mark.anyio
async def test_http_gateway_end_to_end(http_gateway, tmp_path, version):
    server = http_gateway("--version", str(version), "--db", str(tmp_path / "http.db"))
    with anyio.fail_after(SESSION_TIMEOUT):
        async with http_client(server.url) as client:
            await check_gateway(client, version)


@pytest.mark.anyio
async def test_twin_schemas_are_byte_identical_across_live_v1_and_v2_servers(http_gateway):
    seen: dict[int, dict[str, Any]] = {}
    for version in (1, 2):
        server = http_gateway("--version", str(version))
        with anyio.fail_after(SESSION_TIMEOUT):
            async with http_client(server.url) as client:
                listing = await client.list_tools(cache_mode="bypass")
        seen[version] = {t.name: t.input_schema for t in listing.tools}
    for kind in KINDS:
        assert json.dumps(seen[1][f"{kind}_raw"]) == json.dumps(seen[2][f"{kind}_raw"])
        assert seen[1][kind] != seen[2][kind]


def test_http_listening_line_names_the_real_port(http_gateway):
    server = http_gateway()
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    assert port > 0
    assert server.line == f"MCP_MATRIX_LISTENING http://127.0.0.1:{port}/mcp\n"


def _raw_stdio_tools(tmp_path: Path, version: int) -> list[dict[str, Any]]:
    """tools/list over a bare stdio pipe, checking stdout carries nothing but protocol."""
    messages = [
        *RAW_HANDSHAKE,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.Popen(
        server_command("--version", str(version), "--db", str(tmp_path / f"raw-{version}.db")),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    stdout = proc.stdout
    assert stdout is not None and proc.stdin is not None
    threading.Thread(target=lambda: [lines.put(x) for x in stdout], daemon=True).start()
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        answers = [json.loads(lines.get(timeout=CALL_TIMEOUT)) for _ in range(2)]
        proc.stdin.close()
        proc.wait(timeout=CALL_TIMEOUT)
    finally:
        _stop(proc)
    assert lines.empty(), "stdout carried something besides the two answers"
    by_id = {a["id"]: a for a in answers}
    assert by_id[1]["result"]["serverInfo"]["name"] == "matrix-gateway"
    return by_id[2]["result"]["tools"]


def test_stdio_wire_carries_the_tools_verbatim_and_twins_identical(tmp_path):
    wire = {version: _raw_stdio_tools(tmp_path, version) for version in (1, 2)}
    for version, tools in wire.items():
        assert tools == schemas.tool_definitions(version)
    for kind in KINDS:
        twins = [
            json.dumps(next(t for t in wire[v] if t["name"] == f"{kind}_raw")["inputSchema"])
            for v in (1, 2)
        ]
        # Byte for byte the same text from both versions (the SDK fixes the key order)...
        assert twins[0] == twins[1]
        # ...and the raw-twin rule's schema.
        assert json.loads(twins[0]) == twin_schema_literal(kind)
