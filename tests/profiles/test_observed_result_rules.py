"""A calibrated profile's outputSchema rule cites what its own record observed.

When a profile's latest calibration record ran the output-text probe set (a tool with an
outputSchema that answers with text only) and the call reached the server, that record is
observed evidence for the profile's `require-structured-content` rule: the rule must cite it,
not only the code evidence a base profile gives (issue 23: fast-agent-010 inherited only
base-python-sdk's). KNOWN_GAPS lists the profiles that do not yet, and only shrinks.
"""

from __future__ import annotations

from mcp_matrix.calibrate.record import latest_record
from mcp_matrix.profiles.loader import load_profiles

RULE = "require-structured-content"
# Profiles whose record observed the output-text call but whose rule cites no observed evidence
# from that record (inherited from a base or a sibling's record); each should get its own entry.
KNOWN_GAPS = {
    "agent-framework",
    "kilo-cli",
    "langchain-anthropic",
    "langchain-google",
    "llamaindex",
    "openai-agents-js",
    "openai-agents-strict",
}


def lacking_own_observed_evidence() -> set[str]:
    """The profiles whose record saw the output-text call reach the server, and whose rule does
    not cite that record."""
    lacking = set()
    for name, profile in load_profiles().items():
        found = latest_record(name)
        outcome = found and (found[1].get("probe_sets") or {}).get("output-text")
        if not outcome or not any(c.get("sent") for c in outcome.get("calls") or []):
            continue
        path = found[0]
        cited = f"clients/calibrations/{path.parent.name}/{path.name}"
        for use in profile.result:
            if use.id == RULE and not any(
                e.level == "observed" and e.source == cited for e in use.evidence
            ):
                lacking.add(name)
    return lacking


def test_the_outputschema_rule_cites_the_profiles_own_observation():
    lacking = lacking_own_observed_evidence()
    assert "fast-agent-010" not in lacking
    assert lacking <= KNOWN_GAPS, f"cite the observed record in: {sorted(lacking - KNOWN_GAPS)}"
    assert KNOWN_GAPS <= lacking, f"fixed, drop from KNOWN_GAPS: {sorted(KNOWN_GAPS - lacking)}"
