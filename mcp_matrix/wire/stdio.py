"""stdio transport: spawn the server, newline-delimited JSON-RPC on its stdin/stdout.

Shutdown order (documented in docs/wire.md): close stdin, wait ``shutdown_timeout`` for the
process to exit, then SIGTERM to its whole process group (even when the server itself exited:
a child it left holding our pipes is ended too), one more second, SIGKILL. The process runs in
its own session and group, so helpers it spawns (npx, uv) are ended with it. ``close`` never
waits for the reader threads: each owns its pipe and closes it at end of file.

Bounds (docs/security.md): stdout lines over ``MAX_MESSAGE_BYTES`` are dropped as they stream
in; writes are non-blocking, so a server that never reads its stdin cannot stall a request past
its timeout: a message goes into the pipe at once from the thread that sends it, and what the
pipe does not take waits in a buffer a writer thread drains (started the first time a pipe is
full: a server that reads its stdin never costs that thread nor its wake-up per message). A
message of ours is never
refused for its size (a 5 MiB argument is the user's, not the server's fault): a send fails only
when ``MAX_PENDING_WRITE_BYTES`` of earlier messages still wait behind the one the server is
reading, which only a server that stopped reading (while it sends us requests) causes.

An answer must come after its request, and that is checked on the pipes, not on the clock
(``Ledger``): a "response" is refused when any of it was written before the request's last byte
went into the server's stdin, or while the server had not yet read that byte, however our
threads were scheduled.

Environment: the server gets only ``MINIMAL_ENV`` from ours plus what the user configured,
unless ``inherit_env`` is set: a tester must not leak the caller's secrets into a server.
"""

from __future__ import annotations

import array
import collections
import fcntl
import json
import os
import select
import subprocess
import termios
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from mcp_matrix.wire.errors import ServerExited
from mcp_matrix.wire.forked import ForkedPopen
from mcp_matrix.wire.limits import (
    MAX_MESSAGE_BYTES,
    MAX_PENDING_WRITE_BYTES,
    MiB,
    Oversize,
    split_lines,
)
from mcp_matrix.wire.process import ServerProcess, interrupt_held
from mcp_matrix.wire.transport import Transport

SENT_KEPT = (
    64  # requests whose place in the streams is remembered (the session asks about the last)
)

MINIMAL_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TEMP", "TMP",
    "SYSTEMROOT", "COMSPEC", "PATHEXT", "VIRTUAL_ENV",
)  # fmt: skip


def server_environment(user_env: Mapping[str, str] | None, inherit: bool = False) -> dict[str, str]:
    base = (
        dict(os.environ) if inherit else {k: os.environ[k] for k in MINIMAL_ENV if k in os.environ}
    )
    base.update(user_env or {})
    return base


def _in_pipe(fd: int | None) -> int:
    """Bytes waiting in a pipe (either end), 0 when that cannot be told."""
    if fd is None:
        return 0
    waiting = array.array("i", [0])
    try:
        fcntl.ioctl(fd, termios.FIONREAD, waiting, True)
    except OSError:
        return 0
    return waiting[0]


def _keep(kept: dict, key: object, value: object) -> None:
    """Remember ``value`` for ``key``, forgetting the oldest beyond ``SENT_KEPT``."""
    kept[key] = value
    if len(kept) > SENT_KEPT:
        del kept[next(iter(kept))]


