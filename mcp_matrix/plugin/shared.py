"""Work a pytest session does once, whichever process asks first (the plugin's plan and run)."""

from __future__ import annotations

import fcntl
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_matrix.core.jsontypes import JSON


class SharedWork:
    """Work done once a test session, whichever process asks first: in this process without
    pytest-xdist, else under a file lock in the directory the xdist controller made for the
    session, where every worker finds what the first one left (whatever the ``--dist`` mode)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._memory: dict[str, JSON] = {}

    def once(self, name: str, build: Callable[[], JSON]) -> Any:
        """``build()``'s value for ``name``, built now if no process has yet (JSON across workers)."""
        if self.directory is None:
            if name not in self._memory:
                self._memory[name] = build()
            return self._memory[name]
        done = self.directory / f"{name}.json"
        with open(self.directory / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not done.exists():
                value = build()
                part = done.with_suffix(".part")
                part.write_text(json.dumps(value), encoding="utf-8")
                part.replace(done)
        return json.loads(done.read_text(encoding="utf-8"))
