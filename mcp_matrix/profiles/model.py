"""A loaded, resolved client profile (``extends`` already applied)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.core.evidence import Evidence, weakest
from mcp_matrix.core.jsontypes import JSON


@dataclass(frozen=True)
class BehaviourUse:
    """One entry of a profile phase: a registered behaviour, its params and its evidence.

    ``id`` identifies the entry for ``extends`` (a child entry with the same id replaces the
    parent's in place); it defaults to the behaviour name. ``frequency`` is ``always`` or
    ``sometimes`` (the evidence calls it intermittent: the matrix tries both ways).
    ``declared_in`` is the profile file that wrote this entry. ``provider``: a rule of the model
    API the client sends the tools to (it judges the request the client built, so discovery runs
    it after every rule of the client's own: ``mcp_matrix.simulate.discovery.sending_order``).
    """

    name: str
    params: Mapping[str, Any]
    evidence: tuple[Evidence, ...]
    id: str = ""
    frequency: str = "always"
    declared_in: str = ""
    provider: bool = False

    @property
    def weakest_evidence(self) -> str | None:
        return weakest(self.evidence)


@dataclass(frozen=True)
class Identity:
    client_info: Mapping[str, JSON]
    protocol_version: str
    capabilities: Mapping[str, JSON] = field(default_factory=dict)


FALLBACKS = ("initialize-only", "discover-then-initialize", "discover-only")


@dataclass(frozen=True)
class ProfileHandshake:
    """How the client opens a session, per protocol era (the profile's ``handshake`` section).

    ``fallback``: ``initialize-only`` (handshake era only), ``discover-then-initialize``
    (``server/discover`` first, ``initialize`` when the answer is not a modern server), or
    ``discover-only`` (2026-07-28 only). ``modern_versions`` are the stateless versions it
    sends in ``_meta``, in the order tried; the ``initialize`` version is
    ``identity.protocolVersion``. ``accepts``: the negotiated handshake versions it goes on
    with (any other answer ends the session). ``initialize_after_discover``: it sends
    ``initialize`` even after a successful discover. ``honours_ttl``: it refetches a list once
    its ``ttlMs`` runs out; ``listens``: it opens ``subscriptions/listen`` for list changes.
    """

    fallback: str
    evidence: tuple[Evidence, ...]
    modern_versions: tuple[str, ...] = ("2026-07-28",)
    accepts: tuple[str, ...] = ()
    initialize_after_discover: bool = False
    honours_ttl: bool = False
    listens: bool = False
    declared_in: str = ""

    @property
    def weakest_evidence(self) -> str | None:
        return weakest(self.evidence)


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
    required_by_default: bool = True  # False: a probe or an opt-in configuration
    source: str = ""
    handshake: ProfileHandshake | None = None  # None: not declared (the session is not judged)

    def phases(self) -> dict[str, tuple[BehaviourUse, ...]]:
        return {
            "discovery": self.discovery,
            "cache": self.cache,
            "call": self.call,
            "result": self.result,
        }

    def all_evidence(self) -> list[Evidence]:
        """Every evidence entry of the resolved profile: the handshake's, then each phase's."""
        own = list(self.handshake.evidence) if self.handshake else []
        return own + [e for uses in self.phases().values() for u in uses for e in u.evidence]

    @property
    def weakest_evidence(self) -> str | None:
        return weakest(self.all_evidence())

    @property
    def checked_range(self) -> tuple[str, str] | None:
        """The oldest and newest ``checked`` date of the profile's evidence: how stale it may be."""
        dates = sorted(e.checked for e in self.all_evidence() if e.checked)
        return (dates[0], dates[-1]) if dates else None
