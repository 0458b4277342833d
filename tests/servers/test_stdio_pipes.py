"""The bundled servers' stdin and stdout on pipes (``matrix_servers.pipes``): what the SDK's own
text streams would read and write, without a worker thread; and what a memory server costs a
session in threads, files and parsers."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
from matrix_servers import pipes
from matrix_servers.memory import options

from tests.servers.conftest import RAW_HANDSHAKE

pytestmark = pytest.mark.anyio

# Line ends of every kind, malformed UTF-8, a character and a \r\n cut between two writes, and a
# last line without a line end.
CHUNKS = [
    b'{"a": 1}\n{"b": "\xc3',
    b'\xa9"}\r',
    b'\n{"c": "\xff\xfe"}\r{"d": 2}\r\n',
    b"\r\n\n",
    b'{"e": "no end"}',
]


async def sdk_lines(data: bytes) -> list[str]:
    """What the SDK's stdio_server reads from ``data``: anyio.wrap_file(TextIOWrapper(...))."""
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
    return [line async for line in anyio.wrap_file(text)]


async def test_pipe_lines_are_the_lines_the_sdks_text_wrapper_reads():
    r, w = os.pipe()
    got: list[str] = []

    async def feed() -> None:
        for chunk in CHUNKS:
            os.write(w, chunk)
            await anyio.sleep(0.02)  # read before the next write: each chunk one read
        os.close(w)

    async with anyio.create_task_group() as tg:
        tg.start_soon(feed)
        got = [line async for line in pipes.PipeLines(r)]
    os.close(r)
    assert got == await sdk_lines(b"".join(CHUNKS))
    assert len(got) == 7


async def test_the_pipe_writer_writes_a_message_larger_than_the_pipe_whole():
    r, w = os.pipe()
    message = json.dumps({"text": "é" * 300_000}) + "\n"  # several times a pipe's capacity
    received = bytearray()

    def drain() -> None:
        while chunk := os.read(r, 65536):
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    writer = pipes.PipeWriter(w)
    assert await writer.write(message) == len(message)
    await writer.flush()
    os.close(w)
    reader.join(timeout=60)
    os.close(r)
    assert bytes(received) == message.encode("utf-8")
    with pytest.raises(UnicodeEncodeError):  # as TextIOWrapper(encoding="utf-8") refuses it
        await pipes.PipeWriter(w).write("\ud800\n")


@pytest.fixture
def memory_server(tmp_path):
    """A cold memory server on pipes, its TMPDIR an empty folder, after the handshake and a
    call: (process, that folder)."""
    temp = tmp_path / "temp"
    temp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "matrix_servers.memory"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(temp)},
        text=True,
    )
    assert proc.stdin and proc.stdout
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "memory_store", "arguments": {"agent_id": "a", "content": "x"}},
    }
    for message in [*RAW_HANDSHAKE, call]:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        if "id" in message:
            assert json.loads(proc.stdout.readline())["id"] == message["id"]
    yield proc, temp
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0


def test_a_memory_server_on_pipes_serves_a_session_without_a_thread(memory_server):
    """Before: the SDK's worker threads read stdin and wrote stdout (two threads a session)."""
    proc, _ = memory_server
    assert len(os.listdir(f"/proc/{proc.pid}/task")) == 1


def test_a_memory_server_keeps_its_store_in_memory_and_writes_no_file(memory_server):
    """Before: a temporary directory and an SQLite file with its journals, left behind
    whenever the server was killed."""
    proc, temp = memory_server
    assert list(Path(temp).iterdir()) == []
    assert not any(
        "memory" in Path(f"/proc/{proc.pid}/fd/{fd}").resolve().name
        for fd in os.listdir(f"/proc/{proc.pid}/fd")
    )


def test_the_memory_servers_arguments_are_parsed_by_the_parser_built_once(monkeypatch):
    """A forked server parses with the parser its template built: none built per server."""
    built = []
    real = argparse.ArgumentParser.__init__

    def counted(self, *args, **kwargs):
        built.append(kwargs.get("prog"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "__init__", counted)
    args = options.parse_args(["--schema", "anyof", "--page-size", "2"])
    assert (args.schema, args.page_size, args.db, args.transport) == ("anyof", 2, None, "stdio")
    assert options.parse_args([]).schema == "flat"
    assert built == []
