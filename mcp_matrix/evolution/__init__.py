"""Schema evolution: ``diff`` of two snapshots per client and per population of frozen callers.

    diff_snapshots(old, new, profiles) -> Diff     (mcp_matrix.evolution.diff)
    Diff.changes: Change                            (mcp_matrix.evolution.model)
        .clients: ClientEffect per affected profile
        .populations: PopulationEffect for live, retry, transcript
        .advice: what to do instead                 (mcp_matrix.evolution.guidance)

docs/evolution.md describes the change kinds, severities and the JSON format.
"""

from mcp_matrix.evolution.diff import FAIL_ON, FORMAT, VERSION, Diff, Side, diff_snapshots, fails
from mcp_matrix.evolution.model import (
    KINDS,
    POPULATIONS,
    SEVERITIES,
    Change,
    ClientEffect,
    PopulationEffect,
    Probe,
)

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
