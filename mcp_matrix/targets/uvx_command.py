"""A ``--stdio`` server given as ``uvx PKG ARGS`` (or ``uv tool run``, ``uvx --from P CMD``):
which process uv started, so the run's later sessions start it directly (``targets.launcher``).

This is how PyPI MCP servers are documented (``uvx mcp-server-time``). Run as given, every
session starts uv again: it resolves the package against its cache (or the index), checks the
tool's environment, then spawns the command and waits for it. ``uvx`` execs ``uv tool uvx``, and
uv runs the command as its one child: ``ENV/bin/CMD``, which for a Python entry point is
``ENV/bin/python ENV/bin/CMD ARGS`` once its shebang has run, with ``ENV/bin`` put first on its
``PATH`` (checked here against uv's own ``PATH``). That process, its environment and directory are
kept; as a Python console script, later sessions are forked from a warm template of it.

Recognised strictly: ``uvx`` or ``uv tool run``, then only ``--from P``, ``--with W`` and
``--python P`` / ``-p P`` (or ``--NAME=V``), then the package (``NAME``, ``NAME@VERSION`` or
``NAME[EXTRAS]``, whose command is ``NAME``; with ``--from``, the command) and its arguments.
Anything else (``--isolated``, ``--refresh``, ...) runs as given every session. ``uv run`` of a
project's script or command (``uv --directory D run server.py``) is the same tree: uv syncs the
project, then runs ``ENV/bin/python server.py ARGS`` (or ``ENV/bin/CMD``) in it as its one child.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from mcp_matrix.targets.launcher import Launcher, Resolved, children, holds, resolve

__all__ = ["find_server", "uv_refused", "uv_run_command", "uvx_command", "uvx_launcher"]

_VALUED = ("--from", "--with", "--python", "-p")
_PLACES = ("--directory", "--project")  # uv run's: where the project is
_PACKAGE = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[A-Za-z0-9._,-]*\])?(?:@\S+)?")


def _walk(command: list[str], i: int, valued: Sequence[str]) -> tuple[int, str]:
    """Where the words after ``command[i]``'s options (each in ``valued``, with its value as the
    next word or after ``=``) end, and the first word that is no such option ("" if none)."""
    while i < len(command) and command[i].startswith("-"):
        flag, eq, value = command[i].partition("=")
        if flag not in valued or (eq and not value) or (not eq and i + 1 >= len(command)):
            return i, command[i]
        i += 1 if eq else 2
    return i, ""


def _options(command: list[str], i: int, valued: Sequence[str]) -> int | None:
    """Where ``command[i]``'s options end (``_walk``); None for any other option."""
    end, refused = _walk(command, i, valued)
    return None if refused else end


