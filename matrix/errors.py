"""Errors of the tool or of the user's input (never findings about the server under test).

    MatrixError                 -- base; carries the exit code the CLI returns
    ├── InputError (exit 2)     -- a file or argument the user gave is wrong: says where and what was expected
    │   └── InputErrors         -- several such problems found at once (``errors``), one per line
    └── MeasureError (exit 3)   -- the target could not be measured at all (no snapshot could be taken)

Findings about the server (a crash, a timeout, garbage on stdout) are values in results,
never these exceptions; see matrix.wire.errors for the wire's typed problems.
"""

from __future__ import annotations

from collections.abc import Sequence

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
