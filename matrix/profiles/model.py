"""A loaded, resolved client profile (``extends`` already applied)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from matrix.evidence import Evidence, weakest


@dataclass(frozen=True)
class BehaviourUse:
    """One entry of a profile phase: a registered behaviour, its params and its evidence.

    ``id`` identifies the entry for ``extends`` (a child entry with the same id replaces the
    parent's in place); it defaults to the behaviour name. ``frequency`` is ``always`` or
    ``sometimes`` (the evidence calls it intermittent: the matrix tries both ways).
    ``declared_in`` is the profile file that wrote this entry.
    """

    name: str
    params: Mapping[str, Any]
    evidence: tuple[Evidence, ...]
    id: str = ""
    frequency: str = "always"
    declared_in: str = ""

    @property
    def weakest_evidence(self) -> str | None:
        return weakest(self.evidence)


@dataclass(frozen=True)
class Identity:
    client_info: Mapping[str, Any]
    protocol_version: str
    capabilities: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Profile:
    name: str
    client: str
    versions: str
    models: str  # which era / configuration of the client this profile models
    identity: Identity
    discovery: tuple[BehaviourUse, ...] = ()
    cache: tuple[BehaviourUse, ...] = ()
    call: tuple[BehaviourUse, ...] = ()
    result: tuple[BehaviourUse, ...] = ()
    extends: tuple[str, ...] = ()
    abstract: bool = False
    source: str = ""

    def phases(self) -> dict[str, tuple[BehaviourUse, ...]]:
        return {
            "discovery": self.discovery,
            "cache": self.cache,
            "call": self.call,
            "result": self.result,
        }

    @property
    def weakest_evidence(self) -> str | None:
        return weakest([e for uses in self.phases().values() for u in uses for e in u.evidence])
