"""Opening a user's input file (a snapshot, a results stream, a replay's results, recorded calls):
one place where a file that is missing, unreadable, not a regular file or not UTF-8 text becomes
an ``InputError`` naming the path (exit code 2, ``EXIT_INPUT``: README.md's exit codes), never
a traceback. Each
reader keeps its own words: the noun of ``check_input_file``, what it cannot read, what it
expected instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from mcp_matrix.core.errors import InputError, check_input_file


def _unreadable(exc: OSError, unreadable: str, path: Path) -> InputError:
    return InputError(f"{unreadable}: {exc.strerror}", where=str(path))


def not_utf8(exc: UnicodeDecodeError, path: Path, expected: str) -> InputError:
    """A file that is not UTF-8 text, said with the byte where it stops being so."""
    return InputError(
        f"not UTF-8 text ({exc.reason} at byte {exc.start}); expected {expected}", where=str(path)
    )


def open_input(path: Path, noun: str, unreadable: str) -> TextIO:
    """``path`` opened as UTF-8 text once it is a regular file; ``unreadable``: the words before
    the system's reason when it cannot be opened ("cannot read results")."""
    check_input_file(path, noun)
    try:
        return path.open(encoding="utf-8")
    except OSError as exc:
        raise _unreadable(exc, unreadable, path) from None


def open_input_bytes(path: Path, noun: str, unreadable: str) -> BinaryIO:
    """``open_input`` for a reader that decodes each line itself (recorded calls)."""
    check_input_file(path, noun)
    try:
        return path.open("rb")
    except OSError as exc:
        raise _unreadable(exc, unreadable, path) from None


def read_input(path: Path, noun: str, unreadable: str, expected: str) -> str:
    """The whole text of ``path`` (``open_input``'s errors; not UTF-8: ``not_utf8``)."""
    check_input_file(path, noun)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise _unreadable(exc, unreadable, path) from None
    except UnicodeDecodeError as exc:
        raise not_utf8(exc, path, expected) from None


def input_lines(handle: TextIO, path: Path, expected: str) -> Iterator[tuple[int, str]]:
    """The numbered lines of an ``open_input`` file, read one at a time; bytes that are not
    UTF-8 are ``not_utf8``."""
    lines = enumerate(handle, 1)
    while True:
        try:
            number, line = next(lines)
        except StopIteration:
            return
        except UnicodeDecodeError as exc:
            raise not_utf8(exc, path, expected) from None
        yield number, line


__all__ = ["input_lines", "not_utf8", "open_input", "open_input_bytes", "read_input"]
