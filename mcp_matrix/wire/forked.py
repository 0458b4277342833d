"""A server forked by a warm template straight onto pipes of ours: no shim process in between.

The template (``servers/warm.py``) forks a server onto three descriptors it is sent over its Unix
socket and answers ``pid N``, then ``exit STATUS`` once it has reaped it. ``fork_from`` sends it
the server ends of three new pipes and keeps ours; ``ForkedPopen`` is the part of
``subprocess.Popen`` a ``ServerProcess`` uses, for that server. The lifetimes are the shim's
(``servers/warm.py``'s docstring): the connection is the server's lifeline (it closes with this
process, killed or not, and the template then kills the server's group), signals go to the
server's own process group (the template made it one before answering), and a template that ends
under a running server (an end of file before ``exit``) has it killed here. So a client saves an
interpreter start for each session (about 16-21 ms of CPU) and nothing else changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence

CONNECT_WAIT = 10.0  # the template binds its socket first thing; this is for a loaded machine
ANSWER_WAIT = 30.0  # its "pid N" line comes right after the fork


class ForkedPopen:
    """A forked server as ``subprocess.Popen`` shows a child: ``pid``, ``stdin``, ``stdout``,
    ``stderr``, ``returncode``, ``poll``, ``wait`` and ``send_signal``."""

    def __init__(
        self, args: Sequence[str], pid: int, conn: socket.socket, pipes: tuple[int, int, int]
    ) -> None:
        self.args = list(args)
        self.pid = pid
        self.returncode: int | None = None
        self.stdin = open(pipes[0], "wb", buffering=0)  # noqa: SIM115 - closed by its user
        self.stdout = open(pipes[1], "rb", buffering=0)  # noqa: SIM115
        self.stderr = open(pipes[2], "rb", buffering=0)  # noqa: SIM115
        self._ended = threading.Event()
        threading.Thread(target=self._watch, args=(conn,), name="mcp-forked", daemon=True).start()

    def _watch(self, conn: socket.socket) -> None:
        """Wait for ``exit STATUS``; an end without it is a template gone: end the server."""
        try:
            line = _read_line(conn, timeout=None)
        finally:
            conn.close()
        if line.startswith("exit "):
            self.returncode = os.waitstatus_to_exitcode(int(line[5:]))
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            self.returncode = -signal.SIGKILL
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


# ``_read_line`` and ``_connect`` are what ``servers/warm_shim.py`` does too: the shim runs by path
# on the standard library alone (``python -S -I``), so it cannot import them from here.


def _read_line(conn: socket.socket, timeout: float | None) -> str:
    """One short line (a byte at a time: what follows it stays unread)."""
    conn.settimeout(timeout)
    line = bytearray()
    try:
        while not line.endswith(b"\n"):
            byte = conn.recv(1)
            if not byte:
                break
            line += byte
    except OSError:
        return ""
    return line.decode("ascii", "replace").strip()


def _connect(path: str) -> socket.socket | None:
    deadline = time.monotonic() + CONNECT_WAIT
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except FileNotFoundError:  # the template has not bound its socket yet
            sock.close()
            if time.monotonic() > deadline:
                return None
            time.sleep(0.02)
        except OSError:  # nothing listens there any more
            sock.close()
            return None


def fork_from(
    path: str,
    argv: Sequence[str],
    command: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
) -> ForkedPopen | None:
    """Have the template at ``path`` fork server ``argv`` (what it is asked for; ``command`` is
    what a report calls it) with ``env`` in ``cwd`` onto new pipes; None when it cannot or
    refuses (the caller then starts the command cold, as the shim did)."""
    where = os.path.realpath(cwd or ".")  # what os.getcwd() says in a process started there
    conn = _connect(path)
    if conn is None:
        return None
    ours: list[int] = []
    theirs: list[int] = []
    try:
        for _ in range(3):
            r, w = os.pipe()
            ours.append(r)
            theirs.append(w)
        # stdin: the server reads r and we write w
        ours[0], theirs[0] = theirs[0], ours[0]
        request = json.dumps({"argv": list(argv), "env": dict(env), "cwd": where}).encode()
        conn.settimeout(ANSWER_WAIT)
        socket.send_fds(conn, [len(request).to_bytes(4, "big") + request], theirs)
        first = _read_line(conn, timeout=ANSWER_WAIT)
    except OSError:
        first = ""
    for fd in theirs:
        os.close(fd)
    if not first.startswith("pid "):
        conn.close()
        for fd in ours:
            os.close(fd)
        return None
    return ForkedPopen(command, int(first[4:]), conn, (ours[0], ours[1], ours[2]))
