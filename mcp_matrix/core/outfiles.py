"""The files a run writes: a path checked before any server starts, the results file locked.

- ``check_writable``: a directory, a FIFO, a device other than ``/dev/null`` or a terminal, a
  missing or read-only folder is an ``InputError`` naming the flag, found when the command
  starts, not after a whole run.
- ``refuse_overwriting``: an output path that is an input of the same command (the same file,
  also through a symbolic or hard link) is an ``InputError`` before anything is read or written
  (``--cases c.yaml --results c.yaml`` emptied the cases file).
- ``open_results``: the results file is opened without truncating, locked exclusively
  (``flock``), then truncated (a regular file only: ``/dev/null`` cannot be): a second run on
  the same file stops at once instead of interleaving lines. Lone surrogates (valid JSON,
  ``"\\ud800"``) are written as their escape. A write that fails (a full disk) is recorded, not
  raised in the middle of a run: ``write_failures`` lists them and the CLI exits 2 naming the file.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mcp_matrix.core.errors import InputError

ENCODING_ERRORS = "backslashreplace"  # a lone surrogate becomes \ud800: its JSON escape


_STREAMS = ("/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/")


def _stream(path: str) -> bool:
    """/dev/stdout and friends: a pipe or terminal the user named on purpose."""
    return path.startswith(_STREAMS)


def _device_ok(path: str) -> bool:
    """A character device that takes any output: ``/dev/null`` (discard it) or a terminal."""
    real = os.path.realpath(path)
    return real == os.devnull or real == "/dev/tty" or real.startswith(("/dev/pts/", "/dev/tty"))


def check_writable(path: str, flag: str) -> None:
    if _stream(path):
        return
    p = Path(path)
    where = f"{flag} {path}"
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise InputError(f"cannot use this path: {exc.strerror}", where=where) from None
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
        if stat.S_ISCHR(mode) and _device_ok(path):
            return
        raise InputError(
            "is a device; give a file name, /dev/null to discard the output, or /dev/stdout",
            where=where,
        )
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
    """The results file, exclusively locked and then emptied (a regular file; a device such as
    ``/dev/null`` is written as it is); closing it releases the lock."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", where=f"{flag} {path}") from None
    os.set_blocking(fd, True)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # /dev/null, a terminal: nothing to lock or empty
        return _RecordingFile(io.FileIO(fd, "w"), f"{flag} {path}")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise InputError(
            "another mcp-matrix run is writing this file; give each run its own",
            where=f"{flag} {path}",
        ) from None
    os.ftruncate(fd, 0)
    return _RecordingFile(io.FileIO(fd, "w"), f"{flag} {path}")


@dataclass(frozen=True)
class WriteFailure:
    """An output that could not be written: where (the flag and path) and the system's reason."""

    where: str
    reason: str


_failures: list[WriteFailure] = []


def write_failures() -> list[WriteFailure]:
    """The outputs of this process that could not be written (results files), first first."""
    return list(_failures)


class _RecordingFile(io.TextIOWrapper):
    """The results file: a write that fails (``ENOSPC``, ``EIO``) is recorded once and the
    output dropped from then on, so the run still ends, with its terminal grid and exit code."""

    def __init__(self, raw: io.FileIO, where: str) -> None:
        super().__init__(raw, encoding="utf-8", errors=ENCODING_ERRORS, newline="\n")
        self._where = where
        self._failed = False

    def _fail(self, exc: OSError) -> None:
        if not self._failed:
            self._failed = True
            _failures.append(WriteFailure(self._where, exc.strerror or str(exc)))

    def write(self, text: str) -> int:
        if self._failed:
            return len(text)
        try:
            return super().write(text)
        except OSError as exc:
            self._fail(exc)
            return len(text)

    def flush(self) -> None:
        if self._failed:
            return
        try:
            super().flush()
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        try:
            super().close()
        except OSError as exc:  # the last buffered bytes could not be written
            self._fail(exc)
            with contextlib.suppress(OSError):
                self.buffer.close()


def refuse_overwriting(
    outputs: Iterable[tuple[str, str]], inputs: Iterable[tuple[str, str]]
) -> None:
    """An ``InputError`` when an output path (``(flag, path)``) is the same file as an input of
    the command (compared by device and inode, so a symbolic or hard link to it counts too):
    writing it would destroy what the command is about to read."""
    existing = []
    for flag, path in outputs:
        try:
            st = os.stat(path)
        except OSError:
            continue  # a new file cannot be an input
        if stat.S_ISREG(st.st_mode):
            existing.append((flag, path, (st.st_dev, st.st_ino)))
    if not existing:
        return
    for name, given in inputs:
        try:
            st = os.stat(given)
        except (OSError, ValueError):
            continue
        for flag, path, key in existing:
            if (st.st_dev, st.st_ino) == key:
                raise InputError(
                    f"is also an input of this command ({name}); writing it would destroy it. "
                    "Give the output another name",
                    where=f"{flag} {path}",
                )


__all__ = [
    "ENCODING_ERRORS",
    "WriteFailure",
    "check_writable",
    "open_results",
    "refuse_overwriting",
    "write_failures",
]