class Ledger:
    """What has crossed each pipe, counted under one lock so that both sides are seen at one
    instant: bytes we read from the server's stdout (``read``) and wrote to its stdin
    (``written``), plus what still waits in either pipe (``FIONREAD``).

    Each write notes how much the server had written to its stdout just before (``mark``); each
    read notes how much of our stdin the server had read (``consumed``). A byte of stdout at a
    position under a request's mark, or read while ``consumed`` was short of the request's end,
    was written by a server that had not read the request. The lock is held only around
    reads and writes that do not block (the pipes are polled first)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.read = 0
        self.written = 0
        self.out_fd: int | None = None
        self.in_fd: int | None = None

    def read_from(self, fd: int) -> tuple[bytes, int, int | None]:
        """One read of stdout: the bytes, where they begin, how much of our stdin was read."""
        with self._lock:
            chunk = os.read(fd, MiB)
            base = self.read
            self.read += len(chunk)
            consumed = self.written - _in_pipe(self.in_fd) if self.in_fd is not None else None
        return chunk, base, consumed

    def write_to(self, fd: int, data: bytes) -> tuple[int, int]:
        """One non-blocking write to stdin: bytes written, and the server's output before it."""
        with self._lock:
            mark = self.read + _in_pipe(self.out_fd)
            written = os.write(fd, data)
            self.written += written
        return written, mark

    def consumed(self) -> int:
        """How many bytes of our stdin the server has read."""
        with self._lock:
            return self.written - _in_pipe(self.in_fd)

    def forget(self, side: str, fd: int | None = None) -> None:
        """A pipe is closing: stop asking it (its number may be reused); close ``fd`` if given."""
        with self._lock:
            if side == "out":
                self.out_fd = None
            else:
                self.in_fd = None
            if fd is not None:
                os.close(fd)


