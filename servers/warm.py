"""A warm template for the bundled SDK servers: it imports the SDK once, then forks each server.

A bundled server spends about 1.5 s of CPU importing the official SDK (its pydantic models)
before it reads its first message, and a run starts one per session: the README's default run
starts about 75. This process pays that once: ``python -m matrix_servers.warm SOCKET`` listens on
a Unix socket, imports the SDK and the servers, and forks one child per request. A request comes
with three descriptors, the server's stdin, stdout and stderr: from the client itself over stdio
(``mcp_matrix.wire.forked``: the ends of its own pipes) or from ``warm_shim.py`` (the process a
bundled server over HTTP or SSE is started as: its own stdio); the child takes them as its own and
runs the server's ``__main__`` as ``python -m`` would. So each server is still its own process on
its own pipes, only its imports are inherited. ``--user`` is a template of a user's own Python
server (``user_main``).

Lifetimes: the template ends when its stdin (held by the process that started it) closes,
giving the servers still running a grace period (their client has ended, so their stdin ends
too), then SIGTERM, then SIGKILL. A child's process group is killed when the connection it was
asked for on closes before the child has ended (a client or shim killed by SIGKILL takes its
server with it, as a killed process group would); a child holds no connection to the template,
so a killed template shows every such connection an end of file, and its holder then ends the
server.
"""

from __future__ import annotations

import sys

# What the interpreter loaded before this file ran (``site`` and what its ``.pth`` files import),
# read before this file's own imports. A command's script folder (or ``-m``'s directory) goes
# first on ``sys.path`` only after these were loaded, so it never shadows them (``shadowed``);
# ``__future__`` may be this file's own.
STARTUP_MODULES = frozenset(sys.modules) - {"__future__"}

import argparse
import atexit
import contextlib
import gc
import json
import os
import re
import runpy
import selectors
import signal
import socket
import struct
import tempfile
import time
import traceback
import types
from collections.abc import Callable, Iterator
from typing import NoReturn

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
    # a parser and an argument compile argparse's four patterns; every bundled server makes one
    argparse.ArgumentParser(prog="warm").add_argument("--warm", help="%(default)s")


def rehearse() -> None:
    """Serve the memory server's rehearsal sessions here (``matrix_servers.rehearsal``), so each
    forked server starts with what every one did first done; a rehearsal that fails or leaves
    anything behind (a thread, a descriptor, a loop, output) ends the template: servers then
    start cold, never forked from a template in a state no cold server has."""
    from matrix_servers import rehearsal

    why, said = stderr_kept(lambda: checked(rehearsal.rehearse, "rehearsing a session"))
    if why or said:
        os.write(2, said + f"{why or 'rehearsing a session wrote to stderr'}\n".encode())
        sys.exit(3)


def startup_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if STARTUP_ENV.fullmatch(k)}


def bundled_check(own_env: dict) -> Callable[[dict], None]:
    """What a bundled template forks: one of ``WARM_MODULES``, with its own interpreter settings."""

    def check(request: dict) -> None:
        if request["argv"][0] not in WARM_MODULES:
            raise ValueError("not a warm bundled server")
        if startup_env(request["env"]) != own_env:
            raise ValueError("interpreter settings differ from the template's")

    return check


def read_request(conn: socket.socket, check: Callable[[dict], None]) -> tuple[dict, list[int]]:
    """One request: a 4-byte length, then JSON; the shim's three descriptors ride on the first
    bytes; ``check`` raises ValueError for one this template does not fork. A request refused
    for any reason leaves no descriptor open here."""
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
        check(request)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return request, fds


def become(fds: list[int]) -> None:
    """In a forked child: a process group of its own, the shim's descriptors as 0, 1 and 2."""
    os.setpgid(0, 0)  # its own group (the parent sets it too, whichever runs first)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)


