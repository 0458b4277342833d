"""Bundled SDK servers started from one warm template process instead of a cold interpreter each.

A bundled server built on the official SDK spends about 1.5 s of CPU on imports before it reads
a message; a run opens one per session (about 75 for the README's default run). The first such
server a process asks for starts ``python -m matrix_servers.warm`` (which imports the SDK once);
each server is then ``warm_shim.py``, a bare interpreter that has the template fork the server
onto its own stdin, stdout and stderr, forwards signals to it and exits as it does. So a client
still starts one process per server, talks to it over its own pipes and ends it the usual way;
only the imports are shared. ``MCP_MATRIX_WARM_SERVERS=0`` starts every server cold (as does a
platform without ``fork``, ``pidfd_open`` or descriptor passing); servers given with ``--stdio``
always start as their command says.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from mcp_matrix.wire.errors import ServerExited
from mcp_matrix.wire.process import ServerProcess

__all__ = ["WARM_ENV", "module_argv", "server_command", "state_per_session", "stop_template"]

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


def supported() -> bool:
    """This platform can fork a template and pass descriptors to it, and the user did not opt out."""
    if os.environ.get(WARM_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    return _platform_can()


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
    only: the SDK servers keep their store in a temporary directory of their own unless ``--db``
    names a file (which outlives them). Such a server starts empty for every session, so a call
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
