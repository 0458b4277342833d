"""Errors of the tool or of the user's input (never findings about the server under test).

    MatrixError                 -- base; carries the exit code the CLI returns
    ├── InputError (exit 2)     -- a file or argument the user gave is wrong: says where and what was expected
    │   └── InputErrors         -- several such problems found at once (``errors``), one per line
    └── MeasureError (exit 3)   -- the target could not be measured at all (no snapshot could be taken)

Findings about the server (a crash, a timeout, garbage on stdout) are values in results,
never these exceptions; see mcp_matrix.wire.errors for the wire's typed problems.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Sequence
from pathlib import Path

from mcp_matrix import INT_DIGITS

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INPUT = 2
EXIT_UNMEASURABLE = 3


class MatrixError(Exception):
    """Base of the tool's own errors."""

    exit_code = EXIT_INPUT


class InputError(MatrixError):
    """A user-supplied file or argument is invalid.

    ``where`` names the file and, when known, the line or key path; the message says
    what was expected, so the user can fix it without reading a traceback.
    """

    exit_code = EXIT_INPUT

    def __init__(self, message: str, *, where: str = "") -> None:
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


class InputErrors(InputError):
    """One or more problems in the user's input, found and reported together.

    ``errors`` holds each as an ``InputError``; ``where`` and the first line of the message are
    the first problem's, the next lines are the others as ``FILE:LINE: key.path: message``.
    """

    def __init__(self, errors: Sequence[InputError]) -> None:
        self.errors = tuple(errors)
        first = self.errors[0]
        rest = "".join(f"\n{e}" for e in self.errors[1:])
        super().__init__(first.message + rest, where=first.where)


class MeasureError(MatrixError):
    """The target could not be measured (e.g. it never answered initialize)."""

    exit_code = EXIT_UNMEASURABLE


def did_you_mean(word: str, choices) -> str:
    """A ' (did you mean X?)' suffix for the closest valid name, or ''."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


_LONG_NUMBER = re.compile(rf"\d{{{INT_DIGITS + 1},}}")


def long_number_line(text: str) -> int | None:
    """The line of the first integer longer than we read (``mcp_matrix.INT_DIGITS``), or None.

    ``json.loads`` and YAML raise a bare ValueError for one; input readers say where it is."""
    match = _LONG_NUMBER.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


TOO_LONG_NUMBER = (
    f"holds an integer of more than {INT_DIGITS:,} digits, more than can be read safely"
)


def check_input_file(path: Path, noun: str = "file") -> None:
    """An input must be a regular file: a directory is a clear error, and a FIFO, socket or
    device would make reading wait for ever (it did: 14 commands hung on a FIFO)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # the reader says why it cannot open it
    if stat.S_ISDIR(mode):
        raise InputError(f"is a directory; expected a {noun}", where=str(path))
    if not stat.S_ISREG(mode):
        raise InputError(
            f"is not a regular file (a FIFO, socket or device); expected a {noun}", where=str(path)
        )
