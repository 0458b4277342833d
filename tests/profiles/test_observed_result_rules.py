"""A calibrated profile's outputSchema rule cites what its own record observed.

When a profile's latest calibration record ran the output-text probe set (a tool with an
outputSchema that answers with text only) and the call reached the server, that record is
observed evidence for the profile's `require-structured-content` rule: the rule must cite it,
not only the code evidence a base profile gives or a sibling's record (issue 23: fast-agent-010
inherited only base-python-sdk's; 7 others were fixed after it, so no profile is exempt).
"""

from __future__ import annotations

from mcp_matrix.calibrate.record import latest_record
from mcp_matrix.profiles.loader import load_profiles

RULE = "require-structured-content"


def observed_and_lacking() -> tuple[set[str], set[str]]:
    """The profiles whose record saw the output-text call reach the server, and those of them
    whose rule does not cite that record."""
    observed, lacking = set(), set()
    for name, profile in load_profiles().items():
        found = latest_record(name)
        outcome = found and (found[1].get("probe_sets") or {}).get("output-text")
        if not outcome or not any(c.get("sent") for c in outcome.get("calls") or []):
            continue
        observed.add(name)
        path = found[0]
        cited = f"clients/calibrations/{path.parent.name}/{path.name}"
        for use in profile.result:
            if use.id == RULE and not any(
                e.level == "observed" and e.source == cited for e in use.evidence
            ):
                lacking.add(name)
    return observed, lacking


def test_the_outputschema_rule_cites_the_profiles_own_observation():
    observed, lacking = observed_and_lacking()
    # the 8 fixed under issue 23, each of which inherited only a base's or a sibling's evidence
    assert {
        "fast-agent-010",
        "agent-framework",
        "kilo-cli",
        "langchain-anthropic",
        "langchain-google",
        "llamaindex",
        "openai-agents-js",
        "openai-agents-strict",
    } <= observed
    assert not lacking, f"cite the observed record in: {sorted(lacking)}"
