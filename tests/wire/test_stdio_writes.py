"""Our messages to a stdio server go into its stdin from the sending thread; a writer thread is
started only for what the pipe does not take at once (a message over the pipe's size, a server
that stopped reading). Counted: the threads a session starts, not the time it takes."""

from __future__ import annotations

import json
import sys
import threading

from mcp_matrix.wire.session import Session, Timeouts
from mcp_matrix.wire.stdio import StdioTransport
from tests.conftest import bundled


def _writers() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "mcp-stdin")


def _session() -> Session:
    return Session(bundled("memory", "stdio").open(), timeouts=Timeouts(initialize=20, call=10))


def test_a_server_that_reads_its_stdin_never_needs_a_writer_thread():
    before = _writers()
    with _session() as s:
        s.initialize()
        s.list_tools()
        for i in range(20):
            r = s.call_tool(
                "memory_reflect", {"action": "summarize", "agent_id": "a", "text": str(i)}
            )
            assert r.error is None and r.result.get("isError") is not True
        assert s.transport._writer is None  # type: ignore[attr-defined]
        assert _writers() == before


# reads nothing for half a second, then one line, and says how long it was
_SLOW_READER = (
    "import json, sys, time; time.sleep(0.5); line = sys.stdin.buffer.readline(); "
    "print(json.dumps({'jsonrpc': '2.0', 'method': 'got', 'params': {'bytes': len(line)}}), "
    "flush=True); sys.stdin.buffer.read()"
)


def test_what_the_pipe_does_not_take_goes_through_the_writer_thread_whole():
    message = {"jsonrpc": "2.0", "method": "m", "params": {"text": "x" * (3 << 20)}}
    transport = StdioTransport([sys.executable, "-c", _SLOW_READER])
    transport.start()
    try:
        transport.send(message)  # returns at once: the pipe took a part, the rest waits
        assert transport._writer is not None
        got = transport.receive(timeout=30)
        size = len(json.dumps(message, ensure_ascii=False, separators=(",", ":"))) + 1
        assert got == {"jsonrpc": "2.0", "method": "got", "params": {"bytes": size}}
    finally:
        transport.close()
