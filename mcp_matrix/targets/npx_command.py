"""A ``--stdio`` server given as ``npx [-y] PKG ARGS`` or ``npm exec PKG``: which process npx
started, so the run's later sessions start it directly (``targets.launcher``).

Run as given, every session starts npx again: its own Node process, the npm CLI and a registry
check, about 1 s of CPU and 2-3 s of wall before the server's own start (measured on
``@modelcontextprotocol/server-memory``: 1.35 s CPU and 3.6 s wall through npx, 0.40 s and
0.8 s for the process npx ends up running).

The process npx started is the one descendant of npx holding the session's stdin and stdout
pipes (npm runs it under ``sh -c``), which is not npm or a shell, and is the package's bin npm
ran (``npm_lifecycle_script``), not something a script of the package started after set-up of
its own. Its argv (that must end with the command's ARGS and name the executable it runs),
environment (npx's ``npm_*`` variables and ``PATH`` included) and directory are kept.
Recognised strictly: ``npx``, or ``npm exec`` / ``npm x``, then only ``-y``, ``--yes``,
``-p P``, ``--package P`` or ``--package=P`` before the package (``npm exec`` may put ``--``
before it, and without it no argument may start with ``-``, which npm would take as its own);
anything else runs as given.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence

from mcp_matrix.targets.launcher import (
    SHELLS,
    Launcher,
    Resolved,
    children,
    holds,
    process_argv,
    resolve,
)
from mcp_matrix.targets.python_command import find

__all__ = ["Resolved", "find_server", "npx_args", "npx_launcher", "npx_refused"]

_NPM_MARKS = ("npm-cli.js", "npx-cli.js")
_NPM_FLAGS = ("-y", "--yes")
_NPM_VALUED = ("-p", "--package")


def npx_args(command: Sequence[str]) -> tuple[str, ...] | None:
    """The ARGS after the package of ``npx [-y|--yes] [-p P|--package P|--package=P]... PKG
    ARGS`` or ``npm exec|x [the same flags] [--] PKG ARGS``, or None when ``command`` is not that
    shape (it then runs as given every session). Without ``--``, npm would read any ``-`` word
    after PKG as its own flag: such a command is not recognised."""
    return _parse(command)[0]


def npx_refused(command: Sequence[str]) -> str | None:
    """Why npx or npm exec command ``command`` is not recognised and runs as given every
    session (the word, for ``--verbose``); None when it is recognised or is no such command."""
    return _parse(command)[1] or None


def _parse(command: Sequence[str]) -> tuple[tuple[str, ...] | None, str]:
    """``npx_args`` and, when it is None for an npx or npm exec command, why ("" otherwise)."""
    command = list(command)  # a Target's is a tuple
    if not command:
        return None, ""
    if os.path.basename(command[0]) == "npx":
        i, npm = 1, False
    elif os.path.basename(command[0]) == "npm" and command[1:2] in (["exec"], ["x"]):
        i, npm = 2, True
    else:
        return None, ""
    while i < len(command) and command[i].startswith("-") and command[i] != "--":
        flag = command[i]
        if flag in _NPM_FLAGS or flag.startswith("--package="):
            i += 1
        elif flag in _NPM_VALUED and i + 1 < len(command):
            i += 2
        else:
            return None, f"its option {flag!r} (only -y, --yes and -p P, --package P are)"
    dashes = npm and command[i : i + 1] == ["--"]
    if npm and dashes:
        i += 1
    if i >= len(command):
        return None, "no package after its options"
    if not npm and command[i] == "--":
        return None, "'--' before the package (npx PKG ARGS is)"
    args = tuple(command[i + 1 :])
    dashed = [a for a in args if a.startswith("-")]
    if npm and not dashes and dashed:
        return (
            None,
            f"{dashed[0]!r} after the package without '--' before it (npm takes it as its own)",
        )
    return args, ""


def _server_pid(root: int, pipes: tuple[int, int]) -> int | str:
    """The one process npx (``root``) started on the session's pipes: a child of npx, or of
    the ``sh -c`` npm runs it under; or why there is not exactly one."""
    tree = children()
    holders = [p for p in tree.get(root, []) if holds(p, pipes)]
    if len(holders) == 1 and os.path.basename(os.readlink(f"/proc/{holders[0]}/exe")) in SHELLS:
        if process_argv(holders[0])[1:2] != ["-c"]:
            return "a shell script holds the session's pipes"
        holders = [p for p in tree.get(holders[0], []) if holds(p, pipes)]
    if len(holders) != 1:
        return (
            f"{len(holders)} processes under npx hold the session's pipes"
            if holders
            else "no process under npx holds the session's pipes (the server ended?)"
        )
    return holders[0]


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
    try:
        pid = _server_pid(root, pipes)
        if isinstance(pid, str):
            return pid
        name, argv = os.path.basename(os.readlink(f"/proc/{pid}/exe")), process_argv(pid)
    except OSError as exc:
        return f"its process could not be read ({exc.strerror or exc})"
    if name in ("npm", "npx") or any(m in a for a in argv for m in _NPM_MARKS):
        return f"npx runs {name}, not a server of its own"
    return resolve(pid, args, "npx", _runs_the_bin)


def npx_launcher(command: Sequence[str]) -> Launcher | None:
    """``command`` as an npx launcher (``npx_args``), or None: it runs as given every session."""
    args = npx_args(command)
    if args is None:
        return None
    return Launcher("npx", lambda root, pipes: find_server(root, pipes, args))