def exit_as_python(
    main: Callable[[], object],
    after: Callable[[], None] | None = None,
    hidden: frozenset[str] = frozenset(),
    finalize: bool = False,
) -> None:
    """Run ``main`` and end the process as an interpreter running it would: ``SystemExit``'s
    code, 1 and a traceback for any other exception (its first frames from files ``hidden``
    left out: the cold interpreter has none of them), death by SIGINT after the traceback of a
    ``KeyboardInterrupt``, the streams flushed; ``after`` once ``main`` has ended. ``finalize``
    (a user's server): its threads joined and its ``atexit`` functions run first, as
    ``Py_FinalizeEx`` does (a log flushed, a temporary folder removed, a file written)."""
    code: object = 0
    interrupted = False
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:  # noqa: BLE001 - a fresh interpreter would print it and exit 1
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename in hidden:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        code, interrupted = 1, isinstance(exc, KeyboardInterrupt)
    if not isinstance(code, int):
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    if finalize:
        finalize_as_python()
    if after is not None:
        after()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def finalize_as_python() -> None:
    """What an interpreter does at its end before its own teardown: wait for the threads that
    are not daemons, then run the ``atexit`` functions (each one's error printed, not raised)."""
    threading = sys.modules.get("threading")
    with contextlib.suppress(BaseException):  # as Python, which goes on to the next step
        if threading is not None:
            threading._shutdown()
    run = getattr(atexit, "_run_exitfuncs", None)
    with contextlib.suppress(BaseException):
        if run is not None:
            run()


def run_child(request: dict, fds: list[int]) -> None:
    """In the forked child: become the server ``python -m MODULE ARGS`` with the shim's pipes."""
    become(fds)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # gettempdir() is cached: read TMPDIR again, from this environment
    module, *args = request["argv"]
    sys.argv = [module, *args]
    # sys.path stays the template's, which holds no current directory (it was started with -P,
    # mcp_matrix.targets.warm_start.module_argv): a bundled server never imports from the user's folder.
    sys.modules.pop(f"{module}.__main__", None)  # run afresh as __main__; its imports stay loaded
    exit_as_python(lambda: runpy.run_module(module, run_name="__main__", alter_sys=True))


class Template:
    """The accept-fork-reap loop; single-threaded, so a fork copies nothing half-done.

    One bad request or a failed fork costs that request only (its shim then starts the server
    cold); the loop itself must not end while servers it forked are running. Once a child is
    forked its shim is told its pid before anything else can fail, so a shim never starts a
    cold server onto pipes a forked one holds."""

    def __init__(
        self,
        listener: socket.socket,
        check: Callable[[dict], None] | None = None,
        run: Callable[[dict, list[int]], None] = run_child,
        status: int | None = None,
        reaped: Callable[[int], None] | None = None,
    ) -> None:
        self.listener = listener
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, tuple[socket.socket, int]] = {}  # pid -> (connection, pidfd)
        self.check = check or bundled_check(startup_env(dict(os.environ)))
        self.run = run
        self.status = status  # a user template's line to whoever started it: "forked" per child
        self.reaped = reaped  # called with a child's pid once it has been reaped

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
            request, fds = read_request(conn, self.check)
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
                self.run(request, fds)  # ends the process itself
            except BaseException:  # noqa: BLE001 - never unwind into the template's own code
                traceback.print_exc()
            os._exit(1)
        for fd in fds:
            os.close(fd)
        if pid < 0:
            conn.close()
            return
        if self.status is not None:
            with contextlib.suppress(OSError):
                os.write(self.status, b"forked\n")
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
        if self.status is not None:
            os.close(self.status)
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
        if self.reaped is not None:
            self.reaped(pid)

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


# -- a template for a user's own Python server (``--stdio``) -------------------------------------


def read_spec() -> dict:
    """The first line on stdin: what to import and run (JSON); the rest of stdin is the lifeline."""
    line = b""
    while not line.endswith(b"\n"):  # the one line its starter writes before it only waits
        chunk = os.read(0, 65536)
        if not chunk:
            raise ValueError("no spec on stdin")
        line += chunk
    return json.loads(line)


def path_first(spec: dict) -> str | None:
    """What the real command's interpreter puts first on ``sys.path``: a script's directory
    (symbolic links resolved), for ``-m`` the current directory; nothing under ``-P`` or
    ``PYTHONSAFEPATH`` (``sys.flags.safe_path``, read from this same environment)."""
    if getattr(sys.flags, "safe_path", False):
        return None
    if spec["mode"] == "script":
        return os.path.dirname(os.path.realpath(spec["script"]))
    return os.getcwd()


