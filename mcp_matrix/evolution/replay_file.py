"""``replay --results FILE``: one JSON line per replayed call, flushed as made; the report last.

The events are typed values (``mcp_matrix.core.events``: ``ReplayStarted``, ``ReplayCall``,
``ReplayFinished``) written by the generic writer every results event goes through (``to_json``)
and read back by ``read_replay_events``, each line checked against the published schema
(replay-events.schema.json) and typed once. The file is opened locked
(``mcp_matrix.core.outfiles.open_results``: a second replay on it stops at once) and every line
has the target's secrets masked inside its strings (``scrub_json``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

from mcp_matrix.core.errors import InputError
from mcp_matrix.core.events import EventError
from mcp_matrix.core.infiles import input_lines, open_input
from mcp_matrix.core.jsontypes import JSONObject
from mcp_matrix.core.outfiles import open_results
from mcp_matrix.core.replay_events import (
    ReplayEvent,
    ReplayFinished,
    ReplayStarted,
    replay_event_from_json,
)
from mcp_matrix.targets.kinds import Target, scrub_json


class ReplayResultsFile:
    """``--results``: one JSON line per replayed call, flushed as made; the report last."""

    def __init__(self, path: str, target: Target | None) -> None:
        self.handle = open_results(path)  # locked; closed in finish()
        self.lock = threading.Lock()
        self.secrets = sorted(
            {s for s in (target.secrets() if target else []) if s}, key=len, reverse=True
        )
        self._write(ReplayStarted())

    def _write(self, event: ReplayEvent) -> None:
        text = json.dumps(event.to_json(), ensure_ascii=False, default=str)
        line = scrub_json(text, self.secrets)
        with self.lock:
            if not self.handle.closed:
                self.handle.write(line + "\n")
                self.handle.flush()

    def __call__(self, event: ReplayEvent) -> None:
        self._write(event)

    def finish(self, report: JSONObject | None) -> None:
        """The report as the last line (none when the replay stopped on an error), then close."""
        if report is not None:
            self._write(ReplayFinished(report=report))
        with self.lock:
            self.handle.close()


def read_replay_events(path: str | Path) -> Iterator[ReplayEvent]:
    """The typed events of a ``replay --results`` file, a line at a time, each checked against
    the schema (an input error names the file, the line and the key); a cut last line (an
    interrupted replay) ends the events. Files of every version written are read alike."""
    p = Path(path)
    with open_input(p, "replay results file", "cannot read replay results") as handle:
        for number, line in input_lines(handle, p, "JSON lines"):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except (ValueError, RecursionError):
                if not line.endswith("\n"):  # only the last line lacks its newline
                    return
                raise InputError("not a JSON object", where=f"{p}:{number}") from None
            if not isinstance(data, dict):
                raise InputError("expected an object with an 'event' key", where=f"{p}:{number}")
            try:
                yield replay_event_from_json(data)
            except EventError as exc:
                raise InputError(str(exc), where=f"{p}:{number}") from None


__all__ = ["ReplayResultsFile", "read_replay_events"]
