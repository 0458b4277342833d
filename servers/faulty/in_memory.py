"""The fault server's sans-I/O handler as an in-process peer for ``mcp_matrix.wire.memory``.

The same ``Connection`` that the stdio and HTTP servers drive turns each message into actions;
this adapter turns those actions into the in-memory transport's steps, so a protocol fault is
written once and tested without a process. Modes whose point is the process boundary (floods,
gigabyte lines, pipe holders) are refused: test them over stdio.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from .protocol import HTTP_ONLY_MODES, AskClient, Connection, Crash, Hang, Noise, Send, Sleep

PROCESS_MODES = ("pipe-holder", "request-flood", "huge-line")


def handler(mode: str = "ok", **connection: object) -> Callable[[str], list[tuple[str, object]]]:
    """A handler for ``InMemoryTransport`` serving one fault ``mode``."""
    if mode in PROCESS_MODES or mode in HTTP_ONLY_MODES:
        raise ValueError(f"mode {mode!r} needs a real process or HTTP; run it over stdio or http")
    conn = Connection(mode=mode, **connection)  # type: ignore[arg-type]
    waiting: dict[str, list] = {}  # a server-to-client request id -> the actions held back for it

    def steps(actions: list) -> list[tuple[str, object]]:
        out: list[tuple[str, object]] = []
        for index, action in enumerate(actions):
            if isinstance(action, (Send, Noise)):
                out.append(("line", action.text))
            elif isinstance(action, Sleep):
                out.append(("sleep", action.seconds))
            elif isinstance(action, Crash):
                out.append(("exit", action.reason))
                return out
            elif isinstance(action, Hang):
                out.append(("hang", None))
                return out
            elif isinstance(action, AskClient):
                out.append(("line", action.text))
                waiting[action.request_id] = actions[index + 1 :]
                return out
            else:
                raise TypeError(f"{type(action).__name__} needs a real process")
        return out

    def handle(text: str) -> list[tuple[str, object]]:
        try:
            message = json.loads(text)
        except ValueError:
            message = None
        if isinstance(message, dict) and "method" not in message and message.get("id") in waiting:
            conn.client_answered(message)
            return steps(waiting.pop(message["id"]))
        return steps(conn.handle_text(text))

    return handle
