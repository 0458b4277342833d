"""A ``--stdio`` server given through a launcher (``npx``, ``npm exec``, ``uvx``, ``uv run``)
resolved once per run, not once per session.

Most MCP servers' READMEs say ``npx -y @scope/server ARGS`` or ``uvx mcp-server-x ARGS``. Run as
given, every session starts the launcher again: npx's own Node process, the npm CLI and a
registry check (about 1 s of CPU and 2-3 s of wall), or uv's resolution and environment check,
before the server's own start. So the first session of such a command runs it as given; once its
server has sent a message, the launcher's ``find`` (``npx_command``, ``uvx_command``) looks in
``/proc`` for the process the launcher started, holding the session's stdin and stdout pipes, and
keeps its argv, environment and directory (``Resolved``); every later session of the run starts
exactly that, forked from a warm template when it is a Python program one can run
(``warm_start.user_fork``: a Python bin behind npx, a uvx or ``uv run`` server). Anything
unclear keeps the launcher for every session, and ``--verbose`` says why (``launcher_starts``).
"""

from __future__ import annotations

import collections
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mcp_matrix.targets.python_command import find, recognise
from mcp_matrix.targets.warm_start import starts, user_fork
from mcp_matrix.wire import waits
from mcp_matrix.wire.errors import ServerExited, WireError
from mcp_matrix.wire.forked import ForkedPopen
from mcp_matrix.wire.process import started_from_command
from mcp_matrix.wire.stdio import StdioTransport, server_environment

__all__ = [
    "SHELLS",
    "Launcher",
    "LauncherTransport",
    "Resolved",
    "children",
    "forget_resolutions",
    "holds",
    "launcher_starts",
    "process_argv",
    "refused_starts",
    "resolve",
]

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish", "csh"})


