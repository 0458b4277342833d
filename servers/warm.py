"""A warm template for the bundled SDK servers: it imports the SDK once, then forks each server.

A bundled server spends about 1.5 s of CPU importing the official SDK (its pydantic models)
before it reads its first message, and a run starts one per session: the README's default run
starts about 75. This process pays that once: ``python -m matrix_servers.warm SOCKET`` listens on
a Unix socket, imports the SDK and the servers, and forks one child per request. A request comes
from ``warm_shim.py`` (the process the client actually starts) with the shim's stdin, stdout and
stderr; the child takes them as its own and runs the server's ``__main__`` as ``python -m`` would.
So each server is still its own process on its own pipes, only its imports are inherited.

Lifetimes: the template ends when its stdin (held by the process that started it) closes; a
child's process group is killed when its shim's connection closes before the child has ended
(a shim killed by SIGKILL takes its server with it, as a killed process group would).
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import sys
import tempfile
import traceback

# The bundled servers built on the SDK, imported here once; the others start cold.
WARM_MODULES = (
    "matrix_servers.memory",
    "matrix_servers.gateway",
    "matrix_servers.billing",
    "matrix_servers.strict",
)
MAX_REQUEST_BYTES = 1 << 20
REQUEST_TIMEOUT = 30.0


def preload() -> None:
    """Import what every server imports (the SDK, uvicorn, our servers), not run anything."""
    for module in WARM_MODULES:
        __import__(f"{module}.__main__")


def read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    """One request: a 4-byte length, then JSON; the shim's three descriptors ride on the first bytes."""
    data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
    if len(data) < 4 or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise ValueError("a request needs a length and three descriptors")
    (size,) = struct.unpack("!I", data[:4])
    if size > MAX_REQUEST_BYTES:
        raise ValueError("request too large")
    body = bytearray(data[4:])
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("the request ended early")
        body += chunk
    request = json.loads(body)
    if request.get("argv", [None])[0] not in WARM_MODULES:
        raise ValueError("not a warm bundled server")
    return request, fds


def run_child(request: dict, fds: list[int]) -> None:
    """In the forked child: become the server ``python -m MODULE ARGS`` with the shim's pipes."""
    os.setpgid(0, 0)  # its own group: the shim forwards signals to it, the template kills it
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # gettempdir() is cached: read TMPDIR again, from this environment
    module, *args = request["argv"]
    sys.argv = [module, *args]
    sys.modules.pop(f"{module}.__main__", None)  # run afresh as __main__; its imports stay loaded
    code: object = 0
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
    except BaseException:  # noqa: BLE001 - a fresh interpreter would print it and exit 1
        traceback.print_exc()
        code = 1
    if not isinstance(code, int):
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


class Template:
    """The accept-fork-reap loop; single-threaded, so a fork copies nothing half-done.

    One bad request or a failed fork costs that request only (its shim then starts the server
    cold); the loop itself must not end while servers it forked are running."""

    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, tuple[socket.socket, int]] = {}  # pid -> (connection, pidfd)

    def serve(self) -> None:
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        self.selector.register(0, selectors.EVENT_READ, ("lifeline", None))
        while True:
            for key, _ in self.selector.select():
                kind, pid = key.data
                if kind == "lifeline":
                    if not os.read(0, 4096):
                        self.shutdown()
                        return
                elif kind == "accept":
                    self.accept()
                elif kind == "exited":
                    self.reap(pid)
                else:  # the shim's connection: it only ever closes, and early means killed
                    self.selector.unregister(key.fileobj)
                    self.kill(pid)

    def accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        try:
            conn.settimeout(REQUEST_TIMEOUT)
            request, fds = read_request(conn)
        except (OSError, ValueError):
            conn.close()
            return
        try:
            pid = os.fork()
        except OSError:  # no child: the shim reads no pid and starts the server cold
            pid = -1
        if pid == 0:
            try:
                self.in_child()
                run_child(request, fds)  # ends the process itself
            except BaseException:  # noqa: BLE001 - never unwind into the template's own code
                traceback.print_exc()
            os._exit(1)
        for fd in fds:
            os.close(fd)
        if pid < 0:
            conn.close()
            return
        pidfd = os.pidfd_open(pid)  # works: main() checked it before listening
        self.children[pid] = (conn, pidfd)
        self.selector.register(pidfd, selectors.EVENT_READ, ("exited", pid))
        try:
            conn.sendall(f"pid {pid}\n".encode())
        except OSError:
            self.kill(pid)
            return
        self.selector.register(conn, selectors.EVENT_READ, ("shim", pid))

    def in_child(self) -> None:
        """Drop the template's own descriptors in a new child (never its Python objects' later)."""
        self.selector.close()
        self.listener.close()
        for conn, pidfd in self.children.values():
            conn.close()
            os.close(pidfd)
        os.close(0)

    def reap(self, pid: int) -> None:
        conn, pidfd = self.children.pop(pid)
        _, status = os.waitpid(pid, 0)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        if conn.fileno() in self.selector.get_map():
            self.selector.unregister(conn)
        try:
            conn.sendall(f"exit {status}\n".encode())
        except OSError:
            pass
        conn.close()

    @staticmethod
    def kill(pid: int) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def shutdown(self) -> None:
        for pid in list(self.children):
            self.kill(pid)
            self.reap(pid)


def main(argv: list[str]) -> None:
    path = argv[0]
    try:
        os.close(os.pidfd_open(os.getpid()))  # Linux 5.3+: without it, no socket, so every shim
    except OSError:  # finds none and starts its server cold
        sys.exit(3)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)  # before the imports: a shim that connects early waits in the backlog
    listener.listen(128)
    try:
        preload()
        Template(listener).serve()
    finally:
        listener.close()
        os.unlink(path)  # and its private directory, when whoever started this did not
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(path))


if __name__ == "__main__":
    main(sys.argv[1:])
