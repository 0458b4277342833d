"""The gateway: the single place where a write record is validated and stored.

Rich tools and raw twins both call :meth:`Gateway.submit` with the whole record they
received. The record is validated against the current-version schema of its kind
(jsonschema, Draft 2020-12) and stored unchanged, or rejected with every problem
named; nothing is dropped, defaulted or coerced on the way (validation has a
single home, and it is here: docs/design.md#a-raw-twin-for-write-tools).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import schemas
from .backend import Backend
from .validation import schema_problems


@dataclass(frozen=True)
class Stored:
    """An accepted record: the backend row, ``row["stored"]`` is the record itself."""

    row: dict[str, Any]


@dataclass(frozen=True)
class Invalid:
    """A rejected record; ``problems`` are legible sentences, one per broken rule."""

    problems: list[str]


SubmitResult = Stored | Invalid


class Gateway:
    """Validates records against one schema version and stores the valid ones."""

    def __init__(self, backend: Backend, version: schemas.SchemaVersion) -> None:
        if version not in schemas.SCHEMA_VERSIONS:
            raise ValueError(f"unknown schema version {version!r}")
        self.backend = backend
        self.version = version
        self._schemas = {kind: schemas.record_schema(kind, version) for kind in schemas.KINDS}

    def schema(self, kind: str) -> dict[str, Any]:
        return self._schemas[kind]

    def problems(self, kind: str, record: Any) -> list[str]:
        where = f"the {kind} schema (version {self.version})"
        return schema_problems(self._schemas[kind], record, where=where)

    def submit(self, kind: str, record: Any, *, via: str) -> SubmitResult:
        """Validate ``record`` whole and store it unchanged if it is valid."""
        problems = self.problems(kind, record)
        if problems:
            return Invalid(problems)
        return Stored(self.backend.store(kind, self.version, via, record))

    def records(self, kind: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        return self.backend.records(kind, limit)
