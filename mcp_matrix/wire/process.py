"""One child process we start: a stdio server, a bundled server over HTTP or SSE, the warm template.

Each runs in its own session and process group (helpers it spawns, such as npx or uv, end with
it), is started and ended with Ctrl-C and SIGTERM held (``interrupt_held``: never a server left
running with nothing to end it), and keeps the last lines of its stderr for the report
(``stderr_tail``), whatever it is reached over. Before this class a bundled server over HTTP
had its stderr read and dropped, so "exited before listening" came without the reason.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from mcp_matrix.wire.errors import ServerExited
from mcp_matrix.wire.forked import ForkedPopen, fork_from
from mcp_matrix.wire.limits import MAX_STDERR_LINE_BYTES, MiB, Oversize, split_lines

STDERR_KEEP_LINES = 200
STDERR_LINE_MAX = 2000
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
        for number in dict.fromkeys(held):
            sig = signal.Signals(number)
            handler = previous[sig]
            if callable(handler):
                handler(sig, None)  # the default SIGINT handler raises KeyboardInterrupt now
            elif handler == signal.SIG_DFL:
                signal.raise_signal(sig)


def chunks(fd: int) -> Iterator[bytes]:
    """What a pipe yields until end of file (or until it is closed under us)."""
    while True:
        try:
            chunk = os.read(fd, MiB)
        except OSError:
            return
        if not chunk:
            return
        yield chunk


# Processes started from their command (not forked from a warm template), by command: what
# ``--verbose`` counts for a server that starts cold (``mcp_matrix.targets.warm_start.starts``).
_started: collections.Counter[tuple[str, ...]] = collections.Counter()
_started_lock = threading.Lock()


def started_from_command(argv: Sequence[str]) -> int:
    """How many server processes this process has started by running ``argv`` itself (since
    ``forget_starts``: a run's)."""
    with _started_lock:
        return _started[tuple(argv)]


def forget_starts() -> None:
    """Count from zero again: a run ends (``targets.kinds.run_servers``), and the next one's
    ``--verbose`` counts its own processes, not those of every run in this process."""
    with _started_lock:
        _started.clear()


class ServerProcess:
    """A child process in its own session, its stderr kept; stdin and stdout piped or not.

    ``env`` None inherits this environment (the caller decides what a server may see)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        stdin: int = subprocess.DEVNULL,
        stdout: int = subprocess.DEVNULL,
        fork: tuple[str, Sequence[str]] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.fork = fork  # (a warm template's socket, what to ask it for): ``argv`` if it cannot
        self.env = dict(env) if env is not None else None
        self.cwd = str(cwd) if cwd else None
        self.stdin, self.stdout = stdin, stdout
        self.popen: subprocess.Popen[bytes] | ForkedPopen | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_KEEP_LINES)
        self._stderr_thread: threading.Thread | None = None

    def start(self) -> subprocess.Popen[bytes] | ForkedPopen:
        """Start it (the handle kept before Ctrl-C can end this); ServerExited if it cannot be.
        With ``fork`` (stdin and stdout piped), forked from a warm template when it can be
        (``mcp_matrix.wire.forked``), else as ``argv`` says."""
        if self.popen is not None:
            return self.popen
        if self.fork is not None and self.stdin == self.stdout == subprocess.PIPE:
            with interrupt_held():
                self.popen = fork_from(
                    *self.fork, self.argv, os.environ if self.env is None else self.env, self.cwd
                )
        forked = self.popen is not None
        try:
            with interrupt_held():
                self.popen = self.popen or subprocess.Popen(
                    self.argv,
                    stdin=self.stdin,
                    stdout=self.stdout,
                    stderr=subprocess.PIPE,
                    env=self.env,
                    cwd=self.cwd,
                    start_new_session=True,
                    bufsize=0,
                )
        except (OSError, ValueError) as exc:
            raise ServerExited(f"could not start {self.argv[0]!r}: {exc}") from None
        if not forked:
            with _started_lock:
                _started[tuple(self.argv)] += 1
        assert self.popen.stderr
        # The reader owns its pipe (a duplicate it closes at end of file): ending the process
        # never closes a descriptor the reader is blocked on.
        err_fd = os.dup(self.popen.stderr.fileno())
        self.popen.stderr.close()
        self.popen.stderr = None
        self._stderr_thread = threading.Thread(
            target=self._read_stderr, args=(err_fd,), name="mcp-stderr", daemon=True
        )
        self._stderr_thread.start()
        return self.popen

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def _read_stderr(self, fd: int) -> None:
        try:
            for line in split_lines(chunks(fd), MAX_STDERR_LINE_BYTES):
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

    def stderr_read(self, timeout: float) -> None:
        """Wait up to ``timeout`` for the rest of stderr: a report wants the server's last words."""
        if self._stderr_thread is not None:
            self._stderr_thread.join(timeout=timeout)

    def poll(self) -> int | None:
        return self.popen.poll() if self.popen else None

    def wait(self, timeout: float) -> int | None:
        """Its exit code, or None if it still runs after ``timeout`` seconds."""
        if self.popen is None:
            return None
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def signal(self, sig: int) -> None:
        """``sig`` to its whole group (to the process alone when the group is gone or not ours)."""
        proc = self.popen
        if proc is None:
            return
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            if proc.poll() is None:
                try:
                    proc.send_signal(sig)
                except ProcessLookupError:
                    pass

    def end(
        self,
        *,
        stdin_grace: float = 0.0,
        term_grace: float = 3.0,
        done: threading.Event | None = None,
    ) -> None:
        """Close its stdin and give it ``stdin_grace`` to exit; then SIGTERM to the whole group
        (even when it exited: a child it left holding our pipes goes too), ``term_grace`` more,
        and SIGKILL if it still runs (or ``done``, its output read to the end, is not set)."""
        proc = self.popen
        if proc is None:
            return
        if proc.stdin:
            try:
                proc.stdin.close()
            except OSError:
                pass
        if stdin_grace:
            self.wait(stdin_grace)
        self.signal(signal.SIGTERM)
        self.wait(term_grace)
        if proc.poll() is None or (done is not None and not done.wait(timeout=1.0)):
            self.signal(signal.SIGKILL)
            self.wait(5.0)
