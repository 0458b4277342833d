"""A ``--stdio`` server given as ``npx [-y] PKG ARGS`` resolved once per run, not once per session.

Most MCP servers' READMEs say ``npx -y @scope/server ARGS``. Run as given, every session starts
npx again: its own Node process, the npm CLI and a registry check, about 1 s of CPU and 2-3 s of
wall before the server's own start (measured on ``@modelcontextprotocol/server-memory``: 1.35 s
CPU and 3.6 s wall through npx, 0.40 s and 0.8 s for the process npx ends up running).

So the first session of such a command runs it as given. Once its server has sent a message,
the process npx started is found in ``/proc``: the one descendant of npx holding the session's
stdin and stdout pipes (npm runs it under ``sh -c``), which is not npm or a shell. Its argv (that
must end with the command's ARGS and name the executable it runs), environment (npx's
``npm_*`` variables and ``PATH`` included) and directory are kept, and every later session of
the run starts exactly that. Anything unclear (no ``/proc``, no such process or several, a shell
script between, an argv rewritten by the server, a Node IPC channel) keeps npx for every session,
and ``--verbose`` says why. ``--cold-start`` or ``MCP_MATRIX_WARM_SERVERS=0`` keeps npx too.
Recognised strictly: ``npx`` then only ``-y``, ``--yes``, ``-p P``, ``--package P`` or
``--package=P`` before the package (anything else, ``npm exec`` included, runs as given).
"""

from __future__ import annotations

import collections
import os
import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mcp_matrix.targets.python_command import find
from mcp_matrix.wire.errors import ServerExited, WireError
from mcp_matrix.wire.process import started_from_command
from mcp_matrix.wire.stdio import StdioTransport, server_environment

__all__ = ["NpxTransport", "Resolved", "find_server", "npx_args", "npx_starts"]

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish", "csh"})
_NPM_MARKS = ("npm-cli.js", "npx-cli.js")
SHELL_SCRIPT = "a shell script holds the session's pipes"


def npx_args(command: Sequence[str]) -> tuple[str, ...] | None:
    """The ARGS after the package of ``npx [-y|--yes] [-p P|--package P|--package=P]... PKG
    ARGS``, or None when ``command`` is not that shape (it then runs as given every session)."""
    if not command or os.path.basename(command[0]) != "npx":
        return None
    i = 1
    while i < len(command) and command[i].startswith("-"):
        flag = command[i]
        if flag in ("-y", "--yes") or flag.startswith("--package="):
            i += 1
        elif flag in ("-p", "--package") and i + 1 < len(command):
            i += 2
        else:
            return None
    return tuple(command[i + 1 :]) if i < len(command) else None


@dataclass(frozen=True)
class Resolved:
    """The process npx started for a session: how to start it again, exactly (``env`` holds the
    user's ``--env`` values: never print it)."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(repr=False)  # never printed: it holds the --env values
    cwd: str
    files: tuple[str, ...] = ()  # what its argv names by absolute path and was there (npx's cache)

    def still_there(self) -> bool:
        """Its directory and ``files`` are still there: a run in a long-lived process (the
        pytest plugin) may outlive them (``npm cache clean``); npx then runs again."""
        return os.path.isdir(self.cwd) and all(os.path.exists(f) for f in self.files)


def _read(pid: int, name: str) -> bytes:
    with open(f"/proc/{pid}/{name}", "rb") as f:
        return f.read()


def _argv(pid: int) -> list[str]:
    raw = _read(pid, "cmdline")
    return [os.fsdecode(a) for a in raw[:-1].split(b"\0")] if raw.endswith(b"\0") else []


def _children() -> dict[int, list[int]]:
    """Every process's children, from ``/proc/PID/stat`` (its parent is the 2nd field after
    the name, which may hold spaces and parentheses)."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(_read(int(entry), "stat").rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # it ended meanwhile
            children[parent].append(int(entry))
    return children


def _holds(pid: int, pipes: tuple[int, int]) -> bool:
    try:
        return [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in (0, 1)] == [
            f"pipe:[{inode}]" for inode in pipes
        ]
    except OSError:
        return False


