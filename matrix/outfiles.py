"""The files a run writes: a path checked before any server starts, the results file locked.

- ``check_writable``: a directory, a FIFO, a missing or read-only folder is an ``InputError``
  naming the flag, found when the command starts, not after a whole run.
- ``open_results``: the results file is opened without truncating, locked exclusively
  (``flock``), then truncated: a second run on the same file stops at once instead of
  interleaving lines. Lone surrogates (valid JSON, ``"\\ud800"``) are written as their escape.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path
from typing import IO

from matrix.errors import InputError

ENCODING_ERRORS = "backslashreplace"  # a lone surrogate becomes \ud800: its JSON escape


def _special(path: str) -> bool:
    """/dev/stdout and friends: a pipe or terminal the user named on purpose."""
    return path.startswith(("/dev/", "/proc/self/fd/"))


def check_writable(path: str, flag: str) -> None:
    if _special(path):
        return
    p = Path(path)
    where = f"{flag} {path}"
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise InputError(f"cannot use this path: {exc.strerror}", where=where) from None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise InputError("is a directory; give a file name", where=where)
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            raise InputError(
                "is a FIFO or socket, not a file (writing would wait for a reader)", where=where
            )
        if not os.access(p, os.W_OK):
            raise InputError("is not writable", where=where)
        return
    folder = p.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # missing folders are created; the first existing one must allow it
    if not folder.is_dir():
        raise InputError(f"{folder} is not a folder", where=where)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"the folder {folder} is not writable", where=where)


def open_results(path: str, flag: str = "--results") -> IO[str]:
    """The results file, exclusively locked and then emptied; closing it releases the lock."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", where=f"{flag} {path}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise InputError(
            "another mcp-matrix run is writing this file; give each run its own",
            where=f"{flag} {path}",
        ) from None
    os.set_blocking(fd, True)
    os.ftruncate(fd, 0)
    return os.fdopen(fd, "w", encoding="utf-8", errors=ENCODING_ERRORS, newline="\n")


__all__ = ["ENCODING_ERRORS", "check_writable", "open_results"]
