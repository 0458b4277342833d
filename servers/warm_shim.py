"""The process a client starts for a warm bundled server: ``python -S -I warm_shim.py SOCKET -- MODULE ARGS``.

It hands its stdin, stdout and stderr to the warm template (``warm.py``), which forks the server
``python -m MODULE ARGS`` onto them, then stands in for that server: signals it receives go to
the server's process group, and it exits as the server exits (the same code, or the same
signal). Standard library only and run with ``-S``, so it costs a bare interpreter start: it
imports the C modules under ``socket``, ``signal`` and ``json`` (``_socket``, ``_signal``,
``_json``), not those, whose own imports (``re``, ``enum``, ``selectors``) were two thirds of its
CPU, paid for every session. When the template cannot be reached or refuses, it becomes the cold
server with ``exec``, so a client always gets its server.
"""

import _signal as signal
import _socket as socket
import os
import struct
import sys
import time
from _json import encode_basestring_ascii as _text

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


def request_bytes(argv: list[str], env: dict[str, str], cwd: str) -> bytes:
    """``json.dumps({"argv": argv, "env": env, "cwd": cwd})``, without importing ``json``."""
    pairs = ",".join(f"{_text(k)}:{_text(v)}" for k, v in env.items())
    listed = ",".join(map(_text, argv))
    return f'{{"argv":[{listed}],"env":{{{pairs}}},"cwd":{_text(cwd)}}}'.encode("ascii")


def connect(path: str) -> "socket.socket | None":
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


def read_line(sock) -> str:
    """One line from the template (a byte at a time: the second line must stay unread until
    the server ends, and the lines are a few bytes)."""
    line = bytearray()
    try:
        while not line.endswith(b"\n"):
            byte = sock.recv(1)
            if not byte:
                break
            line += byte
    except OSError:
        return ""
    return line.decode("ascii", "replace").strip()


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
    request = request_bytes(server, dict(os.environ), cwd)
    descriptors = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("3i", 0, 1, 2))]
    try:  # socket.send_fds, as it does it
        sock.sendmsg([struct.pack("!I", len(request)) + request], descriptors)
    except OSError:
        cold(server)
    first = read_line(sock)
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
    last = read_line(sock)
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