def _exe(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/exe")


def _server_pid(root: int, pipes: tuple[int, int]) -> int | str:
    """The one process npx (``root``) started on the session's pipes: a child of npx, or of
    the ``sh -c`` npm runs it under; or why there is not exactly one."""
    children = _children()
    holders = [p for p in children.get(root, []) if _holds(p, pipes)]
    if len(holders) == 1 and os.path.basename(_exe(holders[0])) in SHELLS:
        if _argv(holders[0])[1:2] != ["-c"]:
            return SHELL_SCRIPT
        holders = [p for p in children.get(holders[0], []) if _holds(p, pipes)]
    if len(holders) != 1:
        return (
            f"{len(holders)} processes under npx hold the session's pipes"
            if holders
            else "no process under npx holds the session's pipes (the server ended?)"
        )
    return holders[0]


def _environment(pid: int) -> dict[str, str] | str:
    entries = _read(pid, "environ").split(b"\0")
    env: dict[str, str] = {}
    for entry in entries[:-1] if entries[-1:] == [b""] else entries:
        key, sep, value = os.fsdecode(entry).partition("=")
        if not sep or not key or key in env:
            return "its environment cannot be read back exactly"
        env[key] = value
    if "NODE_CHANNEL_FD" in env:
        return "it talks to npm over a Node IPC channel"
    missing = set(server_environment({})) - set(env)
    if missing:  # a session's environment always holds these (``server_environment``)
        return f"npx removed {', '.join(sorted(missing))} from its environment"
    return env


def _runs_the_bin(head: Sequence[str], env: Mapping[str, str], cwd: str) -> bool:
    """``head`` (its argv before ARGS) ends with the file npm ran (``npm_lifecycle_script``'s
    first word on its ``PATH``, as a shebang puts it): nothing ran in between, such as a
    shell script doing its own set-up first that a later session would skip."""
    try:
        words = shlex.split(env.get("npm_lifecycle_script", ""))
    except ValueError:
        return False
    ran = find(words[0], env, cwd) if words and env.get("npm_lifecycle_event") == "npx" else None
    return ran is not None and os.path.realpath(os.path.join(cwd, ran)) == os.path.realpath(
        os.path.join(cwd, head[-1])
    )


def find_server(root: int, pipes: tuple[int, int], args: Sequence[str]) -> Resolved | str:
    """The process npx (pid ``root``) started on the session's stdin and stdout (``pipes``, their
    inodes), as ``Resolved``, or why it cannot be started again exactly (then npx runs for every
    session). ``args``: the command's ARGS, which its argv must end with."""
    if not os.path.isdir("/proc/self/fd"):
        return "no /proc here to find the process npx started"
    try:
        pid = _server_pid(root, pipes)
        if isinstance(pid, str):
            return pid
        exe, argv = _exe(pid), _argv(pid)
        name = os.path.basename(exe)
        if name in SHELLS:
            return SHELL_SCRIPT
        if name in ("npm", "npx") or any(m in a for a in argv for m in _NPM_MARKS):
            return f"npx runs {name}, not a server of its own"
        env = _environment(pid)
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError as exc:
        return f"its process could not be read ({exc.strerror or exc})"
    if isinstance(env, str):
        return env
    if len(argv) <= len(args) or (args and tuple(argv[-len(args) :]) != tuple(args)):
        return "its command line does not end with the command's arguments"
    found = find(argv[0], env, cwd)
    if found is None or os.path.realpath(os.path.join(cwd, found)) != os.path.realpath(exe):
        return "its command line does not name the program it runs (process.title set?)"
    if not _runs_the_bin(argv[: len(argv) - len(args)], env, cwd):
        return "its process is not the package's bin that npm ran (a script that started it?)"
    if not os.path.isdir(cwd):
        return "its directory is gone"
    files = tuple(a for a in argv if os.path.isabs(a) and os.path.exists(a))
    return Resolved(tuple(argv), env, cwd, files)


class _Resolution:
    """What one npx command (with one environment and directory) resolved to in this process,
    or why it did not; while a session is finding out, the others wait for it."""

    def __init__(self, command: tuple[str, ...]) -> None:
        self.command = command
        self.lock = threading.Lock()
        self.resolved: Resolved | None = None
        self.why = ""  # why every session runs npx ("" while not known)
        self.prober: object | None = None  # the session finding out now
        self.done = threading.Event()

    def take(self, session: object, bound: float) -> Resolved | bool:
        """What ``session`` starts: the resolved process, or npx (True: and find out)."""
        deadline = time.monotonic() + bound
        while True:
            with self.lock:
                if self.resolved is not None and not self.resolved.still_there():
                    self.resolved = None  # npx finds it again
                if self.resolved is not None or self.why:
                    return self.resolved or False
                if self.prober is None:
                    self.prober, self.done = session, threading.Event()
                    return True
                done = self.done
            if not done.wait(max(0.0, deadline - time.monotonic())):
                return False  # the first session's server is slow to answer: npx as given

    def finish(self, session: object, outcome: Resolved | str | None) -> None:
        """``session`` found ``outcome`` (None: its server ended before it answered, so the
        next session finds out)."""
        with self.lock:
            if self.prober is not session:
                return
            self.prober = None
            if isinstance(outcome, Resolved):
                self.resolved = outcome
            elif outcome:
                self.why = outcome
            self.done.set()


_resolutions: dict[tuple, _Resolution] = {}
_lock = threading.Lock()


class NpxTransport(StdioTransport):
    """A stdio transport for an npx command: the process the run's first session resolved it
    to (``Resolved``), else npx as given; the first session's resolves it. Described as the
    command given, which is what a user configures."""

    def __init__(
        self,
        command: Sequence[str],
        args: Sequence[str],
        env: Mapping[str, str],
        cwd: str | None,
        bound: float,
    ) -> None:
        super().__init__(command, env=env, cwd=cwd)
        self._args, self._bound = tuple(args), bound
        self._asked = StdioTransport.describe(self)  # before the command may change
        key = (tuple(command), tuple(sorted(env.items())), cwd)
        with _lock:
            self._resolution = _resolutions.setdefault(key, _Resolution(tuple(command)))
        self._probing = False
        self._pipes = (0, 0)  # the inodes of its stdin and stdout pipes, once started

    def start(self) -> None:
        if self._proc is not None:
            return
        taken = self._resolution.take(self, self._bound)
        if self._closed:
            self._resolution.finish(self, None)
            raise ServerExited("the session was closed before its server started")
        if isinstance(taken, Resolved):
            self.command, self.env, self.cwd = list(taken.argv), dict(taken.env), taken.cwd
        self._probing = taken is True
        try:
            super().start()
            assert self._proc is not None and self._proc.stdin is not None
            self._pipes = (os.fstat(self._proc.stdin.fileno()).st_ino, self._stdout_inode())
        except BaseException:
            self._stop_probing(None)
            raise

    def _stdout_inode(self) -> int:
        fd = self._ledger.out_fd
        return os.fstat(fd).st_ino if fd is not None else 0

    def _stop_probing(self, outcome: Resolved | str | None) -> None:
        if self._probing:
            self._probing = False
            self._resolution.finish(self, outcome)

    def _deliver(self, item: object, stamp: object = None) -> None:
        if self._probing and isinstance(item, (dict, list)):  # its server runs and answers
            try:
                assert self._proc is not None
                found = find_server(self._proc.pid, self._pipes, self._args)
            except Exception as exc:  # noqa: BLE001 - never the session's failure
                found = f"the process npx started could not be found ({type(exc).__name__})"
            self._stop_probing(found)
        super()._deliver(item, stamp)

    def _fail(self, error: WireError) -> None:
        self._stop_probing(None)
        super()._fail(error)

    def describe(self) -> dict:
        return dict(self._asked)


def npx_starts(command: Sequence[str], shown: Callable[[Sequence[str]], str]) -> str | None:
    """How the sessions of npx command ``command`` were started, for ``--verbose`` (``shown``
    masks a command as reports do); None when it is not an npx command resolved here."""
    found = [r for r in _resolutions.values() if r.command == tuple(command)]
    if not found:
        return None
    through = started_from_command(command)
    resolved = [r.resolved for r in found if r.resolved is not None]
    if resolved:
        direct = sum(started_from_command(a) for a in dict.fromkeys(r.argv for r in resolved))
        targets = ", ".join(dict.fromkeys(shown(r.argv) for r in resolved))
        return (
            f"{shown(command)}: resolved once to {targets} "
            f"({direct} processes started from it, {through} through npx)"
        )
    why = "; ".join(dict.fromkeys(r.why for r in found if r.why)) or (
        "its first server never answered"
    )
    return f"{shown(command)} started through npx every session: {why} ({through} processes)"
