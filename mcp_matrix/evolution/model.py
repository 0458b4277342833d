"""Values of a diff: a change, its effect on each client and on each population of callers.

Frozen dataclasses; the diff builds a change from the two schemas first, then returns
copies with the effects, the final severity and the advice filled in
(``dataclasses.replace``), so no stage mutates another's output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.core.jsontypes import JSON

# Worst first. ``breaking``: a call that worked before the change now fails or loses data,
# or a tool disappears from a client. ``risky``: no recorded call breaks, but some client
# loses data or visibility, or new calls may be mishandled. ``safe``: nothing a caller sends
# or a client shows gets worse.
SEVERITIES = ("breaking", "risky", "safe")

# The frozen callers of a tool (docs/design.md#rename-additively): live conversations that
# predate the deploy, queued retries replaying stored calls with no model in the loop, and
# stored transcripts replayed to reproduce a state.
POPULATIONS = ("live", "retry", "transcript")

POPULATION_LABEL = {
    "live": "live conversations",
    "retry": "queued retries",
    "transcript": "transcript replays",
}

# What happens to a population: worst first.
POPULATION_EFFECTS = (
    "permanent-loss",
    "diverges",
    "silent-loss",
    "silent-change",
    "blocked",
    "recovers",
    "unaffected",
)

# Every change kind, its base severity (the effects can only make it worse) and what it means.
KINDS: dict[str, tuple[str, str]] = {
    "tool-removed": ("breaking", "a tool is gone: every call to it fails"),
    "tool-renamed": ("breaking", "a tool was removed and a similar one added: a rename in place"),
    "tool-added": (
        "safe",
        "a new tool (clients holding a cached list do not see it until a new session)",
    ),
    "tool-parallel": (
        "safe",
        "a new tool beside an existing one (update_account_v2); risky when it maps one to one",
    ),
    "raw-twin-added": (
        "safe",
        "a new one-string-payload twin of a write tool (docs/design.md#a-raw-twin-for-write-tools)",
    ),
    "param-added-optional": (
        "risky",
        "a new optional parameter: clients holding the old schema strip it",
    ),
    "param-added-required": ("breaking", "a new required parameter: every frozen call lacks it"),
    "param-removed": ("breaking", "a parameter is gone: calls that send it are refused or lose it"),
    "param-renamed": (
        "breaking",
        "a parameter renamed in place (removed X, added Y of the same type)",
    ),
    "alias-added": (
        "safe",
        "a parameter renamed additively: the old name kept as a deprecated alias",
    ),
    "alias-removed": (
        "breaking",
        "a deprecated alias retired: frozen calls that still use it fail",
    ),
    "param-deprecated": ("safe", "a parameter newly described as deprecated"),
    "alias-not-steering": (
        "risky",
        "a deprecated parameter whose description is not an instruction",
    ),
    "type-changed": ("breaking", "a parameter's type changed: old values are refused"),
    "type-narrowed": ("breaking", "a parameter accepts fewer types: some old values are refused"),
    "type-widened": ("safe", "a parameter accepts more types"),
    "enum-values-removed": ("breaking", "enum values removed: calls using them are refused"),
    "enum-values-added": (
        "safe",
        "enum values added (clients validating a cached schema refuse them)",
    ),
    "required-added": ("breaking", "an existing parameter became required"),
    "required-removed": ("safe", "a parameter is no longer required"),
    "constraint-tightened": (
        "risky",
        "a bound or format got stricter: some old values are refused",
    ),
    "constraint-loosened": ("safe", "a bound or format got looser"),
    "default-changed": (
        "risky",
        "a default changed: callers that omit the value get another behaviour",
    ),
    "additional-properties-tightened": (
        "risky",
        "additionalProperties became false: unknown keys are now refused",
    ),
    "additional-properties-loosened": (
        "risky",
        "additionalProperties no longer false: unknown keys are now ignored silently",
    ),
    "root-combinator-added": (
        "risky",
        "a root anyOf/oneOf/allOf/not/if: some clients hide the tool or the server",
    ),
    "root-combinator-removed": ("safe", "a root combinator removed (the schema is flat)"),
    "schema-changed": ("risky", "the input schema changed in a way no finer kind describes"),
    "annotation-changed": ("safe", "a behaviour hint changed (readOnlyHint, destructiveHint, ...)"),
    "description-changed": ("safe", "a description or title changed"),
    "output-schema-added": (
        "risky",
        "an outputSchema appeared: results must now carry matching structuredContent",
    ),
    "output-schema-removed": (
        "risky",
        "the outputSchema is gone: consumers lose structured results",
    ),
    "output-field-removed": (
        "breaking",
        "a field of the structured result is gone or no longer required",
    ),
    "output-field-retyped": ("breaking", "a field of the structured result changed type"),
    "output-field-added": ("safe", "a new field in the structured result"),
    "output-schema-changed": ("risky", "the outputSchema changed in a way no finer kind describes"),
    "discovery-changed": (
        "safe",
        "a client shows the tool differently, for no single schema change",
    ),
}


def worse(a: str, b: str) -> str:
    """The worse of two severities."""
    return a if SEVERITIES.index(a) <= SEVERITIES.index(b) else b


def at_least(severity: str, threshold: str) -> bool:
    return SEVERITIES.index(severity) <= SEVERITIES.index(threshold)


@dataclass(frozen=True)
class Probe:
    """A representative call used to measure a change.

    ``shape`` is ``old`` (a frozen call, valid against the old schema: what live, retry and
    transcript callers send) or ``new`` (a call using what the new schema adds).
    """

    shape: str
    arguments: JSON
    about: str

    def to_json(self) -> dict:
        return {"shape": self.shape, "arguments": self.arguments, "about": self.about}


@dataclass(frozen=True)
class ClientEffect:
    """What one client profile does differently because of a change.

    ``effect`` is a verdict of docs/design.md (``hidden``, ``session-broken``, ``degraded``,
    ``loud``, ``silent-loss``, ``unreachable``, ``visible`` for a tool that became visible).
    ``stale`` marks a client that builds the call from its cached (old) schema.
    ``refused_by_client``: the client's own check refused the call before sending it (finding
    code ``client-refused``): it never reaches the server, and the model is told in the same turn.
    """

    profile: str
    effect: str
    message: str
    stale: bool = False
    behaviours: tuple[str, ...] = ()
    evidence: str | None = None
    shape: str = ""  # the probe that showed it: "old" (a frozen call) or "new"; "" for discovery
    refused_by_client: bool = False

    def to_json(self) -> dict:
        return {
            "profile": self.profile,
            "effect": self.effect,
            "message": self.message,
            "stale": self.stale,
            "behaviours": list(self.behaviours),
            "weakest_evidence": self.evidence,
            "call": self.shape or None,
            "refused_by_client": self.refused_by_client,
        }


@dataclass(frozen=True)
class PopulationEffect:
    """What the change does to one population of frozen callers (POPULATIONS)."""

    population: str
    effect: str
    message: str

    def to_json(self) -> dict:
        return {"population": self.population, "effect": self.effect, "message": self.message}


@dataclass(frozen=True)
class Change:
    """One classified difference between the old and the new tool list.

    ``pointer`` is a JSON pointer into the tool (``/inputSchema/properties/account_id``);
    ``param`` the parameter's dotted path (``fields.plan``) when the change is about one.
    """

    kind: str
    tool: str
    message: str
    severity: str = ""
    pointer: str = ""
    param: str | None = None
    old: JSON = None
    new: JSON = None
    detail: Mapping[str, Any] = field(default_factory=dict)
    probes: tuple[Probe, ...] = ()
    clients: tuple[ClientEffect, ...] = ()
    unaffected: tuple[str, ...] = ()
    populations: tuple[PopulationEffect, ...] = ()
    advice: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.tool}:{self.kind}" + (f":{self.param}" if self.param else "")

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "kind": self.kind,
            "severity": self.severity,
            "tool": self.tool,
            "param": self.param,
            "pointer": self.pointer,
            "message": self.message,
            "why": list(self.reasons),
            "old": self.old,
            "new": self.new,
            "detail": dict(self.detail),
            "calls": [p.to_json() for p in self.probes],
            "clients": [c.to_json() for c in self.clients],
            "unaffected_clients": list(self.unaffected),
            "populations": [p.to_json() for p in self.populations],
            "advice": list(self.advice),
        }


__all__ = [
    "KINDS",
    "POPULATIONS",
    "POPULATION_EFFECTS",
    "POPULATION_LABEL",
    "SEVERITIES",
    "Change",
    "ClientEffect",
    "PopulationEffect",
    "Probe",
    "at_least",
    "worse",
]
