"""Schema evolution: ``diff`` of two snapshots per client and per population of frozen callers.

    diff_snapshots(old, new, profiles) -> Diff     (mcp_matrix.evolution.diff)
    Diff.changes: Change                            (mcp_matrix.evolution.model)
        .clients: ClientEffect per affected profile
        .populations: PopulationEffect for live, retry, transcript
        .advice: what to do instead                 (mcp_matrix.evolution.guidance)

docs/evolution.md describes the change kinds, severities and the JSON format.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_matrix.evolution.diff import (
        FAIL_ON,
        FORMAT,
        VERSION,
        Diff,
        Side,
        diff_snapshots,
        fails,
    )
    from mcp_matrix.evolution.model import (
        KINDS,
        POPULATIONS,
        SEVERITIES,
        Change,
        ClientEffect,
        PopulationEffect,
        Probe,
    )

# The public names, imported when first asked for: ``replay`` and ``check`` import this package
# for their own modules and need none of ``diff``'s (its modules were a tenth of replay's start).
_FROM = {
    **dict.fromkeys(
        ("FAIL_ON", "FORMAT", "VERSION", "Diff", "Side", "diff_snapshots", "fails"), "diff"
    ),
    **dict.fromkeys(
        (
            "KINDS",
            "POPULATIONS",
            "SEVERITIES",
            "Change",
            "ClientEffect",
            "PopulationEffect",
            "Probe",
        ),
        "model",
    ),
}


def __getattr__(name: str) -> Any:
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "FAIL_ON",
    "FORMAT",
    "KINDS",
    "POPULATIONS",
    "SEVERITIES",
    "VERSION",
    "Change",
    "ClientEffect",
    "Diff",
    "PopulationEffect",
    "Probe",
    "Side",
    "diff_snapshots",
    "fails",
]
