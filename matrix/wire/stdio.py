"""stdio transport: spawn the server, newline-delimited JSON-RPC on its stdin/stdout.

Shutdown order (documented in docs/wire.md): close stdin, wait ``shutdown_timeout`` for the
process to exit, then SIGTERM to its whole process group (even when the server itself exited:
a child it left holding our pipes is ended too), one more second, SIGKILL. The process runs in
its own session and group, so helpers it spawns (npx, uv) are ended with it. ``close`` never
waits for the reader threads: each owns its pipe and closes it at end of file.

Bounds (docs/security.md): stdout lines over ``MAX_MESSAGE_BYTES`` are dropped as they stream
in; writes go through a buffer of at most ``MAX_PENDING_WRITE_BYTES`` drained by a writer thread
with non-blocking writes, so a server that never reads its stdin cannot stall a request past
its timeout or grow our memory.

Environment: the server gets only ``MINIMAL_ENV`` from ours plus what the user configured,
unless ``inherit_env`` is set: a tester must not leak the caller's secrets into a server.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import select
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from matrix.wire.errors import ServerExited
from matrix.wire.limits import (
    MAX_MESSAGE_BYTES,
    MAX_PENDING_WRITE_BYTES,
    MAX_STDERR_LINE_BYTES,
    MiB,
    Oversize,
    split_lines,
)
from matrix.wire.transport import Transport

STDERR_KEEP_LINES = 200
STDERR_LINE_MAX = 2000

MINIMAL_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TEMP", "TMP",
    "SYSTEMROOT", "COMSPEC", "PATHEXT", "VIRTUAL_ENV",
)  # fmt: skip


HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def interrupt_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while a server is started or ended, then deliver them.

    A KeyboardInterrupt raised inside ``Popen`` (or before its result is kept) would leave the
    new server running with nothing to end it; one raised inside ``close`` would leave it
    running too (it was: 4 times out of 4). Only the main thread gets signals, so other
    threads need no holding. Close is bounded (about 4 s), so the wait is too.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda signum, frame: held.append(signum)) for sig in HELD_SIGNALS
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(held):
            handler = previous[sig]
            if callable(handler):
                handler(sig, None)  # the default SIGINT handler raises KeyboardInterrupt now
            elif handler == signal.SIG_DFL:
                signal.raise_signal(sig)


def server_environment(user_env: Mapping[str, str] | None, inherit: bool = False) -> dict[str, str]:
    base = (
        dict(os.environ) if inherit else {k: os.environ[k] for k in MINIMAL_ENV if k in os.environ}
    )
    base.update(user_env or {})
    return base


def _chunks(fd: int) -> Iterator[bytes]:
    """What a pipe yields until end of file (or until it is closed under us)."""
    while True:
        try:
            chunk = os.read(fd, MiB)
        except OSError:
            return
        if not chunk:
            return
        yield chunk


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
        self._pending = bytearray()  # written by send(), drained by the writer thread
        self._wakeup = threading.Condition()
        self._write_failed = ""
        self._stdout_done = threading.Event()

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
                    bufsize=0,
                )
        except (OSError, ValueError) as exc:
            raise ServerExited(f"could not start {self.command[0]!r}: {exc}") from None
        assert self._proc.stdin and self._proc.stdout and self._proc.stderr
        os.set_blocking(self._proc.stdin.fileno(), False)
        # Each reader owns its pipe (a duplicate it closes at end of file): close() never closes
        # a descriptor a reader is blocked on.
        out_fd, err_fd = os.dup(self._proc.stdout.fileno()), os.dup(self._proc.stderr.fileno())
        self._proc.stdout.close()
        self._proc.stderr.close()
        self._proc.stdout = self._proc.stderr = None
        self._stderr_thread = threading.Thread(
            target=self._read_stderr, args=(err_fd,), name="mcp-stderr", daemon=True
        )
        self._stderr_thread.start()
        threading.Thread(
            target=self._read_stdout, args=(out_fd,), name="mcp-stdout", daemon=True
        ).start()
        self._writer = threading.Thread(target=self._write, name="mcp-stdin", daemon=True)
        self._writer.start()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def _read_stdout(self, fd: int) -> None:
        try:
            for line in split_lines(_chunks(fd), MAX_MESSAGE_BYTES):
                if isinstance(line, Oversize):
                    self._record_noise(line.describe("stdout"))
                    self._deliver_text(line, source="stdout")
                else:
                    self._deliver_text(line.decode("utf-8", errors="replace"))
        finally:
            os.close(fd)
            self._stdout_done.set()
        proc = self._proc
        assert proc is not None
        code = proc.poll()
        if code is None and not self._closed:
            try:
                code = proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
        self._stderr_thread.join(timeout=1.0)  # the report wants the server's last words
        self._fail(
            ServerExited(
                f"the server closed stdout (exit code {code})"
                if code is not None
                else "the server closed stdout",
                stderr_tail=self.stderr_tail(),
            )
        )

    def _read_stderr(self, fd: int) -> None:
        try:
            for line in split_lines(_chunks(fd), MAX_STDERR_LINE_BYTES):
                text = (
                    "(a stderr line over the cap)"
                    if isinstance(line, Oversize)
                    else line.decode("utf-8", errors="replace")
                )
                self._stderr.append(text.rstrip("\r")[:STDERR_LINE_MAX])
        finally:
            os.close(fd)

    def stderr_tail(self, lines: int = 20) -> tuple[str, ...]:
        return tuple(list(self._stderr)[-lines:])

    def send(self, message: dict) -> None:
        """Queue one message for the writer thread; never blocks on a server that does not read."""
        if not self._proc or not self._proc.stdin:
            raise ServerExited("the server is not running")
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode(
            errors="backslashreplace"
        )
        with self._wakeup:
            if self._write_failed or self._closed:
                raise ServerExited(
                    self._write_failed or "the server's stdin is closed",
                    stderr_tail=self.stderr_tail(),
                )
            if len(self._pending) + len(data) > MAX_PENDING_WRITE_BYTES:
                raise ServerExited(
                    f"the server is not reading its stdin: {len(self._pending)} bytes are still waiting "
                    f"to be written (cap {MAX_PENDING_WRITE_BYTES // MiB} MiB)",
                    stderr_tail=self.stderr_tail(),
                )
            self._pending += data
            self._wakeup.notify()

    def _write(self) -> None:
        """Drain the pending bytes into the server's stdin with non-blocking writes."""
        assert self._proc and self._proc.stdin
        fd = self._proc.stdin.fileno()
        while True:
            with self._wakeup:
                while not self._pending and not self._closed:
                    self._wakeup.wait()
                if self._closed:
                    return
                chunk = bytes(self._pending[:65536])
            try:
                _, writable, _ = select.select([], [fd], [], 0.2)
                written = os.write(fd, chunk) if writable else 0
            except BlockingIOError:
                written = 0
            except (OSError, ValueError):
                with self._wakeup:
                    self._write_failed = "the server's stdin is closed"
                    self._pending.clear()
                return
            with self._wakeup:
                del self._pending[:written]

    def close(self) -> None:
        """End the server and its whole group; Ctrl-C and SIGTERM wait until it is done."""
        with interrupt_held():
            self._close()

    def _close(self) -> None:
        proc = self._proc
        if proc is None or self._closed:
            return
        with self._wakeup:
            self._closed = True
            self._pending.clear()
            self._wakeup.notify_all()
        writer = getattr(self, "_writer", None)
        if writer is not None:
            writer.join(timeout=2.0)  # it wakes within 0.2 s; stdin is closed only after it stopped
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=self.shutdown_timeout)
        except subprocess.TimeoutExpired:
            pass
        # The whole group, even when the server exited: a child holding our pipes goes too.
        self._signal(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        if proc.poll() is None or not self._stdout_done.wait(timeout=1.0):
            self._signal(proc, signal.SIGKILL)
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                pass

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            if proc.poll() is None:
                try:
                    proc.send_signal(sig)
                except ProcessLookupError:
                    pass

    def describe(self) -> dict:
        return {
            "transport": "stdio",
            "command": self.command,
            "cwd": self.cwd,
            "env": sorted(self.env),
        }
