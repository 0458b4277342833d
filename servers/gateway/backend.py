"""SQLite storage for the gateway: one table of records, stored exactly as accepted.

The record is kept as its JSON text, so reading it back returns the same object
(key order, integers versus floats, nested values) that the gateway accepted.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    via TEXT NOT NULL,
    record TEXT NOT NULL,
    stored_at TEXT NOT NULL
);
"""


class Backend(Protocol):
    """What the gateway needs from storage."""

    def store(
        self, kind: str, schema_version: int, via: str, record: dict[str, Any]
    ) -> dict[str, Any]: ...

    def records(self, kind: str | None, limit: int) -> list[dict[str, Any]]: ...


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class GatewayBackend:
    """Accepted records in one SQLite file, oldest first."""

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
    def _row(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "id": row["id"],
            "kind": row["kind"],
            "schema_version": row["schema_version"],
            "via": row["via"],
            "stored_at": row["stored_at"],
            "stored": json.loads(row["record"]),
        }

    def store(
        self, kind: str, schema_version: int, via: str, record: dict[str, Any]
    ) -> dict[str, Any]:
        with self._db:
            cur = self._db.execute(
                "INSERT INTO records (kind, schema_version, via, record, stored_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (kind, schema_version, via, json.dumps(record, ensure_ascii=False), _now()),
            )
        row = self._db.execute("SELECT * FROM records WHERE id = ?", (cur.lastrowid,)).fetchone()
        return self._row(row)

    def records(self, kind: str | None, limit: int) -> list[dict[str, Any]]:
        if kind is None:
            rows = self._db.execute("SELECT * FROM records ORDER BY id LIMIT ?", (limit,))
        else:
            rows = self._db.execute(
                "SELECT * FROM records WHERE kind = ? ORDER BY id LIMIT ?", (kind, limit)
            )
        return [self._row(row) for row in rows.fetchall()]
