"""Bundled SDK servers started from one warm template process instead of a cold interpreter each.

A bundled server built on the official SDK spends about 1.5 s of CPU on imports before it reads
a message; a run opens one per session (about 75 for the README's default run). The first such
server a process asks for starts ``python -m matrix_servers.warm`` (which imports the SDK once).
Over stdio the template then forks each server straight onto the client's pipes (``bundled_fork``
gives ``mcp_matrix.wire.forked`` the socket and the request); over HTTP or SSE each server is
``warm_shim.py`` (``server_command``), a bare interpreter that has the template fork the server
onto its own stdin, stdout and stderr, forwards signals to it and exits as it does. Either way
each server is its own process on its own pipes, ended the usual way; only the imports are shared.
``MCP_MATRIX_WARM_SERVERS=0`` or ``--cold-start`` starts every server cold (as does a platform
without ``fork``, ``pidfd_open`` or descriptor passing).

A server given with ``--stdio`` whose command is a Python program (``targets.python_command``)
gets a template of its own (``user_fork``): ``warm.py --user`` run by path under that
command's interpreter, with its environment and directory and its ``sys.path``, imports what the
command imports before its code runs and says ``ready``, or ``cold REASON`` when forking it would
not be the same program (a thread, an open descriptor, output while importing); its sessions
are then forked onto the client's pipes, or started cold as their command says. ``starts`` is what ``--verbose`` says.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from mcp_matrix.targets.python_command import PythonCommand, recognise
from mcp_matrix.wire import waits
from mcp_matrix.wire.errors import ServerExited
from mcp_matrix.wire.process import ServerProcess, started_from_command

__all__ = [
    "WARM_ENV",
    "bundled_fork",
    "module_argv",
    "opted_out",
    "server_command",
    "starts",
    "state_per_session",
    "stop_template",
    "stop_user_templates",
    "user_fork",
]

WARM_ENV = "MCP_MATRIX_WARM_SERVERS"
# Kept in step with matrix_servers.warm.WARM_MODULES (a test checks): the servers on the SDK.
WARM_MODULES = frozenset(
    {
        "matrix_servers.memory",
        "matrix_servers.gateway",
        "matrix_servers.billing",
        "matrix_servers.strict",
    }
)

# Python 3.10 has no -P: the same isolation as code that drops sys.path[0] (the current
# directory) before it imports anything, then runs the module as `python -m` would.
_RUN_MODULE = (
    "import sys; del sys.path[0]; m = sys.argv.pop(1); sys.argv[0] = m; import runpy; "
    "runpy.run_module(m, run_name='__main__', alter_sys=True)"
)


def module_argv(module_and_args: tuple[str, ...] | list[str]) -> list[str]:
    """``python -m MODULE ARGS`` for one of our own modules, never importing from the current
    directory: plain ``-m`` puts it first on ``sys.path``, so a ``typing_extensions.py`` or
    ``jsonschema.py`` in the folder a user runs mcp-matrix from would be executed
    (docs/security.md). ``-P`` on Python 3.11 and later."""
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-m", *module_and_args]
    return [sys.executable, "-c", _RUN_MODULE, *module_and_args]


_lock = threading.Lock()
_template: ServerProcess | None = None
_socket_dir: str | None = None


def opted_out() -> bool:
    """``MCP_MATRIX_WARM_SERVERS=0``: every server starts as its command says."""
    return os.environ.get(WARM_ENV, "1").strip().lower() in ("0", "false", "no", "off")


def supported() -> bool:
    """This platform can fork a template and pass descriptors to it, and the user did not opt out."""
    return not opted_out() and _platform_can()


@functools.cache
def _platform_can() -> bool:
    import socket

    if not (hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(os, "pidfd_open")):
        return False
    try:  # the call itself: a kernel before 5.3, or a seccomp filter, refuses it
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


@functools.cache
def _shim() -> str | None:
    """The installed ``warm_shim.py`` (run by path: importing ``matrix_servers`` is not needed)."""
    spec = importlib.util.find_spec("matrix_servers")
    if spec is None or not spec.submodule_search_locations:
        return None
    shim = Path(next(iter(spec.submodule_search_locations))) / "warm_shim.py"
    return str(shim) if shim.is_file() else None


def _socket_path() -> str | None:
    """The running template's socket, starting the template first if this process has none;
    None once a template has ended on its own (its servers then start cold)."""
    global _template, _socket_dir
    with _lock:
        if _template is not None and _socket_dir:
            return os.path.join(_socket_dir, "s") if _template.poll() is None else None
        try:
            directory = tempfile.mkdtemp(prefix="mcp-matrix-warm-")
        except OSError:  # no writable temporary directory: every server starts cold
            return None
        path = os.path.join(directory, "s")
        template = ServerProcess(
            module_argv(("matrix_servers.warm", path)),
            stdin=subprocess.PIPE,  # its lifeline: it ends when this process closes it or ends
        )
        # kept before it starts: a Ctrl-C held meanwhile is raised as start() returns
        _template, _socket_dir = template, directory
        atexit.register(stop_template)
        try:
            template.start()
        except ServerExited:
            _template = _socket_dir = None
            shutil.rmtree(directory, ignore_errors=True)
            return None
        return path


def bundled_fork(module_and_args: tuple[str, ...] | list[str]) -> tuple[str, list[str]] | None:
    """Where to have bundled server ``module_and_args`` forked over stdio (the template's socket
    and the request), or None: it starts cold (``mcp_matrix.wire.forked``, no shim)."""
    if module_and_args[0] not in WARM_MODULES or not supported():
        return None
    socket_path = _socket_path()
    return None if socket_path is None else (socket_path, list(module_and_args))


def server_command(module_and_args: tuple[str, ...] | list[str]) -> list[str]:
    """The command that starts bundled server ``module_and_args``: warm when it can be."""
    cold = module_argv(module_and_args)
    if module_and_args[0] not in WARM_MODULES or not supported():
        return cold
    shim = _shim()
    socket_path = _socket_path() if shim else None
    if shim is None or socket_path is None:
        return cold
    return [sys.executable, "-S", "-I", shim, socket_path, "--", *module_and_args]


def state_per_session(module_and_args: tuple[str, ...] | list[str]) -> bool:
    """Whether bundled server ``module_and_args`` over stdio keeps its state in its own process
    only: the SDK servers keep their store in memory (memory) or in a temporary directory of their
    own (the others) unless ``--db`` names a file (which outlives them). Such a server starts empty for every session, so a call
    on a session of its own meets the same server whoever sends it (``mcp_matrix.run.sharing``)."""
    module, *args = module_and_args
    return module in WARM_MODULES and not any(a == "--db" or a.startswith("--db=") for a in args)


def stop_template() -> None:
    """End the template (its servers have ended with their sessions) and remove its socket."""
    global _template, _socket_dir
    with _lock:
        proc, directory = _template, _socket_dir
        _template = _socket_dir = None
    if proc is not None:
        # its servers' grace, SIGTERM and SIGKILL take at most 8 s; then its group is ended
        proc.end(stdin_grace=10.0, term_grace=0.0)
    if directory:
        shutil.rmtree(directory, ignore_errors=True)


# -- a user's own Python server (--stdio) ------------------------------------------------------

# A template imports what a cold server would before its first message; on a loaded machine that
# takes seconds. The first session waits for it no longer than its handshake's bound
# (--timeout-initialize, which a cold server's imports count against too), and at most this: one
# not ready by then is ended and every session starts cold, bounded as a cold server always is.
# A server too slow to start for the handshake's bound must not pass because it was forked.
READY_WAIT = 60.0


class _UserTemplate:
    """One ``warm.py --user`` process for one command, environment and directory: whether it
    is ready (else why it is not) and how many servers it forked, read from its stdout."""

    def __init__(self, command: tuple[str, ...]) -> None:
        self.command = command
        self.process: ServerProcess | None = None
        self.directory = ""
        self.socket = ""
        self.cold = ""  # why sessions start cold ("" while it is ready)
        self.forked = 0
        self.learned = 0  # modules and patterns its servers imported or compiled once they ran
        self.ready = threading.Event()

    def start(
        self, found: PythonCommand, env: Mapping[str, str], cwd: str | None, bound: float
    ) -> None:
        shim = _shim()
        if shim is None:
            self.cold = "the warm template is not installed"
            return
        try:
            self.directory = tempfile.mkdtemp(prefix="mcp-matrix-warm-")
        except OSError:
            self.cold = "no writable temporary directory"
            return
        self.socket = os.path.join(self.directory, "s")
        template = str(Path(shim).with_name("warm.py"))
        self.process = ServerProcess(
            [found.interpreter, template, "--user", self.socket],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,  # the spec, then its lifeline
            stdout=subprocess.PIPE,  # "ready" or "cold REASON", then "forked" per server
        )
        atexit.register(self.stop)
        try:
            popen = self.process.start()
        except ServerExited as exc:
            self.cold = f"its interpreter did not start ({exc})"
            return
        spec = {
            "mode": found.mode,
            "module": found.module,
            "script": found.script,
            "argv": list(found.argv),
            "prefix": found.prefix,  # a script of the user's own: its leading imports
            "command": list(self.command),
            "env": dict(env),
        }
        assert popen.stdin and popen.stdout
        try:
            popen.stdin.write((json.dumps(spec) + "\n").encode())
            popen.stdin.flush()
        except OSError:
            pass  # it ended: its stdout says so
        threading.Thread(
            target=self._listen, args=(popen.stdout,), name="mcp-warm", daemon=True
        ).start()
        wait = min(bound, READY_WAIT)
        if not waits.wait(self.ready, wait):  # sliced: Ctrl-C stops a wait in the main thread
            self.cold = (
                f"its imports took longer than {wait:g} s (--timeout-initialize), "
                "so every session starts cold and its handshake is bounded as the command's is"
                if wait < READY_WAIT
                else f"the template was not ready within {READY_WAIT:.0f} s"
            )
            self.stop(grace=0.0)

    def _listen(self, stdout) -> None:
        for raw in stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line == "forked":
                self.forked += 1
            elif line.startswith("learned "):
                self.learned += int(line[8:])
            elif line == "ready":
                self.ready.set()
            elif line.startswith("cold "):  # before "ready", or once forking had to stop
                self.cold = line[5:]
                self.ready.set()
        if not self.ready.is_set() and not self.cold:  # not ended by start() for its slowness
            assert self.process is not None
            self.process.stderr_read(timeout=1.0)
            last = self.process.stderr_tail(1)
            self.cold = "the template ended" + (f": {last[0]}" if last else "")
            self.ready.set()

    def fork(self) -> tuple[str, list[str]] | None:
        """Its socket and the request for a server while it is ready and running, else None."""
        if self.cold or self.process is None or self.process.poll() is not None:
            return None
        return self.socket, list(self.command)

    def stop(self, grace: float = 10.0) -> None:
        """End it: its stdin closed, ``grace`` for its servers (as ``stop_template``), then its group."""
        if self.process is not None:
            self.process.end(stdin_grace=grace, term_grace=0.0 if grace else 1.0)
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)


_user: dict[tuple, _UserTemplate] = {}


def user_fork(
    command: Sequence[str], env: Mapping[str, str], cwd: str | None, bound: float = READY_WAIT
) -> tuple[str, list[str]] | None:
    """Where to have ``--stdio`` server ``command``, run with ``env`` (all it gets) in ``cwd``,
    forked (``mcp_matrix.wire.forked``), when a warm template of it is ready; None: start it as
    its command says. The first call for a command starts its template and waits until it has
    imported the server, for ``bound`` seconds at most (the handshake's: see READY_WAIT)."""
    key = (tuple(command), tuple(sorted(env.items())), cwd)
    if not supported():
        return None
    with _lock:
        template = _user.get(key)
        if template is None:
            template = _user[key] = _UserTemplate(tuple(command))
            found = recognise(command, env, cwd)
            if found is None:
                template.cold = "not a Python console script, python -m MODULE or python SCRIPT beginning with its imports"
            else:
                template.start(found, env, cwd, bound)
    return template.fork()


def stop_user_templates() -> None:
    """End every user template (a run ended: ``targets.kinds.run_servers``): the next run imports
    the server's code as it is then, not as the first run found it (a caller of the API, or
    the pytest plugin, may edit it in between). The bundled servers' template stays: it is ours."""
    with _lock:
        ended = list(_user.values())
        _user.clear()
    for template in ended:
        template.stop()
        atexit.unregister(template.stop)


def starts(command: Sequence[str], shown: str, cold_start: bool = False) -> str:
    """How the sessions of ``command`` (``shown``: as it may be printed, secrets masked) were
    started in this process, for ``--verbose``: forked, or started cold and why, with how many
    processes each way (``cold_start``: ``--cold-start`` was given)."""
    cold = started_from_command(command)
    found = [t for k, t in _user.items() if k[0] == tuple(command)]
    forked = sum(t.forked for t in found)
    if cold_start:
        why = "--cold-start"
    elif not found:
        why = f"warm start is off ({WARM_ENV}) or not possible here"
    else:
        why = "; ".join(dict.fromkeys(t.cold for t in found if t.cold))
    if not why:
        extra = f"; {cold} started cold" if cold else ""
        return f"{forked} sessions forked from a warm template of {shown}{extra}"
    counts = [f"{cold} processes"] if cold else []
    counts += [f"{forked} sessions forked"] if forked else []
    return f"{shown} started cold: {why}" + (f" ({'; '.join(counts)})" if counts else "")
