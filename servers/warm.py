"""A warm template for the bundled SDK servers: it imports the SDK once, then forks each server.

A bundled server spends about 1.5 s of CPU importing the official SDK (its pydantic models)
before it reads its first message, and a run starts one per session: the README's default run
starts about 75. This process pays that once: ``python -m matrix_servers.warm SOCKET`` listens on
a Unix socket, imports the SDK and the servers, and forks one child per request. A request comes
from ``warm_shim.py`` (the process the client actually starts) with the shim's stdin, stdout and
stderr; the child takes them as its own and runs the server's ``__main__`` as ``python -m`` would.
So each server is still its own process on its own pipes, only its imports are inherited.

Lifetimes: the template ends when its stdin (held by the process that started it) closes,
giving the servers still running a grace period (their client has ended, so their stdin ends
too), then SIGTERM, then SIGKILL. A child's process group is killed when its shim's connection
closes before the child has ended (a shim killed by SIGKILL takes its server with it, as a
killed process group would); a child holds no connection to the template, so a killed template
shows every shim an end of file, and each shim then ends its server.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import runpy
import selectors
import signal
import socket
import struct
import sys
import tempfile
import time
import traceback

# The bundled servers built on the SDK, imported here once; the others start cold.
WARM_MODULES = (
    "matrix_servers.memory",
    "matrix_servers.gateway",
    "matrix_servers.billing",
    "matrix_servers.strict",
)
MAX_REQUEST_BYTES = 1 << 20
REQUEST_TIMEOUT = 5.0  # a shim sends its request as soon as it connects
SHUTDOWN_GRACE = 2.0  # servers whose client ended get their stdin's end; then SIGTERM, SIGKILL
# Read once by the interpreter at its start: a server asked for with other values of these starts
# cold, since a forked one would keep the template's.
STARTUP_ENV = re.compile(r"PYTHON[A-Z_]*|TZ|LC_[A-Z]+|LANG|LANGUAGE")


# What a server imports only once it runs rather than when it is imported: anyio's event loop
# backend and streams (when the loop starts) and jsonschema (our servers import it at their first
# call). Imported here, or every forked server imports them again: about 45 ms of the 75 ms of CPU
# a forked memory server cost for a session of two calls (servers/ tests: a forked server imports
# nothing for a session).
LAZY_MODULES = (
    "anyio._backends._asyncio",
    "anyio._core._sockets",
    "anyio._core._streams",
    "anyio.streams.stapled",
    "anyio.streams.tls",
    "anyio.abc._testing",
    "jsonschema",
)


def preload() -> None:
    """Import what every server imports (the SDK, uvicorn, our servers) and what they import
    once they run, without running anything (no thread, no event loop: a fork copies no
    half-done work)."""
    for module in (*(f"{m}.__main__" for m in WARM_MODULES), *LAZY_MODULES):
        __import__(module)
    import jsonschema

    # its first validation loads the 2020-12 metaschema's vocabularies: once, here
    list(jsonschema.Draft202012Validator({"type": "object"}).iter_errors({}))


def startup_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if STARTUP_ENV.fullmatch(k)}


def read_request(conn: socket.socket, own_env: dict) -> tuple[dict, list[int]]:
    """One request: a 4-byte length, then JSON; the shim's three descriptors ride on the first
    bytes. A request refused for any reason leaves no descriptor open here."""
    data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
    try:
        if len(data) < 4 or len(fds) != 3:
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
        argv, env, cwd = request["argv"], request["env"], request["cwd"]
        if not (
            isinstance(argv, list)
            and argv
            and all(isinstance(a, str) for a in argv)
            and isinstance(env, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
            and isinstance(cwd, str)
        ):
            raise ValueError("a request is argv (strings), env (strings) and cwd")
        if argv[0] not in WARM_MODULES:
            raise ValueError("not a warm bundled server")
        if startup_env(env) != own_env:
            raise ValueError("interpreter settings differ from the template's")
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return request, fds


def run_child(request: dict, fds: list[int]) -> None:
    """In the forked child: become the server ``python -m MODULE ARGS`` with the shim's pipes."""
    os.setpgid(0, 0)  # its own group (the parent sets it too, whichever runs first)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # gettempdir() is cached: read TMPDIR again, from this environment
    module, *args = request["argv"]
    sys.argv = [module, *args]
    # sys.path stays the template's, which holds no current directory (it was started with -P,
    # mcp_matrix.targets.warm_start.module_argv): a bundled server never imports from the user's folder.
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
    cold); the loop itself must not end while servers it forked are running. Once a child is
    forked its shim is told its pid before anything else can fail, so a shim never starts a
    cold server onto pipes a forked one holds."""

    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, tuple[socket.socket, int]] = {}  # pid -> (connection, pidfd)
        self.own_env = startup_env(dict(os.environ))

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
                elif pid not in self.children:
                    continue  # reaped earlier in this batch: its events are stale
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
            request, fds = read_request(conn, self.own_env)
        except Exception:  # noqa: BLE001 - any bad request is refused: its shim starts cold
            conn.close()
            return
        try:
            pid = os.fork()
        except OSError:  # no child: the shim reads no pid and starts the server cold
            pid = -1
        if pid == 0:
            try:
                self.in_child(conn)
                run_child(request, fds)  # ends the process itself
            except BaseException:  # noqa: BLE001 - never unwind into the template's own code
                traceback.print_exc()
            os._exit(1)
        for fd in fds:
            os.close(fd)
        if pid < 0:
            conn.close()
            return
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # before any signal is sent to the group: no window without it
        try:
            conn.sendall(f"pid {pid}\n".encode())
        except OSError:
            pass  # the shim is gone: the child is killed below or once its connection closes
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:  # cannot watch it: end it; the shim exits as a killed server would
            self.kill(pid)
            _, status = os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                conn.sendall(f"exit {status}\n".encode())
            conn.close()
            return
        self.children[pid] = (conn, pidfd)
        self.selector.register(pidfd, selectors.EVENT_READ, ("exited", pid))
        self.selector.register(conn, selectors.EVENT_READ, ("shim", pid))

    def in_child(self, own: socket.socket) -> None:
        """Drop the template's descriptors in a new child: its own connection too, so a killed
        template shows its shim an end of file."""
        self.selector.close()
        self.listener.close()
        own.close()
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
        with contextlib.suppress(OSError):
            conn.sendall(f"exit {status}\n".encode())
        conn.close()

    @staticmethod
    def kill(pid: int, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)

    def shutdown(self) -> None:
        """The process that started this has ended or let go: its servers' stdin ends with it,
        so they get a grace period to exit (and remove their temporary files), then SIGTERM,
        then SIGKILL."""
        self.selector.unregister(self.listener)
        self.selector.unregister(0)
        for grace, sig in ((SHUTDOWN_GRACE, signal.SIGTERM), (1.0, signal.SIGKILL), (5.0, None)):
            deadline = time.monotonic() + grace
            while self.children and time.monotonic() < deadline:
                for key, _ in self.selector.select(max(0.0, deadline - time.monotonic())):
                    kind, pid = key.data
                    if pid in self.children:
                        if kind == "exited":
                            self.reap(pid)
                        else:
                            self.selector.unregister(key.fileobj)
            if sig is not None:
                for pid in list(self.children):
                    self.kill(pid, sig)


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
