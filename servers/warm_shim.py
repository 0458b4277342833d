"""The process a client starts for a warm bundled server: ``python -S -I warm_shim.py SOCKET -- MODULE ARGS``.

It hands its stdin, stdout and stderr to the warm template (``warm.py``), which forks the server
``python -m MODULE ARGS`` onto them, then stands in for that server: signals it receives go to
the server's process group, and it exits as the server exits (the same code, or the same
signal). Standard library only and run with ``-S``, so it costs a bare interpreter start. When
the template cannot be reached or refuses, it becomes the cold server with ``exec``, so a
client always gets its server.
"""

import json
import os
import signal
import socket
import struct
import sys
import time

CONNECT_WAIT = 10.0  # the template binds its socket first thing; this is for a loaded machine


# As mcp_matrix.targets.warm_start.module_argv (this file imports nothing of ours): `python -m`, never
# importing from the current directory (-P; on Python 3.10, code that drops sys.path[0]).
RUN_MODULE = (
    "import sys; del sys.path[0]; m = sys.argv.pop(1); sys.argv[0] = m; import runpy; "
    "runpy.run_module(m, run_name='__main__', alter_sys=True)"
)


def cold(argv: list[str]) -> None:
    if sys.version_info >= (3, 11):
        os.execv(sys.executable, [sys.executable, "-P", "-m", *argv])
    os.execv(sys.executable, [sys.executable, "-c", RUN_MODULE, *argv])


def connect(path: str) -> socket.socket | None:
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


def read_line(stream) -> str:
    try:
        return stream.readline().decode("ascii", "replace").strip()
    except OSError:
        return ""


def main(argv: list[str]) -> None:
    path, dashes, server = argv[0], argv[1], argv[2:]
    assert dashes == "--" and server
    sock = connect(path)
    if sock is None:
        cold(server)
    try:
        cwd = os.getcwd()
    except OSError:  # the directory was removed: let the cold server say what it makes of that
        sock.close()
        cold(server)
    request = json.dumps({"argv": server, "env": dict(os.environ), "cwd": cwd}).encode()
    try:
        socket.send_fds(sock, [struct.pack("!I", len(request)) + request], [0, 1, 2])
    except OSError:
        cold(server)
    replies = sock.makefile("rb")
    first = read_line(replies)
    if not first.startswith("pid "):
        sock.close()
        cold(server)  # nothing was forked: the template refused or had ended
    pid = int(first[4:])
    # The server holds the pipes now; this process must not keep them open after it ends
    # (a client waits for the end of stdout, which only the last holder's exit gives).
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)

    def forward(signum, _frame) -> None:
        try:
            os.killpg(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, forward)
    last = read_line(replies)
    if not last.startswith("exit "):  # the template ended under its server: take it along
        forward(signal.SIGKILL, None)
        os._exit(1)
    code = os.waitstatus_to_exitcode(int(last[5:]))
    if code < 0:  # ended by a signal: end the same way, so the client sees what it would have
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    main(sys.argv[1:])
