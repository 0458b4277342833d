"""Where commands write: output paths checked before any server starts, every stream escaped
and scrubbed (docs/security.md). The files themselves are ``mcp_matrix.core.outfiles``'s.

- ``check_output_paths``: ``--results``, ``--report FMT:FILE`` and ``-o`` are checked when the
  command starts (a directory, a FIFO, a missing or read-only folder is exit 2 naming the flag),
  not found out after a whole run.
- ``protect``: once a command knows its target's secrets, stdout and stderr go through ONE
  scrubber (``ScrubbingStream``), so no command (``discover --json``, ``replay --json``, a
  progress line) can print a secret a server echoed back. JSON output is scrubbed inside its
  strings only (``scrub_json``), so a secret such as ``true`` never breaks a literal.
- Lone surrogates (valid JSON, ``"\\ud800"``) are written as their escape, never a crash.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Iterator, Sequence
from typing import IO

from mcp_matrix.core.outfiles import ENCODING_ERRORS, check_writable
from mcp_matrix.core.text import redact
from mcp_matrix.report.writers import FORMATS
from mcp_matrix.targets.kinds import scrub_json

WRITES_RESULTS = ("run", "replay")  # elsewhere (report, check) a results file is an input


def named_paths(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    results = getattr(args, "results", None)
    if getattr(args, "command", None) in WRITES_RESULTS and isinstance(results, str):
        yield "--results", results
    reports = getattr(args, "report", None)
    for value in reports if isinstance(reports, list) else []:
        fmt, sep, path = str(value).partition(":")
        if sep and path and fmt in FORMATS:  # an unknown format is the error to report first
            yield "--report", path
    output = getattr(args, "output", None)
    if isinstance(output, str) and output != "-":
        yield "-o", output


def check_output_paths(args: argparse.Namespace) -> None:
    """Every output path the command was given can be written, or an ``InputError`` naming it."""
    for flag, path in named_paths(args):
        check_writable(path, flag)


def escape_surrogates(stream: IO[str]) -> None:
    """Make a text stream write lone surrogates as escapes instead of raising."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors=ENCODING_ERRORS)
        except (ValueError, io.UnsupportedOperation):
            pass


def scrub_text(text: str, secrets: Sequence[str]) -> str:
    """Plain text with every secret masked: ``mcp_matrix.core.text.redact``, the one masking."""
    return redact(text, secrets)


class ScrubbingStream(io.TextIOBase):
    """A text stream that scrubs secrets from whole lines before passing them on.

    Text is held until a newline or ``flush`` (rich flushes after every render), so a secret
    split across two ``write`` calls is still masked."""

    def __init__(self, inner: IO[str], secrets: Sequence[str], json_lines: bool = False) -> None:
        super().__init__()
        self.inner = inner
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.json_lines = json_lines
        self._held = ""

    def _scrub(self, text: str) -> str:
        if self.json_lines:  # at newlines only: splitlines() cuts a string at U+2028
            return "\n".join(scrub_json(line, self.secrets) for line in text.split("\n"))
        return scrub_text(text, self.secrets)

    def write(self, text: str) -> int:
        self._held += text
        if "\n" in self._held:
            ready, _, self._held = self._held.rpartition("\n")
            self.inner.write(self._scrub(ready + "\n"))
        return len(text)

    def flush(self) -> None:
        if self._held:
            held, self._held = self._held, ""
            self.inner.write(self._scrub(held))
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.inner, "errors", None)


def protect(secrets: Sequence[str], json_stdout: bool = False) -> None:
    """From now on, stdout and stderr of this command never show one of ``secrets``."""
    if not any(secrets):
        return
    for name, as_json in (("stdout", json_stdout), ("stderr", False)):
        current = getattr(sys, name)
        if isinstance(current, ScrubbingStream):
            current.flush()
            current.secrets = sorted({*current.secrets, *secrets}, key=len, reverse=True)
            continue
        setattr(sys, name, ScrubbingStream(current, secrets, json_lines=as_json))


def json_stdout(args: argparse.Namespace) -> bool:
    """Whether this command prints JSON on stdout (scrubbed inside strings, never around them)."""
    return (
        bool(getattr(args, "json", False))
        or getattr(args, "format", None) in ("json", "sarif")
        or (getattr(args, "command", None) == "snapshot" and not getattr(args, "output", None))
    )
