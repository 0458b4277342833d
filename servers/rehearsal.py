"""Sessions the warm template serves itself, start to end, before it forks any server.

Much of what a forked server costs is work each one did first and identically: the SDK's pydantic
adapters built on a method's first use (two or three a session), the interpreter's first runs of
the serving code (CPython 3.11 counts a function's first calls and specialises its instructions
by writing into its code object: each such page then copied into every server), a tool's first
validation. The template (``servers/warm.py``) runs the memory server's ``main`` on two sessions
of its own, the handshake era and the 2026-07-28 one, over pipes it holds, as a client would talk
to it: every tool, valid and invalid arguments, an unknown tool. Its servers then start with that
work done. The sessions run to their end (the server returns from ``main``: its event loop closed,
its store closed, fd 0 and 1 put back) and ``warm.checked`` makes sure nothing is left behind: no
thread, no descriptor, no loop, nothing written.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from typing import Any

PIPE_SIZE = 1 << 20  # F_SETPIPE_SZ: the answers, written before anything reads them, fit
MODERN = "2026-07-28"
META = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "rehearsal", "version": "0"},
    }
}
AGENT = {"agent_id": "rehearsal"}

# One call of each tool (a valid one, one failing the tool's schema, one failing identity) and of
# a tool that does not exist: the answers a server gives in the default run.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("memory_store", {**AGENT, "content": "a note", "tags": ["a", "b"], "importance": 0.8}),
    ("memory_store", {**AGENT, "content": "a note", "tags": '["a"]'}),
    ("memory_recall", {**AGENT, "tags": ["a"], "limit": 5}),
    ("memory_recall", {**AGENT, "query": "note"}),
    ("memory_reflect", {**AGENT, "action": "summarize"}),
    ("memory_reflect", {"agent": "rehearsal", "action": "consolidate", "confidence": 0.5}),
    ("memory_reflect", {"agent_id": " ", "action": "critique", "text": "t"}),
    ("memory_reflect", {"action": "summarize"}),
    ("checkpoint_save", {**AGENT, "name": "step", "state": {"step": 1, "done": [1]}}),
    ("checkpoint_save", {**AGENT, "name": "step", "state": '{"step": 1}'}),
    ("checkpoint_resume", {**AGENT, "name": "step"}),
    ("checkpoint_resume", {**AGENT, "name": "never"}),
    ("memory_forget", {**AGENT, "memory_id": 1}),
    ("memory_stats", {}),
    ("no_such_tool", {}),
]


def _request(number: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": params}


def handshake_session() -> list[dict[str, Any]]:
    """``initialize``, the tool list and every call, as a 2025-11-25 client sends them."""
    info = {"name": "rehearsal", "version": "0"}
    opening = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}
    return [
        _request(1, "initialize", opening),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _request(2, "tools/list", {}),
        _request(3, "ping", {}),
        *(
            _request(n, "tools/call", {"name": name, "arguments": args})
            for n, (name, args) in enumerate(CALLS, start=4)
        ),
    ]


def modern_session() -> list[dict[str, Any]]:
    """``server/discover``, the tool list and every call in the 2026-07-28 envelope, then an
    ``initialize`` the connection refuses."""
    return [
        _request(1, "server/discover", META),
        _request(2, "tools/list", META),
        *(
            _request(n, "tools/call", {"name": name, "arguments": args, **META})
            for n, (name, args) in enumerate(CALLS, start=3)
        ),
        _request(99, "initialize", handshake_session()[0]["params"]),
    ]


def serve(module_main: Any, messages: list[dict[str, Any]]) -> bytes:
    """Run ``module_main([])`` with ``messages`` on its stdin (then its end) and a pipe for its
    stdout; what it answered. fd 0 and 1 are this process's own again afterwards."""
    data = "".join(json.dumps(m) + "\n" for m in messages).encode()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    saved = (os.dup(0), os.dup(1))
    try:
        for fd in (in_w, out_w):
            with contextlib.suppress(OSError):  # a pipe's own 64 KiB holds these sessions too
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        os.write(in_w, data)
        os.close(in_w)
        in_w = -1
        os.dup2(in_r, 0)
        os.dup2(out_w, 1)
        os.close(out_w)
        out_w = -1
        module_main([])
    finally:
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, in_r, in_w, out_w):
            if fd >= 0:
                os.close(fd)
    try:
        os.set_blocking(out_r, False)
        return os.read(out_r, PIPE_SIZE)
    except BlockingIOError:
        return b""
    finally:
        os.close(out_r)


def rehearse() -> None:
    """Both sessions against the memory server; ``RuntimeError`` when one was not answered in
    full (every request, once)."""
    from matrix_servers.memory.__main__ import main

    for messages in (handshake_session(), modern_session()):
        asked = sorted(m["id"] for m in messages if "id" in m)
        answers = [json.loads(line) for line in serve(main, messages).splitlines()]
        if sorted(a.get("id") for a in answers) != asked:
            raise RuntimeError(f"the rehearsal was answered {len(answers)} of {len(asked)} times")
