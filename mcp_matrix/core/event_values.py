"""The values inside the results stream's events, as frozen values (results.schema.json ``$defs``).

Findings, mutations, evidence, violations, variants and listed profiles, each a ``JsonRecord``
(``mcp_matrix.core.json_record``): read and written by the same generic code as the events
(``mcp_matrix.core.events``) that hold them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import ClassVar

from mcp_matrix.core.evidence import Evidence
from mcp_matrix.core.json_record import OMIT, JsonRecord
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding


@dataclass(frozen=True, slots=True)
class CellEvidence(JsonRecord):
    """Where a behaviour involved in a cell comes from (core.evidence.Evidence as written)."""

    level: str
    source: str | None = field(default=None, metadata=OMIT)
    note: str | None = field(default=None, metadata=OMIT)
    checked: str | None = field(default=None, metadata=OMIT)

    @classmethod
    def of(cls, e: Evidence) -> CellEvidence:
        return cls(e.level, e.source, e.note, e.checked)


@dataclass(frozen=True, slots=True)
class CellFinding(JsonRecord):
    """One thing a client does to a tool (core.model.Finding as written): a key the file lacks
    is None here (a reader takes None as the key's default: "", false)."""

    code: str
    message: str
    pointer: str | None = field(default=None, metadata=OMIT)
    lost: bool | None = field(default=None, metadata=OMIT)
    materiality: str | None = field(default=None, metadata=OMIT)
    blast_radius: str | None = field(default=None, metadata=OMIT)
    behaviour: str | None = field(default=None, metadata=OMIT)
    evidence: tuple[CellEvidence, ...] | None = field(default=None, metadata=OMIT)
    culprit: str | None = field(default=None, metadata=OMIT)

    @classmethod
    def of(cls, f: Finding) -> CellFinding:
        return _cell_finding(f)


@functools.lru_cache(maxsize=1 << 16)
def _cell_finding(f: Finding) -> CellFinding:
    """One typed finding per distinct finding: discovery copies one finding to every tool a
    list-level failure takes down, and building a frozen value per cell cost 3x the cell."""
    return CellFinding(
        f.code,
        f.message,
        f.pointer,
        f.lost,
        f.materiality,
        f.blast_radius,
        f.behaviour,
        tuple(CellEvidence.of(e) for e in f.evidence),
        f.culprit or None,
    )


@dataclass(frozen=True, slots=True)
class CellMutation(JsonRecord):
    """One difference between the intended and the wire arguments (core.model.Mutation)."""

    kind: str
    pointer: str
    before: JSON = None
    after: JSON = None


@dataclass(frozen=True, slots=True)
class CellViolation(JsonRecord):
    """One reason the listed inputSchema refuses the call sent (behaviours.validation.Violation)."""

    validator: str
    path: tuple[str | int, ...]
    message: str
    HEAD: ClassVar[tuple[str, ...]] = (
        "validator",
        "validator_value",
        "path",
        "schema_path",
        "instance",
        "names",
        "message",
    )
    validator_value: JSON = None
    schema_path: tuple[str | int, ...] | None = field(default=None, metadata=OMIT)
    instance: JSON = None
    names: tuple[str, ...] | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True, slots=True)
class CellVariant(JsonRecord):
    """One way a client sometimes sends a call, and its verdict."""

    verdict: str
    sometimes: tuple[str, ...] | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True, slots=True)
class ListedProfile(JsonRecord):
    """A profile as the run-started event lists it (``run`` lists every key, ``discover`` the
    first three and ``required_by_default``; a key not listed stays absent)."""

    name: str
    client: str | None = field(default=None, metadata=OMIT)
    versions: str | None = field(default=None, metadata=OMIT)
    models: str | None = field(default=None, metadata=OMIT)
    # null only for a profile citing no evidence at all (none bundled): written as absent
    weakest_evidence: str | None = field(default=None, metadata=OMIT)
    required_by_default: bool | None = field(default=None, metadata=OMIT)
