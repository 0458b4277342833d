"""Opening a user's input file (a snapshot, a results stream, a replay's results, recorded calls):
one place where a file that is missing, unreadable, not a regular file or not UTF-8 text becomes
an ``InputError`` naming the path (exit code 2, ``EXIT_INPUT``: README.md's exit codes), never
a traceback. Each
reader keeps its own words: the noun of ``check_input_file``, what it cannot read, what it
expected instead.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, TextIO

from mcp_matrix.core.errors import TOO_LONG_NUMBER, InputError, check_input_file, long_number_line
from mcp_matrix.core.jsontypes import JSON


def _unreadable(exc: OSError, unreadable: str, path: Path) -> InputError:
    return InputError(f"{unreadable}: {exc.strerror}", where=str(path))


def not_utf8(
    exc: UnicodeDecodeError, path: Path, expected: str, line: int | None = None
) -> InputError:
    """A file that is not UTF-8 text, said with the byte where it stops being so: in the file, or
    in line ``line`` when it was decoded a line at a time (``line_text``)."""
    if line is None:
        at, where = f"byte {exc.start}", str(path)
    else:
        at, where = f"byte {exc.start} of the line", f"{path}:{line}"
    return InputError(f"not UTF-8 text ({exc.reason} at {at}); expected {expected}", where=where)


def line_text(raw: bytes, number: int, path: Path, expected: str) -> str | None:
    """Line ``number`` of an ``open_input_bytes`` file as text; None for a last line cut inside
    a character (not the first, no newline at its end: its writer was interrupted, and a reader
    keeps what came before); other bytes that are not UTF-8 are ``not_utf8`` at that line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if number > 1 and not raw.endswith(b"\n"):
            return None
        raise not_utf8(exc, path, expected, number) from None


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


def document_version(
    doc: object, fmt: str, readable: tuple[int, ...], noun: str, where: str
) -> tuple[Mapping[str, object], int]:
    """One of our documents read back (``fmt``: its ``format``) and its version, one we can
    read; else an InputError saying what it is not (``noun``: "report", "discovery")."""
    if not isinstance(doc, Mapping) or doc.get("format") != fmt:
        raise InputError(f"not an {fmt} document", where=where)
    version = doc.get("version")
    if version not in readable:
        raise InputError(
            f"{noun} version {version!r} is not supported; expected one of {list(readable)}",
            where=where,
        )
    return doc, version


class UnwritableNumber(ValueError):
    """``NaN`` or ``Infinity`` (not JSON, though Python's reader takes them), or a number beyond
    a double's range (``1e999``, read as Infinity): kept, either is written back as ``NaN`` or
    ``Infinity`` and makes every JSON output of ours invalid. The wire refuses them from a
    server the same way (``mcp_matrix.wire.transport.NotJsonNumber``; the wire imports nothing
    of ours, so the two cannot share one reader)."""

    def __init__(self, word: str, valid: bool) -> None:
        if valid:
            said = f"holds the number {word[:40]}, beyond a double's range (read as Infinity)"
        else:
            said = f"holds {word}, which is not a JSON number (RFC 8259 section 6)"
        super().__init__(f"{said}: no JSON output could hold it")
        self.word = word


def _not_json(word: str) -> float:
    raise UnwritableNumber(word, valid=False)


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise UnwritableNumber(text, valid=True)
    return value


def strict_json(text: str | bytes) -> JSON:
    """``json.loads`` refusing what no JSON output can hold: ``UnwritableNumber`` for ``NaN``,
    ``Infinity`` or ``1e999`` (other problems as ``json.loads`` raises them). Bytes that
    ``json.loads`` would read as UTF-8 (a recorded-calls line) are decoded as it decodes them
    and read by the decoder made once; others (a BOM, UTF-16/32, bad UTF-8) go to it as before."""
    if isinstance(text, bytes) and json.detect_encoding(text) == "utf-8":
        try:
            text = text.decode("utf-8", "surrogatepass")  # json.loads's own decoding
        except UnicodeDecodeError:
            pass  # json.loads raises it, as before
    if isinstance(text, str) and not text.startswith("\ufeff"):  # json.loads refuses a BOM
        return _STRICT.decode(text)
    return json.loads(text, parse_constant=_not_json, parse_float=_finite)  # bytes: as it decodes


# Made once: json.loads with hooks builds a decoder and its scanner per call (per line of a
# results file), which made reading it slower than with no hook at all.
_STRICT = json.JSONDecoder(parse_constant=_not_json, parse_float=_finite)


# A string (skipped) or a number or constant: where a word ``UnwritableNumber`` names stands.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN|-?\d[\d.eE+-]*)')


def number_line(text: str, word: str) -> int | None:
    """The line of ``text`` where the number or constant ``word`` first stands outside a string."""
    for match in _TOKEN.finditer(text):
        if match.group(1) == word:
            return text.count("\n", 0, match.start()) + 1
    return None


def parse_json(text: str | bytes, path: str | Path, line: int | None = None) -> JSON:
    """``text`` as JSON, a problem an InputError at ``path:line`` (``line`` None: ``text`` is the
    whole file, and the error names the line it is on where JSON says)."""

    def at(found: int) -> str:
        return f"{path}:{line if line is not None else found}"

    try:
        return strict_json(text)
    except UnwritableNumber as exc:
        found = number_line(text, exc.word) if isinstance(text, str) and line is None else None
        raise InputError(str(exc), where=at(found or 1)) from None
    except UnicodeDecodeError as exc:  # bytes of one line (a whole file is read as text)
        raise InputError(f"not UTF-8 text: {exc.reason}", where=at(1)) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg} (column {exc.colno})", where=at(exc.lineno)
        ) from None
    except ValueError:  # an integer over mcp_matrix.INT_DIGITS digits
        found = long_number_line(text) if isinstance(text, str) and line is None else None
        raise InputError(TOO_LONG_NUMBER, where=at(found or 1)) from None
    except RecursionError:
        where = str(path) if line is None else at(line)
        raise InputError("JSON nested too deeply to read", where=where) from None


__all__ = [
    "UnwritableNumber",
    "document_version",
    "input_lines",
    "line_text",
    "not_utf8",
    "open_input",
    "open_input_bytes",
    "parse_json",
    "read_input",
    "strict_json",
]
