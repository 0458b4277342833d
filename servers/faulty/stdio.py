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

from .protocol import AskClient, Connection, Crash, Flood, Hang, HugeLine, Noise, Send, Sleep, log


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
        if self.conn.mode == "pipe-holder":
            spawn_pipe_holder()
        if self.conn.mode == "stdout-noise":
            self.write_line("Server starting...")
            self.write_line("DEBUG loaded 4 tools")
        try:
            while True:
                self.run(self.conn.handle_text(self.read_line()))
        except _Closed:
            if self.conn.mode == "slow-exit":
                slow_exit(self.conn.record)
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
            elif isinstance(action, Flood):
                self.flood(action)
            elif isinstance(action, HugeLine):
                self.huge_line(action)
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

    def flood(self, action: Flood) -> None:
        """Requests for ever, never reading stdin: the client's answers fill its pipe to us."""
        log(f"flooding {action.method} requests; stdin is no longer read")
        n = 0
        while True:
            n += 1
            self.write_line(
                json.dumps({"jsonrpc": "2.0", "id": f"flood-{n}", "method": action.method})
            )

    def huge_line(self, action: HugeLine) -> None:
        """One line of ``action.size`` bytes, written in 1 MiB pieces (this process stays small)."""
        chunk = b"x" * (1024 * 1024)
        try:
            self.stdout.write(action.prefix.encode())
            for _ in range(action.size // len(chunk)):
                self.stdout.write(chunk)
            self.stdout.write(action.suffix.encode() + b"\n")
            self.stdout.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise _Closed() from exc

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


def slow_exit(record: str | None) -> None:
    """At end of stdin: say so in the record file, then ignore SIGTERM and take 6 s to exit
    (the client's close takes its longest path: wait, SIGTERM, wait, SIGKILL)."""
    import signal

    from .protocol import record_call

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    record_call(record, "(stdin closed)", {})
    time.sleep(6)


def spawn_pipe_holder() -> None:
    """A child that inherits stdout and stderr and outlives us by minutes (as npx helpers do)."""
    import subprocess

    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)"],
        stdin=subprocess.DEVNULL,
    )
    log(f"pipe-holder child {child.pid}")


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
