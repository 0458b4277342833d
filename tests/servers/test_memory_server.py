"""The reference memory server: its identity rule (docs/design.md#flatten-the-root), schemas, storage and transports."""

from __future__ import annotations

import copy
import json
import queue
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from matrix_servers.memory.backend import MemoryBackend
from matrix_servers.memory.identity import Rejected, Resolved, resolve_identity
from matrix_servers.memory.schemas import IDENTITY_TOOLS, SCHEMA_VARIANTS, tool_definitions
from matrix_servers.memory.server import build_server, call_tool
from mcp import Client, MCPError, StdioServerParameters

from tests.servers.conftest import RAW_HANDSHAKE

CALL_TIMEOUT = 30.0
EXPECTED_TOOLS = [
    "memory_store",
    "memory_recall",
    "memory_forget",
    "memory_reflect",
    "checkpoint_save",
    "checkpoint_resume",
    "memory_stats",
]
DEPRECATION_TEXT = "Deprecated alias for agent_id. Do not use; pass agent_id instead."
MALFORMED = [None, 42, 1.5, True, "", "   ", "\t\n", [], {}, ["me"]]


@pytest.fixture(params=SCHEMA_VARIANTS)
def variant(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def tools(variant: str) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in tool_definitions(variant)}


def reflect(tools: dict[str, dict[str, Any]], backend: Any, **arguments: Any) -> Any:
    return call_tool(tools, backend, "memory_reflect", {"action": "summarize", **arguments})


def error_text(result: Any) -> str:
    assert result.is_error is True
    assert result.structured_content is None
    return result.content[0].text


def reflection_namespaces(spy: Any) -> list[str]:
    return [args[0] for name, args in spy.calls if name in ("recall", "add_reflection")]


# --- the identity rules (docs/design.md#flatten-the-root), through the tool handler with a backend spy


def test_canonical_agent_id_alone_is_the_identity(tools, spy):
    result = reflect(tools, spy, agent_id="research-bot")
    assert result.is_error is False
    assert result.structured_content["agent_id"] == "research-bot"
    assert reflection_namespaces(spy) == ["research-bot", "research-bot"]


def test_deprecated_agent_alone_is_still_accepted(tools, spy):
    result = reflect(tools, spy, agent="legacy-bot")
    assert result.is_error is False
    assert result.structured_content["agent_id"] == "legacy-bot"
    assert reflection_namespaces(spy) == ["legacy-bot", "legacy-bot"]


def test_both_fields_with_equal_values_resolve_to_that_value(tools, spy):
    result = reflect(tools, spy, agent_id="same", agent="same")
    assert result.is_error is False
    assert result.structured_content["agent_id"] == "same"


def test_agent_id_wins_when_both_fields_are_valid_and_differ(tools, spy):
    result = reflect(tools, spy, agent_id="canonical", agent="alias")
    assert result.is_error is False
    assert result.structured_content["agent_id"] == "canonical"
    assert reflection_namespaces(spy) == ["canonical", "canonical"]
    assert "alias" not in json.dumps(spy.calls)


def test_a_call_with_neither_field_is_rejected_before_any_backend_call(tools, spy):
    text = error_text(reflect(tools, spy))
    assert "agent_id" in text
    assert "Nothing was read or written" in text
    assert spy.calls == []


@pytest.mark.parametrize("bad", MALFORMED, ids=repr)
def test_malformed_agent_id_fails_even_when_agent_is_valid(tools, spy, bad):
    text = error_text(reflect(tools, spy, agent_id=bad, agent="fallback"))
    assert text.startswith("memory_reflect rejected the identity: agent_id must be a string")
    assert "never replaced by the other one" in text
    assert spy.calls == []


@pytest.mark.parametrize("bad", MALFORMED, ids=repr)
def test_malformed_agent_fails_even_when_agent_id_is_valid(tools, spy, bad):
    text = error_text(reflect(tools, spy, agent_id="valid", agent=bad))
    assert "agent (deprecated alias for agent_id) must be a string" in text
    assert spy.calls == []


@pytest.mark.parametrize("bad", MALFORMED, ids=repr)
def test_malformed_agent_id_alone_is_rejected(tools, spy, bad):
    error_text(reflect(tools, spy, agent_id=bad))
    assert spy.calls == []


