"""SQLite storage for the memory server.

The tool handlers receive a :class:`Backend` instead of opening the database
themselves, so a test can pass a spy and prove that a rejected call made no
backend call at all. :class:`MemoryBackend` is the real implementation (stdlib
``sqlite3``). Identity strings are stored exactly as given.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id TEXT NOT NULL,
    content TEXT NOT NULL,
    tags TEXT NOT NULL,
    importance REAL NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id TEXT NOT NULL,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    state TEXT NOT NULL,
    saved_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reflections (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id TEXT NOT NULL,
    action TEXT NOT NULL,
    text TEXT,
    target TEXT,
    confidence REAL NOT NULL,
    summary TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


class Backend(Protocol):
    """What the tool handlers need from storage."""

    def store(
        self, agent_id: str, content: str, tags: list[str], importance: float
    ) -> dict[str, Any]: ...

    def recall(
        self, agent_id: str, query: str | None, tags: list[str], limit: int
    ) -> list[dict[str, Any]]: ...

    def forget(self, agent_id: str, memory_id: int) -> bool: ...

    def add_reflection(
        self,
        agent_id: str,
        action: str,
        text: str | None,
        target: str | None,
        confidence: float,
        summary: str,
    ) -> int: ...

    def save_checkpoint(
        self, agent_id: str, name: str, state: dict[str, Any]
    ) -> dict[str, Any]: ...

    def load_checkpoint(self, agent_id: str, name: str) -> dict[str, Any] | None: ...

    def stats(self) -> dict[str, int]: ...


# The default store (``sqlite3``'s name for it): a file in a temporary directory cost a forked
# server about 4 ms of CPU (the directory, the file, a journal created and removed per write) and
# stayed behind whenever its process was killed.
IN_MEMORY = ":memory:"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class MemoryBackend:
    """Memories, checkpoints and reflections in one SQLite database (a file, or ``IN_MEMORY``),
    namespaced by agent_id."""

    def __init__(self, path: str | Path) -> None:
        # One connection, used from the event loop thread; statements never await.
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        # a reference server's store survives its process, not a power cut: no fsync per commit
        # (it cost a forked server about 2 ms of CPU and 60 ms of wall at its start)
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_SCHEMA)
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    @staticmethod
    def _memory(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "id": row["id"],
            "content": row["content"],
            "tags": json.loads(row["tags"]),
            "importance": row["importance"],
            "created_at": row["created_at"],
        }

    def store(
        self, agent_id: str, content: str, tags: list[str], importance: float
    ) -> dict[str, Any]:
        with self._db:
            cur = self._db.execute(
                "INSERT INTO memories (agent_id, content, tags, importance, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (agent_id, content, json.dumps(tags), importance, _now()),
            )
        row = self._db.execute("SELECT * FROM memories WHERE id = ?", (cur.lastrowid,)).fetchone()
        return self._memory(row)

    def recall(
        self, agent_id: str, query: str | None, tags: list[str], limit: int
    ) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT * FROM memories WHERE agent_id = ? ORDER BY importance DESC, id DESC",
            (agent_id,),
        ).fetchall()
        found = []
        for row in rows:
            memory = self._memory(row)
            if query is not None and query.casefold() not in memory["content"].casefold():
                continue
            if not set(tags) <= set(memory["tags"]):
                continue
            found.append(memory)
            if len(found) >= limit:
                break
        return found

    def forget(self, agent_id: str, memory_id: int) -> bool:
        with self._db:
            cur = self._db.execute(
                "DELETE FROM memories WHERE agent_id = ? AND id = ?", (agent_id, memory_id)
            )
        return cur.rowcount > 0

    def add_reflection(
        self,
        agent_id: str,
        action: str,
        text: str | None,
        target: str | None,
        confidence: float,
        summary: str,
    ) -> int:
        with self._db:
            cur = self._db.execute(
                "INSERT INTO reflections"
                " (agent_id, action, text, target, confidence, summary, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (agent_id, action, text, target, confidence, summary, _now()),
            )
        return int(cur.lastrowid or 0)

    def save_checkpoint(self, agent_id: str, name: str, state: dict[str, Any]) -> dict[str, Any]:
        with self._db:
            (latest,) = self._db.execute(
                "SELECT COALESCE(MAX(version), 0) FROM checkpoints WHERE agent_id = ? AND name = ?",
                (agent_id, name),
            ).fetchone()
            saved_at = _now()
            self._db.execute(
                "INSERT INTO checkpoints (agent_id, name, version, state, saved_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (agent_id, name, latest + 1, json.dumps(state), saved_at),
            )
        return {"agent_id": agent_id, "name": name, "version": latest + 1, "saved_at": saved_at}

    def load_checkpoint(self, agent_id: str, name: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT * FROM checkpoints WHERE agent_id = ? AND name = ?"
            " ORDER BY version DESC LIMIT 1",
            (agent_id, name),
        ).fetchone()
        if row is None:
            return None
        return {
            "agent_id": row["agent_id"],
            "name": row["name"],
            "version": row["version"],
            "saved_at": row["saved_at"],
            "state": json.loads(row["state"]),
        }

    def stats(self) -> dict[str, int]:
        def count(sql: str) -> int:
            return int(self._db.execute(sql).fetchone()[0])

        return {
            "agents": count(
                "SELECT COUNT(*) FROM (SELECT agent_id FROM memories UNION"
                " SELECT agent_id FROM checkpoints UNION SELECT agent_id FROM reflections)"
            ),
            "memories": count("SELECT COUNT(*) FROM memories"),
            "checkpoints": count("SELECT COUNT(*) FROM checkpoints"),
            "reflections": count("SELECT COUNT(*) FROM reflections"),
        }