def from_path(name: str) -> bool:
    """Whether ``import name`` in the real command could read a folder on ``sys.path``: not for
    a module it had loaded before that folder went first (``STARTUP_MODULES``), one built into
    the interpreter (``time``, ``gc``) or frozen into it (3.11+: ``os``, ``runpy``), whose
    finders come before the path's."""
    import importlib.machinery

    return not (
        name in STARTUP_MODULES
        or name in sys.builtin_module_names
        or importlib.machinery.FrozenImporter.find_spec(name) is not None
    )


def shadowed(first: str) -> str | None:
    """A module already loaded here (by the interpreter or by this file) that ``first`` holds
    too and the real command would read from there (``from_path``): it would import that one,
    so a fork would not be the same program."""
    import importlib.machinery

    loaded = {m.partition(".")[0] for m in sys.modules} - {"__main__"}
    for name in sorted(n for n in loaded if from_path(n)):
        found = importlib.machinery.PathFinder.find_spec(name, [first])
        if found is not None and found.loader is not None:  # a namespace folder shadows nothing
            return name
    return None


def open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def children() -> set[int]:
    """This process's children (running or not yet reaped)."""
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                found.update(int(pid) for pid in f.read().split())
        except OSError:  # a kernel without the file: is there any child at all?
            try:
                os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                continue
            found.add(-1)
    return found


@contextlib.contextmanager
def stdin_probe() -> Iterator[Callable[[], bool]]:
    """Stdin for imports: one byte, then its end (never the lifeline, which would hang them
    until the run gave up on this template); the function says whether anything read it."""
    r, w = os.pipe()
    os.write(w, b"?")
    os.close(w)
    saved = os.dup(0)
    os.dup2(r, 0)
    os.close(r)

    def read() -> bool:
        try:
            return os.read(0, 1) != b"?"
        except OSError:  # closed, or made something else: touched all the same
            return True

    try:
        yield read
    finally:
        os.dup2(saved, 0)
        os.close(saved)


def import_like_python(spec: dict) -> None:
    """Import what the real command imports before its own code runs: a console script's
    module; for ``-m a.b`` the packages above it and, when it is a package itself, the package
    (``runpy`` does the same before it runs ``a.b.__main__``)."""
    if spec["mode"] == "script":
        if spec.get("prefix") is not None:  # a script of the user's own: its leading imports
            main = spec["main"] = script_main(spec["script"])  # which its forks run it in
            code = compile(spec["prefix"], main.__file__ or "", "exec", dont_inherit=True)
            own, sys.modules["__main__"] = sys.modules["__main__"], main
            try:  # as the script runs them: in its __main__, which a module may read
                exec(code, vars(main))  # noqa: S102
            finally:
                sys.modules["__main__"] = own
        else:
            __import__(spec["module"])
        return
    import importlib.util

    parts = spec["module"].split(".")
    for n in range(1, len(parts)):
        __import__(".".join(parts[:n]))
    found = importlib.util.find_spec(spec["module"])
    if found is None:
        raise ImportError(spec["module"])
    if found.submodule_search_locations is not None:
        __import__(spec["module"])
        if importlib.util.find_spec(spec["module"] + ".__main__") is None:
            raise ImportError(spec["module"] + ".__main__")


def script_main(script: str) -> types.ModuleType:
    """The ``__main__`` module ``python SCRIPT`` runs ``script`` in (Python 3.9+): its absolute
    path as ``__file__`` (``runpy.run_path`` keeps the path as given: ``os.path.dirname`` of a
    relative one is ``''``), a source loader, no spec or package, the builtins module."""
    import builtins
    import importlib.machinery

    path = os.path.abspath(script)
    main = types.ModuleType("__main__")
    vars(main).update(
        __file__=path,
        __cached__=None,
        __loader__=importlib.machinery.SourceFileLoader("__main__", path),
        __annotations__={},
        __builtins__=builtins,
    )
    return main


def run_script(main: types.ModuleType) -> None:
    """Run the script ``main.__file__`` in ``main`` as ``python SCRIPT`` does: read and compiled
    now (as a cold interpreter does; not with this file's ``__future__`` flags)."""
    with open(main.__file__ or "", "rb") as f:
        code = compile(f.read(), main.__file__ or "", "exec", dont_inherit=True)
    sys.modules["__main__"] = main
    exec(code, vars(main))  # noqa: S102 - the script the command runs