@pytest.mark.parametrize("bad", MALFORMED, ids=repr)
def test_malformed_agent_alone_is_rejected(tools, spy, bad):
    error_text(reflect(tools, spy, agent=bad))
    assert spy.calls == []


def test_when_both_fields_are_malformed_the_error_names_both(tools, spy):
    text = error_text(reflect(tools, spy, agent_id="", agent=None))
    assert (
        'agent_id must be a string with at least one non-whitespace character, but got an empty string ""'
        in text
    )
    assert "agent (deprecated alias for agent_id) must be a string" in text
    assert "but got null" in text
    assert spy.calls == []


def test_padded_identity_is_distinct_from_the_trimmed_one(tools, spy):
    call_tool(tools, spy, "memory_store", {"agent_id": "project", "content": "trimmed"})
    padded = reflect(tools, spy, agent_id=" project ")
    plain = reflect(tools, spy, agent_id="project")
    assert padded.structured_content["agent_id"] == " project "
    assert padded.structured_content["memories_considered"] == 0
    assert plain.structured_content["memories_considered"] == 1


def test_unicode_identity_is_valid_and_used_unchanged(tools, spy):
    name = "agent-ü-東京-🧠"
    result = reflect(tools, spy, agent=name)
    assert result.is_error is False
    assert result.structured_content["agent_id"] == name
    assert reflection_namespaces(spy) == [name, name]


def test_shared_namespace_is_a_valid_identity(tools, spy):
    result = reflect(tools, spy, agent_id="__shared__")
    assert result.is_error is False
    assert result.structured_content["agent_id"] == "__shared__"


def test_identity_is_checked_before_schema_validation_so_the_message_teaches_agent_id(tools, spy):
    text = error_text(reflect(tools, spy, agent_id=7, confidence="high"))
    assert "agent_id must be a string" in text
    assert spy.calls == []


@pytest.mark.parametrize("tool", [t for t, alias in IDENTITY_TOOLS.items() if not alias])
@pytest.mark.parametrize("bad", ["   ", "", None, 3], ids=repr)
def test_the_other_identity_tools_reject_a_malformed_agent_id_before_any_backend_call(
    tools, spy, tool, bad
):
    text = error_text(call_tool(tools, spy, tool, {"agent_id": bad}))
    assert text.startswith(f"{tool} rejected the identity")
    assert spy.calls == []


@pytest.mark.parametrize("tool", [t for t, alias in IDENTITY_TOOLS.items() if not alias])
def test_the_other_identity_tools_do_not_accept_the_deprecated_alias(tools, spy, tool):
    text = error_text(call_tool(tools, spy, tool, {"agent": "someone"}))
    assert f"{tool} needs an identity" in text
    assert spy.calls == []


def test_resolve_identity_reports_which_field_supplied_the_identity():
    assert resolve_identity("t", {"agent": "a"}, accept_alias=True) == Resolved("a", "agent")
    assert resolve_identity("t", {"agent_id": "b", "agent": "a"}, accept_alias=True) == Resolved(
        "b", "agent_id"
    )
    assert isinstance(resolve_identity("t", {"agent": "a"}, accept_alias=False), Rejected)


# --- server-side validation against the tool's own input schema


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"agent_id": "a", "colour": "red"}, "Additional properties are not allowed"),
        ({"agent_id": "a", "action": "dance"}, "'dance' is not one of"),
        ({"agent_id": "a", "action": "summarize", "confidence": "high"}, "confidence: 'high'"),
        ({"agent_id": "a", "action": "summarize", "confidence": 1.5}, "confidence: 1.5"),
        ({"agent_id": "a", "action": "summarize", "text": 5}, "text: 5 is not of type 'string'"),
        ({"agent_id": "a"}, "'action' is a required property"),
    ],
    ids=["unknown-property", "bad-enum", "wrong-type", "out-of-range", "text-int", "no-action"],
)
def test_arguments_that_break_the_input_schema_are_a_tool_error_without_backend_calls(
    tools, spy, arguments, fragment
):
    text = error_text(call_tool(tools, spy, "memory_reflect", arguments))
    assert text.startswith("Invalid arguments for memory_reflect")
    assert fragment in text
    assert spy.calls == []


