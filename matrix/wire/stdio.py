"""stdio transport: spawn the server, newline-delimited JSON-RPC on its stdin/stdout.

Shutdown order (documented in docs/wire.md): close stdin, wait ``shutdown_timeout``
for the process to exit, send SIGTERM to its process group, wait one more second, SIGKILL.
The process runs in its own session so helpers it spawns (npx, uv) are ended too.

Environment: the server gets only ``MINIMAL_ENV`` from ours plus what the user configured,
unless ``inherit_env`` is set: a tester must not leak the caller's secrets into a server.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Mapping, Sequence

from matrix.wire.errors import ServerExited
from matrix.wire.transport import Transport

STDERR_KEEP_LINES = 200
STDERR_LINE_MAX = 2000

MINIMAL_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TEMP", "TMP",
    "SYSTEMROOT", "COMSPEC", "PATHEXT", "VIRTUAL_ENV",
)  # fmt: skip


@contextlib.contextmanager
def interrupt_held() -> Iterator[None]:
    """Hold Ctrl-C while a server process is started and its handle stored, then deliver it.

    A KeyboardInterrupt raised inside ``Popen`` (or before its result is kept) would leave the
    new server running with nothing to end it. Only the main thread ever gets KeyboardInterrupt,
    so other threads need no holding.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held and callable(previous):
            previous(signal.SIGINT, None)  # the default handler raises KeyboardInterrupt now


def server_environment(user_env: Mapping[str, str] | None, inherit: bool = False) -> dict[str, str]:
    base = dict(os.environ) if inherit else {k: os.environ[k] for k in MINIMAL_ENV if k in os.environ}
    base.update(user_env or {})
    return base


class StdioTransport(Transport):
    name = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        inherit_env: bool = False,
        shutdown_timeout: float = 2.0,
    ) -> None:
        super().__init__()
        self.command = list(command)
        self.env = dict(env or {})
        self.cwd = str(cwd) if cwd else None
        self.inherit_env = inherit_env
        self.shutdown_timeout = shutdown_timeout
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_KEEP_LINES)
        self._proc: subprocess.Popen[bytes] | None = None
        self._write_lock = threading.Lock()

    def start(self) -> None:
        if self._proc is not None:  # idempotent: a started transport may be handed to a session
            return
        try:
            with interrupt_held():
                self._proc = subprocess.Popen(
                    self.command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=server_environment(self.env, self.inherit_env),
                    cwd=self.cwd,
                    start_new_session=True,
                )
        except (OSError, ValueError) as exc:
            raise ServerExited(f"could not start {self.command[0]!r}: {exc}") from None
        self._stderr_thread = threading.Thread(target=self._read_stderr, name="mcp-stderr", daemon=True)
        self._stderr_thread.start()
        threading.Thread(target=self._read_stdout, name="mcp-stdout", daemon=True).start()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def _read_stdout(self) -> None:
        assert self._proc and self._proc.stdout
        for raw in self._proc.stdout:
            self._deliver_text(raw.decode("utf-8", errors="replace"))
        code = self._proc.poll()
        if code is None:
            try:
                code = self._proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
        self._stderr_thread.join(timeout=1.0)  # the report wants the server's last words
        self._fail(
            ServerExited(
                f"the server closed stdout (exit code {code})" if code is not None else "the server closed stdout",
                stderr_tail=self.stderr_tail(),
            )
        )

    def _read_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        for raw in self._proc.stderr:
            self._stderr.append(raw.decode("utf-8", errors="replace").rstrip("\n")[:STDERR_LINE_MAX])

    def stderr_tail(self, lines: int = 20) -> tuple[str, ...]:
        return tuple(list(self._stderr)[-lines:])

    def send(self, message: dict) -> None:
        if not self._proc or not self._proc.stdin:
            raise ServerExited("the server is not running")
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            with self._write_lock:
                self._proc.stdin.write(data)
                self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise ServerExited("the server's stdin is closed", stderr_tail=self.stderr_tail()) from None

    def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=self.shutdown_timeout)
        except subprocess.TimeoutExpired:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL)
                proc.wait(timeout=5.0)
        for stream in (proc.stdout, proc.stderr):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass

    def describe(self) -> dict:
        return {"transport": "stdio", "command": self.command, "cwd": self.cwd, "env": sorted(self.env)}