def checked(do: Callable[[], None], what: str) -> str | None:
    """Run ``do`` (imports) and say why a fork after it would not be the program its command
    runs, None when it would: no thread or process started, no event loop left running, no
    descriptor left open, nothing written to stdout and nothing read from stdin (a fork would
    not have done it: a cold server reads and writes its session there)."""
    with stdin_probe() as read:
        why = _checked(do, what)
        return why or (f"{what} read stdin" if read() else None)


def _checked(do: Callable[[], None], what: str) -> str | None:
    catch_r, catch_w = os.pipe()
    os.set_blocking(catch_w, False)
    os.set_blocking(catch_r, False)  # a process started meanwhile may hold catch_w open
    before, forked = open_fds(), children()
    saved_out = os.dup(1)
    os.dup2(catch_w, 1)
    why = None
    try:
        do()
    except BaseException as exc:  # noqa: BLE001 - the cold server shows the real error
        why = f"{what} failed ({type(exc).__name__})"
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os.dup2(saved_out, 1)
    os.close(saved_out)
    after = open_fds()
    os.close(catch_w)
    try:
        wrote = os.read(catch_r, 1)
    except BlockingIOError:
        wrote = b""
    os.close(catch_r)
    threading = sys.modules.get("threading")
    asyncio = sys.modules.get("asyncio")
    if why:
        return why
    if wrote:
        return f"{what} wrote to stdout"
    if len(os.listdir("/proc/self/task")) != 1 or (threading and threading.active_count() != 1):
        return f"{what} started a thread"
    if asyncio is not None and asyncio.events._get_running_loop() is not None:
        return f"{what} left an event loop running"
    if after - before:
        return f"{what} left a file descriptor open"
    if before - after:
        return f"{what} closed a file descriptor"  # stdin, stdout or stderr: not the program
    if children() - forked:
        return f"{what} started a process"
    return None


def import_user(spec: dict) -> str | None:
    """Import what the server imports before it runs, as its command would, and the runtime
    modules ``LAZY_MODULES`` of packages it imported; None when forking it is safe, else why not."""

    def do() -> None:
        sys.argv = list(spec["argv"]) if spec["mode"] == "script" else ["-m", *spec["argv"][1:]]
        import_like_python(spec)
        for module in LAZY_MODULES:  # only for packages the server imported itself
            if module.partition(".")[0] in sys.modules:
                with contextlib.suppress(ImportError):
                    __import__(module)
        if "jsonschema" in sys.modules:
            import jsonschema

            list(jsonschema.Draft202012Validator({"type": "object"}).iter_errors({}))

    return checked(do, f"importing {spec['module']}")


# Lessons a template takes: each names a module or a regular expression no lesson named before,
# so servers that import more once they run (a call's first log line, say) teach it as well as
# those that only listed tools; the bound is for a server that makes up a new name every time.
LESSONS = 5


def compiled() -> set[tuple[str, int]]:
    """The patterns (text) and flags ``re``'s cache holds: what ``re.compile``, ``re.match`` and
    the rest compiled in this process (``_cache``, and ``_cache2`` from Python 3.12)."""
    found = set()
    for cache in (getattr(re, "_cache", None), getattr(re, "_cache2", None)):
        if isinstance(cache, dict):
            for key in list(cache):
                # (type(pattern), pattern, flags); bytes patterns are left out
                if isinstance(key, tuple) and len(key) == 3 and key[0] is str:
                    found.add((key[1], key[2]))
    return found


def cached() -> int:
    caches = (getattr(re, "_cache", None), getattr(re, "_cache2", None))
    return sum(len(c) for c in caches if isinstance(c, dict))


