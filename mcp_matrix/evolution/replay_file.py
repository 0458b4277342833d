"""``replay --results FILE``: one JSON line per replayed call, flushed as made; the report last.

The file is opened locked (``mcp_matrix.core.outfiles.open_results``: a second replay on it stops at
once) and every line has the target's secrets masked inside its strings (``scrub_json``).
"""

from __future__ import annotations

import json
import threading

from mcp_matrix.core.outfiles import open_results
from mcp_matrix.evolution.replay import FORMAT, VERSION
from mcp_matrix.targets.kinds import Target, scrub_json


class ReplayResultsFile:
    """``--results``: one JSON line per replayed call, flushed as made; the report last."""

    def __init__(self, path: str, target: Target | None) -> None:
        self.handle = open_results(path)  # locked; closed in finish()
        self.lock = threading.Lock()
        self.secrets = sorted(
            {s for s in (target.secrets() if target else []) if s}, key=len, reverse=True
        )
        self._write({"event": "replay-started", "format": FORMAT, "version": VERSION})

    def _write(self, event: dict) -> None:
        line = scrub_json(json.dumps(event, ensure_ascii=False, default=str), self.secrets)
        with self.lock:
            if not self.handle.closed:
                self.handle.write(line + "\n")
                self.handle.flush()

    def __call__(self, event: dict) -> None:
        self._write(event)

    def finish(self, report: dict | None) -> None:
        """The report as the last line (none when the replay stopped on an error), then close."""
        if report is not None:
            self._write({"event": "replay-finished", "report": report})
        with self.lock:
            self.handle.close()


__all__ = ["ReplayResultsFile"]