def test_an_unknown_tool_name_is_a_json_rpc_invalid_params_error(tools, spy):
    with pytest.raises(MCPError) as caught:
        call_tool(tools, spy, "memory_delete_everything", {})
    assert caught.value.code == -32602
    assert spy.calls == []


def test_memory_stats_needs_no_identity(tools, spy):
    call_tool(tools, spy, "memory_store", {"agent_id": "a", "content": "x"})
    result = call_tool(tools, spy, "memory_stats", None)
    assert result.is_error is False
    assert result.structured_content == {
        "agents": 1,
        "memories": 1,
        "checkpoints": 0,
        "reflections": 0,
    }


# --- tool definitions


def test_there_are_seven_tools_in_a_fixed_order(variant):
    assert [t["name"] for t in tool_definitions(variant)] == EXPECTED_TOOLS


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside ``value``, itself included."""
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in _containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in _containers(v))]
    return []


def test_tool_definitions_are_built_fresh_without_a_deep_copy(variant, monkeypatch):
    """Each forked server builds its definitions once per session: they are made anew (a caller
    may mutate them: no dict or list is shared with another call, nor twice within one), never
    deep-copied (a copy of dicts built a moment before was pure cost)."""
    copies: list[object] = []
    real = copy.deepcopy
    monkeypatch.setattr(copy, "deepcopy", lambda x, memo=None: copies.append(x) or real(x, memo))
    first, second = tool_definitions(variant), tool_definitions(variant)
    assert copies == []
    ours = [id(c) for c in _containers(first)]
    assert len(ours) == len(set(ours))  # nothing aliased inside one call's definitions
    assert not set(ours) & {id(c) for c in _containers(second)}
    assert first == second


def test_flat_memory_reflect_schema_has_no_root_combinator():
    schema = {t["name"]: t for t in tool_definitions("flat")}["memory_reflect"]["inputSchema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["action"]
    assert schema["additionalProperties"] is False
    assert not {"anyOf", "oneOf", "allOf"} & schema.keys()
    assert list(schema["properties"]) == [
        "action",
        "agent_id",
        "agent",
        "text",
        "target",
        "confidence",
    ]
    assert schema["properties"]["action"]["enum"] == ["summarize", "consolidate", "critique"]
    assert schema["properties"]["confidence"] == {
        "type": "number",
        "minimum": 0,
        "maximum": 1,
        "description": schema["properties"]["confidence"]["description"],
    }


def test_anyof_memory_reflect_schema_keeps_the_original_root_anyof():
    flat = {t["name"]: t for t in tool_definitions("flat")}["memory_reflect"]["inputSchema"]
    schema = {t["name"]: t for t in tool_definitions("anyof")}["memory_reflect"]["inputSchema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["action"]
    assert schema["anyOf"] == [{"required": ["agent_id"]}, {"required": ["agent"]}]
    assert {k: v for k, v in schema.items() if k != "anyOf"} == flat


def test_descriptions_teach_identity_deprecation_and_precedence_at_discovery(variant):
    tool = {t["name"]: t for t in tool_definitions(variant)}["memory_reflect"]
    props = tool["inputSchema"]["properties"]
    assert props["agent"]["description"].startswith(DEPRECATION_TEXT)
    assert "Required at runtime" in props["agent_id"]["description"]
    assert "agent_id wins" in props["agent_id"]["description"]
    assert "Identity is required at runtime: pass agent_id" in tool["description"]
    assert "deprecated alias for agent_id" in tool["description"]
    assert "agent_id wins" in tool["description"]


def test_an_identity_free_call_passes_the_flat_schema_but_not_the_runtime_check(spy):
    schema = {t["name"]: t for t in tool_definitions("flat")}
    jsonschema.validate({"action": "summarize"}, schema["memory_reflect"]["inputSchema"])
    error_text(call_tool(schema, spy, "memory_reflect", {"action": "summarize"}))
    assert spy.calls == []


def test_annotations_mark_reads_as_read_only_and_forget_as_destructive():
    annotations = {t["name"]: t["annotations"] for t in tool_definitions()}
    for read in ("memory_recall", "checkpoint_resume", "memory_stats"):
        assert annotations[read]["readOnlyHint"] is True
    for write in ("memory_store", "memory_forget", "memory_reflect", "checkpoint_save"):
        assert annotations[write]["readOnlyHint"] is False
    assert annotations["memory_forget"]["destructiveHint"] is True
    for additive in ("memory_store", "memory_reflect", "checkpoint_save"):
        assert annotations[additive]["destructiveHint"] is False


def test_identity_tools_take_agent_id_and_memory_stats_takes_nothing():
    definitions = {t["name"]: t for t in tool_definitions()}
    for name in IDENTITY_TOOLS:
        assert "agent_id" in definitions[name]["inputSchema"]["properties"]
    assert definitions["memory_stats"]["inputSchema"]["properties"] == {}


def test_checkpoint_resume_declares_a_union_output_schema():
    output = {t["name"]: t for t in tool_definitions()}["checkpoint_resume"]["outputSchema"]
    assert output["type"] == "object"
    assert len(output["anyOf"]) == 2
    assert [branch["properties"]["found"] for branch in output["anyOf"]] == [
        {"const": True},
        {"const": False},
    ]


def test_every_successful_result_matches_its_output_schema(tools, spy):
    stored = call_tool(tools, spy, "memory_store", {"agent_id": "a", "content": "likes tea"})
    memory_id = stored.structured_content["memory"]["id"]
    calls = [
        ("memory_store", {"agent_id": "a", "content": "likes tea", "tags": ["prefs"]}),
        ("memory_recall", {"agent_id": "a", "query": "TEA", "tags": ["prefs"]}),
        ("memory_reflect", {"agent_id": "a", "action": "consolidate", "target": "tea"}),
        ("memory_reflect", {"agent_id": "a", "action": "critique", "text": "too vague"}),
        ("checkpoint_resume", {"agent_id": "a", "name": "step"}),
        ("checkpoint_save", {"agent_id": "a", "name": "step", "state": {"n": 1}}),
        ("checkpoint_resume", {"agent_id": "a", "name": "step"}),
        ("memory_forget", {"agent_id": "a", "memory_id": memory_id}),
        ("memory_forget", {"agent_id": "a", "memory_id": memory_id}),
        ("memory_stats", {}),
    ]
    for name, arguments in calls:
        result = call_tool(tools, spy, name, arguments)
        assert result.is_error is False, (name, result)
        jsonschema.validate(result.structured_content, tools[name]["outputSchema"])
        assert json.loads(result.content[0].text) == result.structured_content


def test_checkpoint_resume_returns_the_not_found_shape_then_the_found_shape(tools, spy):
    missing = call_tool(tools, spy, "checkpoint_resume", {"agent_id": "a"})
    assert missing.structured_content["found"] is False
    assert "reason" in missing.structured_content
    call_tool(tools, spy, "checkpoint_save", {"agent_id": "a", "state": {"v": 1}})
    call_tool(tools, spy, "checkpoint_save", {"agent_id": "a", "state": {"v": 2}})
    found = call_tool(tools, spy, "checkpoint_resume", {"agent_id": "a"})
    assert found.structured_content["found"] is True
    assert found.structured_content["version"] == 2
    assert found.structured_content["state"] == {"v": 2}


def test_memory_forget_deletes_only_within_the_callers_namespace(tools, tmp_path):
    backend = MemoryBackend(tmp_path / "ns.db")
    stored = call_tool(tools, backend, "memory_store", {"agent_id": "owner", "content": "secret"})
    memory_id = stored.structured_content["memory"]["id"]
    other = call_tool(
        tools, backend, "memory_forget", {"agent_id": "other", "memory_id": memory_id}
    )
    assert other.structured_content["deleted"] is False
    mine = call_tool(tools, backend, "memory_forget", {"agent_id": "owner", "memory_id": memory_id})
    assert mine.structured_content["deleted"] is True
    backend.close()


# --- in-process SDK client: the handler wiring and paging without a subprocess


@pytest.mark.anyio
async def test_an_injected_backend_sees_no_call_when_the_sdk_delivers_a_rejected_call(spy):
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(build_server(spy), mode="legacy") as client:
            result = await client.call_tool("memory_reflect", {"action": "critique", "agent": " "})
    assert result.is_error is True
    assert spy.calls == []


# --- end to end: real subprocesses, official SDK client


async def list_all_tools(client: Client) -> tuple[list[Any], list[str]]:
    tools: list[Any] = []
    cursors: list[str] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        if page.next_cursor is None:
            return tools, cursors
        cursors.append(page.next_cursor)
        cursor = page.next_cursor
        assert len(cursors) < 20, "paging does not terminate"


def stdio_client(tmp_path: Path, *args: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "matrix_servers.memory", "--db", str(tmp_path / "stdio.db"), *args],
    )
    return Client(params, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)


def http_client(url: str) -> Client:
    return Client(url, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)


async def check_listing_and_identity(client: Client, variant: str) -> None:
    tools, _ = await list_all_tools(client)
    assert [t.name for t in tools] == EXPECTED_TOOLS
    reflect_tool = next(t for t in tools if t.name == "memory_reflect")
    schema = reflect_tool.input_schema
    assert (
        schema == {t["name"]: t for t in tool_definitions(variant)}["memory_reflect"]["inputSchema"]
    )
    if variant == "flat":
        assert not {"anyOf", "oneOf", "allOf"} & schema.keys()
    else:
        assert schema["anyOf"] == [{"required": ["agent_id"]}, {"required": ["agent"]}]
    assert reflect_tool.annotations.read_only_hint is False
    resume = next(t for t in tools if t.name == "checkpoint_resume")
    assert resume.annotations.read_only_hint is True
    assert "anyOf" in resume.output_schema

    ok = await client.call_tool("memory_reflect", {"action": "summarize", "agent_id": "e2e"})
    assert ok.is_error is False
    assert ok.structured_content["agent_id"] == "e2e"

    alias = await client.call_tool("memory_reflect", {"action": "summarize", "agent": "old"})
    assert alias.structured_content["agent_id"] == "old"

    both = await client.call_tool(
        "memory_reflect", {"action": "summarize", "agent_id": "new", "agent": "old"}
    )
    assert both.structured_content["agent_id"] == "new"

    missing = await client.call_tool("memory_reflect", {"action": "summarize"})
    assert missing.is_error is True
    assert "pass agent_id" in missing.content[0].text

    malformed = await client.call_tool(
        "memory_reflect", {"action": "summarize", "agent_id": "   ", "agent": "old"}
    )
    assert malformed.is_error is True
    assert "agent_id must be a string" in malformed.content[0].text

    unknown_property = await client.call_tool(
        "memory_reflect", {"action": "summarize", "agent_id": "e2e", "user": "x"}
    )
    assert unknown_property.is_error is True
    assert "Additional properties are not allowed" in unknown_property.content[0].text

    resumed = await client.call_tool("checkpoint_resume", {"agent_id": "e2e"})
    assert resumed.structured_content["found"] is False

    with pytest.raises(MCPError) as caught:
        await client.call_tool("no_such_tool", {})
    assert caught.value.code == -32602


@pytest.mark.anyio
async def test_stdio_server_lists_the_schema_and_enforces_identity(tmp_path, variant):
    with anyio.fail_after(60):
        async with stdio_client(tmp_path, "--schema", variant) as client:
            assert client.server_info.name == "matrix-memory"
            await check_listing_and_identity(client, variant)


@pytest.mark.anyio
async def test_http_server_lists_the_schema_and_enforces_identity(http_server, tmp_path, variant):
    server = http_server("--schema", variant, "--db", str(tmp_path / "http.db"))
    with anyio.fail_after(60):
        async with http_client(server.url) as client:
            await check_listing_and_identity(client, variant)


@pytest.mark.anyio
async def test_stdio_tools_list_pages_with_opaque_cursors(tmp_path):
    with anyio.fail_after(60):
        async with stdio_client(tmp_path, "--page-size", "2") as client:
            tools, cursors = await list_all_tools(client)
            with pytest.raises(MCPError) as caught:
                await client.list_tools(cursor="not-a-cursor", cache_mode="bypass")
    assert [t.name for t in tools] == EXPECTED_TOOLS
    assert len(cursors) == 3
    assert len(set(cursors)) == 3
    assert caught.value.code == -32602


@pytest.mark.anyio
async def test_http_tools_list_pages_with_opaque_cursors(http_server):
    server = http_server("--page-size", "3")
    with anyio.fail_after(60):
        async with http_client(server.url) as client:
            first = await client.list_tools(cache_mode="bypass")
            tools, cursors = await list_all_tools(client)
    assert [t.name for t in first.tools] == EXPECTED_TOOLS[:3]
    assert [t.name for t in tools] == EXPECTED_TOOLS
    assert len(cursors) == 2


@pytest.mark.anyio
async def test_without_page_size_all_tools_come_in_one_page(http_server):
    server = http_server()
    with anyio.fail_after(60):
        async with http_client(server.url) as client:
            page = await client.list_tools(cache_mode="bypass")
    assert len(page.tools) == 7
    assert page.next_cursor is None


def test_http_server_prints_exactly_the_listening_line_with_its_real_port(http_server):
    server = http_server()
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    assert server.line == f"MCP_MATRIX_LISTENING http://127.0.0.1:{port}/mcp\n"
    assert port > 0


@pytest.mark.anyio
async def test_http_server_stores_memories_in_the_given_sqlite_file(http_server, tmp_path):
    db = tmp_path / "persist.db"
    server = http_server("--db", str(db))
    with anyio.fail_after(60):
        async with http_client(server.url) as client:
            stored = await client.call_tool(
                "memory_store", {"agent_id": "__shared__", "content": "the build uses tox"}
            )
            recalled = await client.call_tool("memory_recall", {"agent_id": "__shared__"})
            stats = await client.call_tool("memory_stats", {})
    assert stored.is_error is False
    assert recalled.structured_content["count"] == 1
    assert stats.structured_content["memories"] == 1
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT agent_id, content FROM memories").fetchall()
    assert rows == [("__shared__", "the build uses tox")]


def test_stdio_stdout_carries_only_protocol_and_the_tools_verbatim(tmp_path, variant):
    messages = [
        *RAW_HANDSHAKE,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "matrix_servers.memory",
            "--schema",
            variant,
            "--db",
            str(tmp_path / "raw.db"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    stdout = proc.stdout
    reader = threading.Thread(target=lambda: [lines.put(x) for x in stdout], daemon=True)
    reader.start()
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        answers = [json.loads(lines.get(timeout=CALL_TIMEOUT)) for _ in range(2)]
        proc.stdin.close()
        proc.wait(timeout=CALL_TIMEOUT)
        reader.join(timeout=CALL_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    by_id = {a["id"]: a for a in answers}
    assert sorted(by_id) == [1, 2]
    assert by_id[1]["result"]["serverInfo"]["name"] == "matrix-memory"
    # The wire carries the tool data exactly as written (key order aside).
    assert by_id[2]["result"]["tools"] == tool_definitions(variant)
    assert "nextCursor" not in by_id[2]["result"]
    # Nothing but those two answers reached stdout before the server exited.
    stdout_rest = []
    while not lines.empty():
        stdout_rest.append(lines.get_nowait())
    assert stdout_rest == []


def _lines_into(stream: Any, lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line)


def test_the_stdio_server_ends_on_eof_with_its_writes_kept_and_its_temp_files_removed(tmp_path):
    """The server ends without the interpreter's teardown (serving.exit_now): what it wrote
    is committed, its default temporary database is removed, and the exit code is 0."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    db = tmp_path / "kept.db"
    call = {
        "agent_id": "research-bot",
        "content": "The user prefers metric units.",
        "tags": ["units"],
        "importance": 0.8,
    }
    messages = [
        *RAW_HANDSHAKE,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_store", "arguments": call},
        },
    ]
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(temp)}
    for args in ([], ["--db", str(db)]):
        proc = subprocess.Popen(
            [sys.executable, "-m", "matrix_servers.memory", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_lines_into, args=(proc.stdout, lines), daemon=True).start()
        try:
            proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
            proc.stdin.flush()
            answers = [json.loads(lines.get(timeout=CALL_TIMEOUT)) for _ in range(2)]
            proc.stdin.close()  # EOF: the server ends
            code = proc.wait(timeout=CALL_TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        stored = {a["id"]: a for a in answers}[2]
        assert stored["result"].get("isError") is not True, stored
        assert code == 0
    assert list(temp.iterdir()) == []
    with sqlite3.connect(db) as kept:
        assert kept.execute("SELECT content FROM memories").fetchall() == [(call["content"],)]
