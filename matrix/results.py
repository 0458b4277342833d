"""The results stream: JSON lines, one event per line, appended as they are made.

Writers read this (a finished, interrupted or merged run alike). Format
``mcp-matrix.results`` version 1, documented in docs/results.md. Secrets carried by the
target are scrubbed from every line before it is written.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator

from matrix.errors import InputError
from matrix.targets import scrub_json

FORMAT = "mcp-matrix.results"
VERSION = 1


class ResultsWriter:
    """Thread-safe JSON-lines sink; flushes every event so an interrupt loses nothing."""

    def __init__(self, stream: IO[str] | None, secrets: Iterable[str] = (), also: Callable[[dict], None] | None = None):
        self.stream = stream
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.also = also
        self.events: list[dict] = []
        self._lock = threading.Lock()

    def scrub(self, text: str) -> str:
        """JSON text with the secrets masked inside its strings (never inside numbers or literals)."""
        return scrub_json(text, self.secrets)

    def __call__(self, event: dict) -> None:
        line = self.scrub(json.dumps(event, ensure_ascii=False, default=str))
        clean = json.loads(line) if self.secrets else event
        with self._lock:
            self.events.append(clean)
            if self.stream is not None:
                self.stream.write(line + "\n")
                self.stream.flush()
        if self.also is not None:
            self.also(clean)


def read_events(path: str | Path) -> list[dict]:
    """Every event of a results file; a truncated last line (an interrupted run) is ignored."""
    return list(iter_events(path))


def iter_events(path: str | Path) -> Iterator[dict]:
    p = Path(path)
    try:
        handle = p.open(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read results: {exc.strerror}", where=str(p)) from None
    with handle:
        try:
            lines = handle.readlines()
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start}); expected JSON lines", where=str(p)) from None
    if not lines:
        raise InputError("the results file is empty; expected JSON lines starting with a run-started event", where=str(p))
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == len(lines) and not line.endswith("\n"):
                return  # the run was interrupted mid-write: keep everything before
            raise InputError(f"not a JSON object: {exc.msg}", where=f"{p}:{number}") from None
        except RecursionError:
            raise InputError("JSON nested too deeply to read; expected one event object a line", where=f"{p}:{number}") from None
        if not isinstance(event, dict) or "event" not in event:
            raise InputError("expected an object with an 'event' key", where=f"{p}:{number}")
        if number == 1 and (event.get("event") != "run-started" or event.get("format") != FORMAT):
            raise InputError(f"not an mcp-matrix results file: the first line must be a run-started event of format {FORMAT!r}", where=f"{p}:1")
        if number == 1 and event.get("version") != VERSION:
            raise InputError(f"results version {event.get('version')!r} is not supported; expected {VERSION}", where=f"{p}:1")
        yield event


def cells(events: Iterable[dict[str, Any]]) -> list[dict]:
    """Discovery and call events: the cells of the grid."""
    return [e for e in events if e.get("event") in ("discovery", "call")]