def uv_run_command(command: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """(the script or command, its ARGS) of ``uv [--directory D] run [--directory D|--project P]
    SCRIPT.py|CMD ARGS`` (the MCP quickstart's ``uv --directory /path run weather.py``), or None."""
    command = list(command)  # a Target's is a tuple
    if not command or os.path.basename(command[0]) != "uv":
        return None
    i = _options(command, 1, _PLACES)
    if i is None or command[i : i + 1] != ["run"]:
        return None
    i = _options(command, i + 1, _PLACES)
    if i is None or i >= len(command) or command[i] in ("python", "python3"):
        return None
    return command[i], tuple(command[i + 1 :])


def uvx_command(command: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """(the command uv runs, its ARGS) of ``uvx [FLAGS] PKG ARGS`` or ``uv tool run [FLAGS] PKG
    ARGS``, or None when ``command`` is not that shape (it then runs as given every session)."""
    command = list(command)  # a Target's is a tuple
    if command[:1] and os.path.basename(command[0]) == "uvx":
        i = 1
    elif command[:1] and os.path.basename(command[0]) == "uv" and command[1:3] == ["tool", "run"]:
        i = 3
    else:
        return None
    end = _options(command, i, _VALUED)
    if end is None or end >= len(command):
        return None
    named = any(w == "--from" or w.startswith("--from=") for w in command[i:end])
    package = _PACKAGE.fullmatch(command[end])
    if named:
        name = command[end] if "/" not in command[end] else ""
    else:
        name = package["name"] if package else ""
    return (name, tuple(command[end + 1 :])) if name else None


def uv_refused(command: Sequence[str]) -> str | None:
    """Why uv command ``command`` (``uvx``, ``uv tool run``, ``uv run``) is not recognised and
    runs as given every session (the word, for ``--verbose``); None when it is recognised or
    is no such command."""
    command = list(command)  # a Target's is a tuple
    head = os.path.basename(command[0]) if command else ""
    if head not in ("uv", "uvx") or uvx_command(command) or uv_run_command(command):
        return None
    valued: Sequence[str]
    if head == "uvx" or command[1:3] == ["tool", "run"]:
        i, valued, form = (1 if head == "uvx" else 3), _VALUED, "--from P, --with W, --python P"
    else:
        i, refused = _walk(command, 1, _PLACES)
        if "run" not in command[i:]:
            return None  # uv sync, uv pip ...: no launcher
        if refused:
            return f"uv's option {refused!r} (only --directory D, --project P are)"
        i, valued, form = i + 1, _PLACES, "--directory D, --project P"
    end, refused = _walk(command, i, valued)
    if refused:
        return f"its option {refused!r} (only {form} are)"
    if end >= len(command):
        return "nothing to run after its options"
    if valued is _PLACES:
        return f"the command {command[end]!r} (uv run python runs as given)"
    return f"the package {command[end]!r} (NAME, NAME@VERSION or NAME[EXTRAS] is)"


def _ran(root: int, name: str):
    """Whether a process's argv before ARGS is uv's ``ENV/bin/NAME`` (by its shebang: with the
    interpreter before it), ``ENV/bin`` put first on uv's own ``PATH``."""

    def check(head: Sequence[str], env: Mapping[str, str], cwd: str) -> bool:
        try:
            with open(f"/proc/{root}/environ", "rb") as f:
                theirs = dict(
                    os.fsdecode(e).partition("=")[::2] for e in f.read().split(b"\0") if e
                ).get("PATH")
        except OSError:
            return False
        first, sep, rest = env.get("PATH", "").partition(os.pathsep)
        if not (sep and rest == theirs and os.path.isabs(first)) or len(head) > 2:
            return False
        if name.endswith(".py"):  # uv run SCRIPT.py: the environment's interpreter on it
            return len(head) == 2 and head[1] == name and os.path.dirname(head[0]) == first
        return head[-1] == os.path.join(first, name) and os.path.isfile(head[-1])

    return check


def find_server(
    root: int, pipes: tuple[int, int], name: str, args: Sequence[str], launcher: str = "uvx"
) -> Resolved | str:
    """The process uv (pid ``root``) started on the session's pipes (their inodes), running
    command ``name`` with ``args``, as ``Resolved``; or why it cannot be started again exactly
    (then ``launcher`` runs for every session)."""
    started = children().get(root, [])
    holders = [p for p in started if holds(p, pipes)]
    if len(holders) != 1:
        return (
            f"{len(holders)} processes under uv hold the session's pipes"
            if holders
            else "no process under uv holds the session's pipes (the server ended?)"
        )
    return resolve(holders[0], args, launcher, _ran(root, name))


def uvx_launcher(command: Sequence[str]) -> Launcher | None:
    """``command`` as a uv launcher (``uvx_command``, ``uv_run_command``), or None: it runs as
    given every session."""
    found = uvx_command(command) or uv_run_command(command)
    if found is None:
        return None
    (name, args), launcher = found, os.path.basename(command[0])
    return Launcher(launcher, lambda root, pipes: find_server(root, pipes, name, args, launcher))
