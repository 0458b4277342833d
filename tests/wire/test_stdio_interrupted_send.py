"""A Ctrl-C that lands in ``send`` while it starts the writer thread (the pipe was full) must not
keep ``close`` from ending the server: since the sending thread writes (a91cfc9), the writer
thread is made in ``send``, and a KeyboardInterrupt between making it and starting it left a
thread ``close`` could not join (RuntimeError), so the server was never ended."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from mcp_matrix.wire import stdio
from mcp_matrix.wire.stdio import StdioTransport

# reads nothing: the pipe fills and what is left waits for the writer thread
_NEVER_READS = "import time; time.sleep(60)"


class _InterruptedStart(threading.Thread):
    """The writer thread, its start interrupted by Ctrl-C before it runs (any other thread
    starts as usual)."""

    def start(self) -> None:
        if self.name == "mcp-stdin":
            raise KeyboardInterrupt
        super().start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_close_ends_the_server_after_a_ctrl_c_while_the_writer_thread_starts(monkeypatch):
    transport = StdioTransport([sys.executable, "-c", _NEVER_READS], shutdown_timeout=0.2)
    transport.start()
    pid = transport.pid
    assert pid is not None
    try:
        monkeypatch.setattr(stdio.threading, "Thread", _InterruptedStart)
        with pytest.raises(KeyboardInterrupt):
            transport.send({"jsonrpc": "2.0", "method": "m", "params": {"x": "y" * (1 << 20)}})
        monkeypatch.undo()
        transport.close()  # raised RuntimeError (join of a thread never started) before the fix
    finally:
        if _alive(pid) and transport._proc is not None:
            transport._proc.kill()
            transport._proc.wait()
    assert transport._proc is not None and transport._proc.poll() is not None
