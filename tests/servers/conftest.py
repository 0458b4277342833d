"""Fixtures for the reference servers: a backend spy and real server subprocesses."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from matrix_servers.memory.backend import MemoryBackend

STARTUP_TIMEOUT = 90.0  # a bound on a failure only: a Python server at load 18 took over 30 s
LISTENING_LINE = re.compile(r"^MCP_MATRIX_LISTENING (http://127\.0\.0\.1:(\d+)/mcp)$")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class SpyBackend:
    """Wraps a real MemoryBackend and records every method called on it."""

    def __init__(self, inner: MemoryBackend) -> None:
        self.inner = inner
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args))
            return attr(*args, **kwargs)

        return recorded


@pytest.fixture
def spy(tmp_path: Path) -> Iterator[SpyBackend]:
    backend = MemoryBackend(tmp_path / "spy.db")
    yield SpyBackend(backend)
    backend.close()


def memory_server_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "matrix_servers.memory", *args]


class HttpServer:
    """A memory server subprocess on Streamable HTTP."""

    def __init__(self, proc: subprocess.Popen[str], url: str, line: str, stderr: Path) -> None:
        self.proc = proc
        self.url = url
        self.line = line
        self.stderr = stderr


def _start_http(args: list[str], tmp_path: Path, index: int) -> HttpServer:
    stderr_path = tmp_path / f"http-server-{index}.stderr"
    with stderr_path.open("w") as stderr:
        proc = subprocess.Popen(
            memory_server_command("--transport", "http", "--port", "0", *args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        line = lines.get(timeout=STARTUP_TIMEOUT)
    except queue.Empty:
        _stop(proc)
        pytest.fail(f"no listening line within {STARTUP_TIMEOUT}s: {stderr_path.read_text()}")
    match = LISTENING_LINE.match(line.rstrip("\n"))
    if match is None:
        _stop(proc)
        pytest.fail(f"unexpected first stdout line {line!r}; stderr: {stderr_path.read_text()}")
    return HttpServer(proc, match.group(1), line, stderr_path)


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


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Callable[..., HttpServer]]:
    """Factory: ``http_server("--schema", "anyof")`` starts a server and returns it."""
    started: list[HttpServer] = []

    def start(*args: str) -> HttpServer:
        server = _start_http(list(args), tmp_path, len(started))
        started.append(server)
        return server

    yield start
    for server in started:
        _stop(server.proc)


RAW_HANDSHAKE = [  # what a client sends before its first request, as raw JSON-RPC lines
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
