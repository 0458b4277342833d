"""A calibrated client seen sending a property key the Anthropic API refuses is predicted to break.

Probe set bad-key lists a tool with the root property key 'bad key!'. The fake endpoint accepts
it, but the Anthropic API answers 400 on every request holding it
(https://github.com/anthropics/claude-code/issues/34771). So when a record shows the key sent
unchanged on the Anthropic API, the profile must say the session breaks there, or it reports a
silent "visible" for a client whose user gets the 400 (issue 23: kilo-cli lacked the rule).
"""

from __future__ import annotations

from mcp_matrix.calibrate import probe
from mcp_matrix.calibrate.drift import predict
from mcp_matrix.calibrate.record import latest_record
from mcp_matrix.core.verdicts import V
from mcp_matrix.profiles.loader import load_profiles

KEY = "bad key!"


def sent_to_anthropic(name: str) -> bool:
    """Whether ``name``'s latest record saw the bad key go to the Anthropic API unchanged."""
    found = latest_record(name)
    seen = found and (found[1].get("probe_sets") or {}).get("bad-key")
    if not seen or seen.get("api") != "anthropic":
        return False
    tool = seen["tools"].get("bad_key") or {}
    props = (tool.get("schema") or {}).get("properties") if tool.get("present") else None
    return isinstance(props, dict) and KEY in props


def test_a_client_seen_sending_the_refused_key_to_anthropic_is_predicted_session_broken():
    profiles = load_profiles()
    senders = sorted(name for name in profiles if sent_to_anthropic(name))
    assert "kilo-cli" in senders  # observed 2026-12-03 (clients/calibrations/kilo-cli/7.7.7.json)
    silent = [
        name
        for name in senders
        if predict(profiles[name], probe.PROBE_SETS["bad-key"], "probe")["outcome"]
        != V.SESSION_BROKEN.name
    ]
    assert not silent, f"add the Anthropic API's forbid-property-keys rule to: {silent}"
