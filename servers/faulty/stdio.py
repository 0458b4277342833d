"""stdio transport: newline-delimited JSON-RPC on stdin/stdout, one message at a time.

Messages are handled strictly in order on one thread, which keeps the output
deterministic (a notification is always written before the next answer).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from .protocol import AskClient, Connection, Crash, Hang, Noise, Send, Sleep, log


class _Closed(Exception):
    """stdin reached end of file, or stdout's reader went away."""


class StdioServer:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.stdin = sys.stdin.buffer
        self.stdout = sys.stdout.buffer

    def write_line(self, text: str) -> None:
        try:
            self.stdout.write(text.encode("utf-8") + b"\n")
            self.stdout.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise _Closed() from exc

    def read_line(self) -> str:
        while True:
            line = self.stdin.readline()
            if not line:
                raise _Closed()
            text = line.decode("utf-8", errors="replace").strip()
            if text:
                return text

    def serve(self) -> int:
        if self.conn.mode == "stdout-noise":
            self.write_line("Server starting...")
            self.write_line("DEBUG loaded 4 tools")
        try:
            while True:
                self.run(self.conn.handle_text(self.read_line()))
        except _Closed:
            return 0

    def run(self, actions: list) -> None:
        for action in actions:
            if isinstance(action, (Send, Noise)):
                self.write_line(action.text)
            elif isinstance(action, Sleep):
                time.sleep(action.seconds)
            elif isinstance(action, Crash):
                crash(action)
            elif isinstance(action, Hang):
                if action.everything:
                    self.hang_forever()
                return  # this request is never answered; go on reading
            elif isinstance(action, AskClient):
                self.write_line(action.text)
                self.wait_for_answer(action.request_id)

    def wait_for_answer(self, request_id: str) -> None:
        """Read until the client answers our request; handle anything else meanwhile."""
        while True:
            text = self.read_line()
            message = _loads(text)
            if (
                isinstance(message, dict)
                and message.get("id") == request_id
                and "method" not in message
            ):
                self.conn.client_answered(message)
                return
            self.run(self.conn.handle_text(text))

    def hang_forever(self) -> None:
        """Stay alive, read and ignore stdin (even past EOF): only a kill ends us."""

        def drain() -> None:
            try:
                while self.stdin.read(65536):
                    pass
            except (OSError, ValueError):
                pass

        threading.Thread(target=drain, daemon=True).start()
        log("hanging: no more answers")
        while True:
            time.sleep(3600)


def _loads(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def crash(action: Crash) -> None:
    """Die like a real server whose handler blew up: a message on stderr, a status."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    sys.stderr.write(action.reason + "\n")
    sys.stderr.flush()
    os._exit(action.code)


def serve_stdio(conn: Connection) -> int:
    return StdioServer(conn).serve()
