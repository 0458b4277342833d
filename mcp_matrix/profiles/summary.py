"""A resolved profile as JSON, keyed like the YAML format (``mcp-matrix profiles show``)."""

from __future__ import annotations

import copy

from mcp_matrix.core.evidence import weakest
from mcp_matrix.profiles.extends import NO_IDENTITY
from mcp_matrix.profiles.model import Profile, ProfileHandshake


def profile_summary(profile: Profile) -> dict:
    """A JSON-ready view of a resolved profile, keyed like the YAML format (``profiles show``)."""
    identity = None
    if profile.identity != NO_IDENTITY:
        identity = {
            "clientInfo": copy.deepcopy(dict(profile.identity.client_info)),
            "protocolVersion": profile.identity.protocol_version,
            "capabilities": copy.deepcopy(dict(profile.identity.capabilities)),
        }
    summary: dict[str, object] = {
        "name": profile.name,
        "client": profile.client,
        "versions": profile.versions,
        "models": profile.models,
        "abstract": profile.abstract,
        "required_by_default": profile.required_by_default,
        "extends": list(profile.extends),
        "source": profile.source,
        "weakest_evidence": profile.weakest_evidence,
        "identity": identity,
        "handshake": _handshake_summary(profile.handshake),
    }
    for phase, uses in profile.phases().items():
        summary[phase] = [
            {
                "use": use.name,
                "id": use.id,
                "with": copy.deepcopy(dict(use.params)),
                "frequency": use.frequency,
                "provider": use.provider,
                "weakest_evidence": weakest(use.evidence),
                "evidence": [e.to_json() for e in use.evidence],
                "declared_in": use.declared_in,
            }
            for use in uses
        ]
    return summary


def _handshake_summary(h: ProfileHandshake | None) -> dict | None:
    if h is None:
        return None
    return {
        "fallback": h.fallback,
        "modern_versions": list(h.modern_versions),
        "accepts": list(h.accepts),
        "initialize_after_discover": h.initialize_after_discover,
        "honours_ttl": h.honours_ttl,
        "listens": h.listens,
        "weakest_evidence": h.weakest_evidence,
        "evidence": [e.to_json() for e in h.evidence],
        "declared_in": h.declared_in,
    }