class Learned:
    """What the first servers imported once they ran (``argparse``, a logging library, ...)
    and the regular expressions they compiled (argparse's, a log highlighter's: about 2 ms
    each server): each forked server that exits by itself (``os._exit`` too) leaves them, the
    modules in the order it imported them, in the template's private folder, and the template
    imports and compiles them before the next fork, checked as the first imports were, so
    later servers do not again. A check that fails ends the forking."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.loaded: set[str] = set()
        self.patterns: set[tuple[str, int]] = set()
        self.sizes = (0, 0)  # of sys.modules and re's cache when frozen
        self.tried: set[str] = set()  # named by a lesson already, imported or not
        self.tried_patterns: set[tuple[str, int]] = set()
        self.lessons = 0  # lessons that named a module or a pattern not tried before
        self.left = False  # in a forked server: its lesson was left

    def path(self, pid: int) -> str:
        return os.path.join(self.folder, f"imports-{pid}")

    def freeze(self) -> None:
        """Before forking: what is loaded and compiled now, and the collector told to leave it
        alone (a forked server's collections then skip the template's objects, and copy fewer
        pages)."""
        self.loaded = set(sys.modules)
        self.patterns = compiled()
        self.sizes = (len(sys.modules), cached())
        gc.freeze()

    def leave(self) -> None:
        """In a server ending by itself: what it imported and compiled beyond the template
        (never raises; once)."""
        if self.left:
            return
        self.left = True
        # Listing sys.modules or re's cache touches every entry, and so copies the pages that
        # hold them (about 200 page faults for sys.modules): not when no lesson can be left, nor
        # (``imported``, ``compiled``) when it holds no more entries than the template's did
        if self.lessons >= LESSONS:
            return
        try:
            lesson = {"modules": self.imported(), "patterns": self.compiled()}
            if lesson["modules"] or lesson["patterns"]:
                with open(self.path(os.getpid()), "w") as f:
                    json.dump(lesson, f)
        except Exception:  # noqa: BLE001, S110 - a lesson lost costs only its speed
            pass

    def imported(self) -> list[str]:
        if len(sys.modules) <= self.sizes[0]:
            return []
        # in the order it imported them (sys.modules keeps it): sorted, ``_asyncio`` came
        # before ``asyncio``, and every later server's asyncio lost track of its tasks
        return [n for n in list(sys.modules) if n not in self.loaded and n not in self.tried]

    def compiled(self) -> list[tuple[str, int]]:
        if cached() <= self.sizes[1]:
            return []
        return sorted(compiled() - self.patterns - self.tried_patterns)

    def take(self, pid: int) -> tuple[int, str | None]:
        """After server ``pid`` ended: import and compile what it left; how many modules and
        patterns that was, and why forking must stop (None: it need not)."""
        try:
            with open(self.path(pid)) as f:
                lesson = json.load(f)
            os.unlink(self.path(pid))
            names = [n for n in lesson["modules"] if isinstance(n, str)]
            patterns = {(p, f) for p, f in lesson["patterns"] if isinstance(p, str)}
        except (OSError, ValueError, TypeError, KeyError):
            return 0, None
        names = [n for n in names if n not in sys.modules and n not in self.tried]
        patterns = {(p, f) for p, f in patterns if isinstance(f, int) and not f & re.DEBUG}
        patterns -= self.tried_patterns | compiled()
        if not names and not patterns:  # what servers forked before the last lesson did too
            return 0, None
        self.tried.update(names)
        self.tried_patterns |= patterns
        self.lessons += 1

        def do() -> None:
            for name in names:
                with contextlib.suppress(ImportError):
                    __import__(name)
            for pattern, flags in patterns:
                with contextlib.suppress(Exception):
                    re.compile(pattern, flags)

        what = "importing what a server imported once it ran"
        why, said = stderr_kept(lambda: checked(do, what))
        if said and not why:  # a later server would not write it, as a cold one does
            why = f"{what} wrote to stderr"
        self.freeze()
        return len(names) + len(patterns), why


def stderr_kept(do: Callable[[], str | None]) -> tuple[str | None, bytes]:
    """``do()`` and what it wrote to stderr meanwhile (kept in an unnamed file: a pipe would
    block a module writing more than it holds)."""
    with tempfile.TemporaryFile() as kept:
        saved = os.dup(2)
        os.dup2(kept.fileno(), 2)
        try:
            why = do()
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        kept.seek(0)
        return why, kept.read()


def leave_on_os_exit(learned: Learned) -> None:
    """A server that ends itself with ``os._exit`` (skipping the interpreter's teardown, as the
    bundled ones do: ``matrix_servers.serving.exit_now``) leaves its lesson too: without it no
    server ever taught the template, and every fork imported the SDK again (about 1 s of CPU
    each for the memory server run by ``--stdio``, against 50-70 ms with the lesson)."""
    real, server = os._exit, os.getpid()

    def _exit(status: int) -> NoReturn:
        if os.getpid() == server:  # not a process the server forked, which the template never reaps
            learned.leave()
        real(status)

    os._exit = _exit


def run_user_child(spec: dict, fds: list[int], learned: Learned, said: bytes = b"") -> None:
    """In the forked child: run the command's own code as its interpreter would (the console
    script itself, or the module as ``__main__``) with the shim's pipes, after writing on its
    stderr what importing it wrote there (a cold server writes it on its own). Its environment
    and directory are the template's, which were the command's (the request was checked)."""
    become(fds)
    leave_on_os_exit(learned)
    view = memoryview(said)
    with contextlib.suppress(OSError):
        while view:
            view = view[os.write(2, view) :]
    sys.argv = list(spec["argv"])
    ours = frozenset({exit_as_python.__code__.co_filename})
    keep = sys.modules["__main__"]  # noqa: F841 - this file's globals, kept alive
    if spec["mode"] == "script":  # in the __main__ its leading imports ran in, if any
        main = spec.get("main") or script_main(spec["script"])
        exit_as_python(lambda: run_script(main), learned.leave, ours, finalize=True)
    module = spec["module"]
    as_main = getattr(runpy, "_run_module_as_main", None)  # what python -m calls (3.9-3.13)
    if as_main is None:
        sys.argv[0] = module  # run_module then sets it to the module's file, as -m does
        run_module = lambda: runpy.run_module(module, run_name="__main__", alter_sys=True)
        hidden = ours | {runpy.run_path.__code__.co_filename}
        exit_as_python(run_module, learned.leave, hidden, finalize=True)
    sys.modules["__main__"] = types.ModuleType("__main__")  # runs in its own, as -m's does
    exit_as_python(lambda: as_main(module, alter_argv=True), learned.leave, ours, finalize=True)


def user_main(path: str) -> None:
    """``INTERPRETER warm.py --user SOCKET``, started by ``mcp_matrix.targets.warm_start`` with
    the server's environment and directory, the spec on stdin. It says on stdout ``ready`` (then
    ``forked`` for each server) or ``cold REASON`` and ends."""
    status = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.close(devnull)
    if not getattr(sys.flags, "safe_path", False):
        del sys.path[0]  # this file's folder: the real command never had it

    def say(text: str) -> None:
        os.write(status, (text.replace("\n", " ") + "\n").encode("utf-8", "replace"))

    spec = read_spec()
    if not all(hasattr(m, f) for m, f in ((socket, "recv_fds"), (os, "pidfd_open"))):
        say(f"cold Python {sys.version_info[0]}.{sys.version_info[1]} cannot pass descriptors")
        return
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        say("cold this kernel has no pidfd_open")
        return
    first = path_first(spec)
    if first is not None:
        name = shadowed(first)
        if name is not None:
            say(f"cold {name} is in {first} and loaded before the server's code")
            return
        sys.path.insert(0, first)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    try:
        cwd = os.getcwd()  # the command's; a module may change it while imported, as it would
        why, said = stderr_kept(lambda: import_user(spec))
        if why:
            os.write(2, said)
            say(f"cold {why}")
            return
        env = spec["env"]
        learned = Learned(os.path.dirname(path))
        learned.freeze()
        stopped: list[str] = []

        def check(request: dict) -> None:
            if stopped:
                raise ValueError(stopped[0])
            if request["argv"] != spec["command"] or request["env"] != env:
                raise ValueError("not this template's command and environment")
            if request["cwd"] != cwd:
                raise ValueError("not this template's directory")

        def reaped(pid: int) -> None:
            count, why = learned.take(pid)
            if count:
                say(f"learned {count}")
            if why and not stopped:
                stopped.append(why)
                say(f"cold {why}")

        say("ready")
        run = lambda _, fds: run_user_child(spec, fds, learned, said)
        Template(listener, check, run, status, reaped).serve()
    finally:
        listener.close()
        os.unlink(path)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(path))


def main(argv: list[str]) -> None:
    if argv[:1] == ["--user"]:
        user_main(argv[1])
        # not the interpreter's end: the atexit functions the server's imports registered here
        # are its own, run by each server at its end, never by its template (a cold run has none)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(0)
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
        rehearse()
        gc.freeze()  # forked servers' collections skip what was imported here
        Template(listener).serve()
    finally:
        listener.close()
        os.unlink(path)  # and its private directory, when whoever started this did not
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(path))


if __name__ == "__main__":
    main(sys.argv[1:])