@dataclass(frozen=True)
class Resolved:
    """The process a launcher started for a session: how to start it again, exactly (``env``
    holds the user's ``--env`` values: never print it)."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(repr=False)  # never printed: it holds the --env values
    cwd: str
    files: tuple[str, ...] = ()  # what its argv names by absolute path and was there (a cache's)

    def still_there(self) -> bool:
        """Its directory and ``files`` are still there: a long run may outlive them (``npm
        cache clean``, ``uv cache clean``); the launcher then runs again."""
        return os.path.isdir(self.cwd) and all(os.path.exists(f) for f in self.files)


# Finds what the launcher (pid) started on the session's pipes (their inodes): or why not.
Find = Callable[[int, tuple[int, int]], "Resolved | str"]


@dataclass(frozen=True)
class Launcher:
    """A command recognised as a launcher: its name as ``--verbose`` says it (``npx``, ``uvx``)
    and how to find the server it started."""

    name: str
    find: Find


def _read(pid: int, name: str) -> bytes:
    with open(f"/proc/{pid}/{name}", "rb") as f:
        return f.read()


def process_argv(pid: int) -> list[str]:
    raw = _read(pid, "cmdline")
    return [os.fsdecode(a) for a in raw[:-1].split(b"\0")] if raw.endswith(b"\0") else []


def children() -> dict[int, list[int]]:
    """Every process's children, from ``/proc/PID/stat`` (its parent is the 2nd field after
    the name, which may hold spaces and parentheses)."""
    found: dict[int, list[int]] = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(_read(int(entry), "stat").rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # it ended meanwhile
            found[parent].append(int(entry))
    return found


def holds(pid: int, pipes: tuple[int, int], standard: bool = False) -> bool:
    """``pid`` holds both pipes: as its stdin and stdout (``standard``: a shell between), or on
    any descriptor (a server may move them: the Python SDK's stdio server keeps the wire above
    2 and points 0 and 1 elsewhere)."""
    wanted = [f"pipe:[{inode}]" for inode in pipes]
    try:
        if standard:
            return [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in (0, 1)] == wanted
        links = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                links.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                continue  # closed meanwhile
        return all(w in links for w in wanted)
    except OSError:
        return False


def _environment(pid: int, launcher: str) -> dict[str, str] | str:
    entries = _read(pid, "environ").split(b"\0")
    env: dict[str, str] = {}
    for entry in entries[:-1] if entries[-1:] == [b""] else entries:
        key, sep, value = os.fsdecode(entry).partition("=")
        if not sep or not key or key in env:
            return "its environment cannot be read back exactly"
        env[key] = value
    if "NODE_CHANNEL_FD" in env:
        return f"it talks to {launcher} over a Node IPC channel"
    missing = set(server_environment({})) - set(env)
    if missing:  # a session's environment always holds these (``server_environment``)
        return f"{launcher} removed {', '.join(sorted(missing))} from its environment"
    return env


def resolve(
    pid: int, args: Sequence[str], launcher: str, bin_ran: Callable[..., bool]
) -> Resolved | str:
    """Process ``pid``, which ``launcher`` started, as ``Resolved``, or why it cannot be started
    again exactly: its argv must end with the command's ``args``, name the program it runs, and
    before them be what ``bin_ran(head, env, cwd)`` says the launcher ran (no script of its own
    doing set-up first, which a later session would skip)."""
    try:
        exe, argv = os.readlink(f"/proc/{pid}/exe"), process_argv(pid)
        name = os.path.basename(exe)
        if name in SHELLS:
            return "a shell script holds the session's pipes"
        env = _environment(pid, launcher)
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
    if not bin_ran(argv[: len(argv) - len(args)], env, cwd):
        return f"its process is not the program {launcher} ran (a script that started it?)"
    if not os.path.isdir(cwd):
        return "its directory is gone"
    files = tuple(a for a in argv if os.path.isabs(a) and os.path.exists(a))
    return Resolved(tuple(argv), env, cwd, files)


class _Resolution:
    """What one launcher command (with one environment and directory) resolved to in this
    process, or why it did not; while a session is finding out, the others wait for it."""

    def __init__(self, command: tuple[str, ...], launcher: str) -> None:
        self.command, self.launcher = command, launcher
        self.lock = threading.Lock()
        self.resolved: Resolved | None = None
        self.why = ""  # why every session runs the launcher ("" while not known)
        self.prober: object | None = None  # the session finding out now
        self.done = threading.Event()
        self.forked = 0  # sessions of the resolved process forked from a warm template

    def take(self, session: object, bound: float) -> Resolved | bool:
        """What ``session`` starts: the resolved process, or the launcher (True: and find out)."""
        deadline = time.monotonic() + bound
        while True:
            with self.lock:
                if self.resolved is not None and not self.resolved.still_there():
                    self.resolved = None  # the launcher finds it again
                if self.resolved is not None or self.why:
                    return self.resolved or False
                if self.prober is None:
                    self.prober, self.done = session, threading.Event()
                    return True
                done = self.done
            # sliced in the main thread: a Ctrl-C handled by another thread stops this wait
            if not waits.wait(done, max(0.0, deadline - time.monotonic())):
                return False  # the first session's server is slow to answer: the launcher

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


def forget_resolutions() -> None:
    """Resolve every launcher command again (a run ended: ``targets.kinds.run_servers``): the
    next run finds what the launcher starts then (a package updated, a project edited)."""
    with _lock:
        _resolutions.clear()


class LauncherTransport(StdioTransport):
    """A stdio transport for a launcher command: the process the run's first session resolved
    it to (``Resolved``, forked from a warm template of it when it can be), else the command as
    given; the first session's resolves it. Described as the command given, which is what a user
    configures."""

    def __init__(
        self,
        command: Sequence[str],
        launcher: Launcher,
        env: Mapping[str, str],
        cwd: str | None,
        bound: float,
    ) -> None:
        super().__init__(command, env=env, cwd=cwd)
        self._find, self._bound = launcher.find, bound
        self._asked = StdioTransport.describe(self)  # before the command may change
        key = (tuple(command), tuple(sorted(env.items())), cwd)
        with _lock:
            self._resolution = _resolutions.setdefault(
                key, _Resolution(tuple(command), launcher.name)
            )
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
            self.fork = user_fork(taken.argv, taken.env, taken.cwd, self._bound)
        self._probing = taken is True
        try:
            super().start()
            assert self._proc is not None and self._proc.stdin is not None
            self._pipes = (os.fstat(self._proc.stdin.fileno()).st_ino, self._stdout_inode())
        except BaseException:
            self._stop_probing(None)
            raise
        if isinstance(self._proc, ForkedPopen):
            with self._resolution.lock:
                self._resolution.forked += 1

    def _stdout_inode(self) -> int:
        fd = self._ledger.out_fd
        return os.fstat(fd).st_ino if fd is not None else 0

    def _stop_probing(self, outcome: Resolved | str | None) -> None:
        if self._probing:
            self._probing = False
            self._resolution.finish(self, outcome)

    def _deliver(self, item: object, stamp: object = None) -> None:
        if self._probing and isinstance(item, (dict, list)):  # its server runs and answers
            name = self._resolution.launcher
            if not os.path.isdir("/proc/self/fd"):
                found: Resolved | str = f"no /proc here to find the process {name} started"
            else:
                try:
                    assert self._proc is not None
                    found = self._find(self._proc.pid, self._pipes)
                except Exception as exc:  # noqa: BLE001 - never the session's failure
                    found = f"the process {name} started could not be found ({type(exc).__name__})"
            self._stop_probing(found)
        super()._deliver(item, stamp)

    def _fail(self, error: WireError) -> None:
        self._stop_probing(None)
        super()._fail(error)

    def describe(self) -> dict:
        return dict(self._asked)


def launcher_starts(command: Sequence[str], shown: Callable[[Sequence[str]], str]) -> str | None:
    """How the sessions of launcher command ``command`` were started, for ``--verbose`` (``shown``
    masks a command as reports do); None when it is not a launcher command resolved here."""
    found = [r for r in _resolutions.values() if r.command == tuple(command)]
    if not found:
        return None
    name, through = found[0].launcher, started_from_command(command)
    resolved = [r.resolved for r in found if r.resolved is not None]
    if resolved:
        argvs = list(dict.fromkeys(r.argv for r in resolved))
        direct = sum(started_from_command(a) for a in argvs)
        forked = sum(r.forked for r in found)
        targets = ", ".join(shown(a) for a in argvs)
        counts = [f"{direct} processes started from it"] if direct or not forked else []
        counts += [f"{forked} sessions forked from a warm template of it"] if forked else []
        counts.append(f"{through} through {name}")
        line = f"{shown(command)}: resolved once to {targets} ({', '.join(counts)})"
        if not forked:  # a Python program that could have been: why not
            cold = dict.fromkeys(r.argv for r in resolved if recognise(r.argv, r.env, r.cwd))
            line += "".join(f"; {starts(a, shown(a))}" for a in cold)
        return line
    why = "; ".join(dict.fromkeys(r.why for r in found if r.why)) or (
        "its first server never answered"
    )
    return f"{shown(command)} started through {name} every session: {why} ({through} processes)"


def refused_starts(command: Sequence[str], why: str, shown: Callable[[Sequence[str]], str]) -> str:
    """``--verbose``'s line for a launcher command whose form is not recognised (``why``: the
    word, from ``npx_refused`` or ``uv_refused``): it ran as given every session."""
    count = started_from_command(command)
    return (
        f"{shown(command)} ran as given every session ({count} processes): the launcher form "
        f"was not recognised: {why}"
    )