class StdioTransport(Transport):
    name = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        inherit_env: bool = False,
        shutdown_timeout: float = 2.0,
        fork: tuple[str, Sequence[str]] | None = None,
    ) -> None:
        super().__init__()
        self.command = list(command)
        self.env = dict(env or {})
        self.cwd = str(cwd) if cwd else None
        self.inherit_env = inherit_env
        self.shutdown_timeout = shutdown_timeout
        self.fork = fork  # a warm template to fork the server from (``ServerProcess``)
        self._process: ServerProcess | None = None
        self._proc: subprocess.Popen[bytes] | ForkedPopen | None = None
        self._pending = bytearray()  # written by send(), drained by the writer thread
        self._wakeup = threading.Condition()  # guards the write side below
        self._queued = 0  # bytes ever handed to send()
        self._written = 0  # bytes ever written to the server's stdin
        self._writer: threading.Thread | None = None  # started when the pipe first is full
        self._ends: collections.deque[tuple[int, object]] = collections.deque()  # (end, request id)
        self._sent: dict[object, tuple[int, int]] = {}  # request id -> (its end, Ledger mark)
        self._spans: dict[object, tuple[int, int]] = {}  # request id -> where it is in our stdin
        self._progress_at = time.monotonic()  # when the server last took bytes of ours
        self._write_failed = ""
        self._ledger = Ledger()
        self._line_ends: collections.deque[int] = collections.deque()  # of the chunk being split
        self._chunk_reads: collections.deque[tuple[int, int | None]] = collections.deque()
        self._stdout_done = threading.Event()

    def start(self) -> None:
        if self._proc is not None:  # idempotent: a started transport may be handed to a session
            return
        self._process = ServerProcess(
            self.command,
            env=server_environment(self.env, self.inherit_env),
            cwd=self.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            fork=self.fork,
        )
        self._proc = self._process.start()
        assert self._proc.stdin and self._proc.stdout
        os.set_blocking(self._proc.stdin.fileno(), False)
        # The reader owns its pipe (a duplicate it closes at end of file): close() never closes
        # a descriptor a reader is blocked on.
        out_fd = os.dup(self._proc.stdout.fileno())
        self._ledger.out_fd, self._ledger.in_fd = out_fd, self._proc.stdin.fileno()
        self._proc.stdout.close()
        self._proc.stdout = None
        threading.Thread(
            target=self._read_stdout, args=(out_fd,), name="mcp-stdout", daemon=True
        ).start()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def _read_stdout(self, fd: int) -> None:
        start = 0  # where the current line began in the server's stdout
        try:
            for line in split_lines(self._counted_chunks(fd), MAX_MESSAGE_BYTES):
                reads = self._chunk_reads  # the read that brought the line's first byte
                while len(reads) > 1 and reads[1][0] <= start:
                    reads.popleft()
                if isinstance(line, Oversize):
                    self._record_noise(line.describe("stdout"))
                    self._deliver_text(line, source="stdout")
                else:
                    stamp = (start, reads[0][1] if reads else None)
                    self._deliver_text(line.decode("utf-8", errors="replace"), stamp=stamp)
                start = self._line_ends.popleft() if self._line_ends else self._ledger.read
        finally:
            self._ledger.forget("out", fd)
            self._stdout_done.set()
        proc, process = self._proc, self._process
        assert proc is not None and process is not None
        code = proc.poll()
        if code is None and not self._closed:
            try:
                code = proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
        process.stderr_read(timeout=1.0)  # the report wants the server's last words
        self._fail(
            ServerExited(
                f"the server closed stdout (exit code {code})"
                if code is not None
                else "the server closed stdout",
                stderr_tail=self.stderr_tail(),
            )
        )

    def _counted_chunks(self, fd: int) -> Iterator[bytes]:
        """What stdout yields until end of file, each read noted: where it began and how much
        of our stdin the server had read by then (``_chunk_reads``), and where each line ends
        (``_line_ends``)."""
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while True:
            try:
                poller.poll()  # so the read below does not block while it holds the ledger
                chunk, base, consumed = self._ledger.read_from(fd)
            except OSError:
                return
            if not chunk:
                return
            self._chunk_reads.append((base, consumed))
            nl = chunk.find(b"\n")
            while nl >= 0:
                self._line_ends.append(base + nl + 1)
                nl = chunk.find(b"\n", nl + 1)
            yield chunk

    def arrived_before(self, request_id: object, sent_at: float) -> bool:
        """Some of the message was written before the request's last byte went into the
        server's stdin (or that byte has not gone in yet), or while the server had not read it:
        either way the server wrote it without having read the request."""
        if self.received_stamp is None:
            return super().arrived_before(request_id, sent_at)
        start, consumed = self.received_stamp
        with self._wakeup:
            sent = self._sent.get(request_id)
        if sent is None:
            return True
        end, mark = sent
        return start < mark or (consumed is not None and consumed < end)

    def unread_note(self, request_id: object) -> str:
        with self._wakeup:
            span = self._spans.get(request_id)
        consumed = self._ledger.consumed()
        if span is None or consumed >= span[1]:
            return ""
        start, end = span
        read = max(0, consumed - start)
        if consumed == 0:  # nothing of ours read yet: still starting, or never reads
            return (
                f"; the server has read none of its stdin yet (the request is {end - start:,} "
                "bytes): it may still be starting"
            )
        return (
            f"; the server read {read:,} of the request's {end - start:,} "
            "bytes: it stopped reading its stdin"
        )

    def stderr_tail(self, lines: int = 20) -> tuple[str, ...]:
        return self._process.stderr_tail(lines) if self._process else ()

    def send(self, message: dict) -> None:
        """Queue one message for the writer thread; never blocks on a server that does not read.

        Refused only when earlier messages of ``MAX_PENDING_WRITE_BYTES`` or more still wait
        behind the one being written (a server that stopped reading), never for its own size."""
        if not self._proc or not self._proc.stdin:
            raise ServerExited("the server is not running")
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode(
            errors="backslashreplace"
        )
        request_id = message.get("id") if "method" in message else None
        with self._wakeup:
            if self._write_failed or self._closed:
                raise ServerExited(
                    self._write_failed or "the server's stdin is closed",
                    stderr_tail=self.stderr_tail(),
                )
            behind = self._queued - self._ends[0][0] if self._ends else 0
            if behind >= MAX_PENDING_WRITE_BYTES:
                raise ServerExited(
                    f"the server is not reading its stdin: {behind} bytes of earlier messages "
                    f"wait behind the one it is reading (cap {MAX_PENDING_WRITE_BYTES // MiB} MiB); "
                    f"it last took bytes of ours {time.monotonic() - self._progress_at:.1f}s ago",
                    stderr_tail=self.stderr_tail(),
                )
            if not self._pending:
                self._progress_at = time.monotonic()  # the server owes us nothing until now
            self._pending += data
            self._queued += len(data)
            # where the message ends, its newline aside: a server parsing JSON as it streams in
            # may answer before it has read that byte
            end = self._queued - 1
            self._ends.append((end, request_id))
            if isinstance(request_id, (int, str)):
                _keep(self._spans, request_id, (self._queued - len(data), end))
            if self._writer is None and self._write_now():
                return  # all of it is in the pipe: no thread to wake
            if self._writer is None:
                self._writer = threading.Thread(target=self._write, name="mcp-stdin", daemon=True)
                self._writer.start()
            self._wakeup.notify()

    def _write_now(self) -> bool:
        """Write what is pending from the sending thread (``_wakeup`` held; the writer thread is
        not started, so nothing else writes): True when the pipe took all of it, False when the
        rest waits for the writer thread (or the write failed, which it then reports)."""
        assert self._proc and self._proc.stdin
        fd = self._proc.stdin.fileno()
        while self._pending:
            try:
                written, mark = self._ledger.write_to(fd, bytes(self._pending[:65536]))
            except BlockingIOError:
                return False
            except (OSError, ValueError):
                self._stdin_failed()
                return True
            self._wrote(written, mark)
            if not written:
                return False
        return True

    def _stdin_failed(self) -> None:
        """The server's stdin cannot be written (``_wakeup`` held): every later send fails."""
        self._write_failed = "the server's stdin is closed"
        self._pending.clear()
        self._ends.clear()

    def _wrote(self, written: int, mark: int) -> None:
        """``written`` bytes of ``_pending`` went in (``_wakeup`` held): where each message that
        is now wholly in the pipe ended, and the server's output before it (``Ledger``)."""
        del self._pending[:written]
        self._written += written
        if written:
            self._progress_at = time.monotonic()
        while self._ends and self._ends[0][0] <= self._written:
            end, request_id = self._ends.popleft()
            if isinstance(request_id, (int, str)):
                _keep(self._sent, request_id, (end, mark))

    def _write(self) -> None:
        """Drain the pending bytes the pipe did not take at once into the server's stdin, with
        non-blocking writes."""
        assert self._proc and self._proc.stdin
        with self._wakeup:
            if self._closed:  # closed before this thread ran: its stdin may be closed too
                return
            fd = self._proc.stdin.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        while True:
            with self._wakeup:
                while not self._pending and not self._closed:
                    self._wakeup.wait()
                if self._closed:
                    return
                chunk = bytes(self._pending[:65536])
            try:
                written, mark = self._ledger.write_to(fd, chunk) if poller.poll(200) else (0, 0)
            except BlockingIOError:
                written, mark = 0, 0
            except (OSError, ValueError):
                with self._wakeup:
                    self._stdin_failed()
                return
            with self._wakeup:
                self._wrote(written, mark)

    def close(self) -> None:
        """End the server and its whole group; Ctrl-C and SIGTERM wait until it is done."""
        with interrupt_held():
            self._close()

    def _close(self) -> None:
        # the process, not ``_proc``: a Ctrl-C held while it started is raised as ``start``
        # leaves its hold, before ``_proc`` is set, and the server must still be ended
        proc = self._process.popen if self._process else None
        if proc is None or self._closed:
            return
        with self._wakeup:
            self._closed = True
            self._pending.clear()
            self._wakeup.notify_all()
        writer = self._writer
        # not alive: finished, or never started (a Ctrl-C in ``send`` between making it and
        # starting it), and it then writes nothing: it sees ``_closed`` first
        if writer is not None and writer.is_alive():
            writer.join(timeout=2.0)  # it wakes within 0.2 s; stdin is closed only after it stopped
        if proc.stdin:
            self._ledger.forget("in")  # before stdin closes: its number may be reused
        assert self._process is not None
        self._process.end(stdin_grace=self.shutdown_timeout, term_grace=1.0, done=self._stdout_done)

    def describe(self) -> dict:
        return {
            "transport": "stdio",
            "command": self.command,
            "cwd": self.cwd,
            "env": sorted(self.env),
        }
