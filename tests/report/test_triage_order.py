"""The triage does not depend on the order call cells arrived in: profiles run side by side
(``--jobs``), so two runs of the same server interleave their cells differently, and a user
diffing two runs' output must see no change."""

from __future__ import annotations

from mcp_matrix.report.triage import build_triage
from tests.report.events import _call, full_run


def _with_a_shared_cause(events: list[dict]) -> list[dict]:
    """The hand-built run plus one loud refusal made by all three profiles (one root cause)."""
    shared = [
        _call(p, "search", "search-refused", "loud", "/q refused", behaviours=["client-validate"])
        for p in ("claude-code", "cursor", "stale-cache")
    ]
    end = max(i for i, e in enumerate(events) if e.get("event") == "call") + 1
    return events[:end] + shared + events[end:]


def _calls_reversed(events: list[dict]) -> list[dict]:
    """The same events with the call cells, and only they, in the opposite order."""
    at = [i for i, e in enumerate(events) if e.get("event") == "call"]
    out = list(events)
    for i, e in zip(at, reversed([events[i] for i in at]), strict=True):
        out[i] = e
    return out


def test_the_triage_is_the_same_whichever_profile_s_calls_arrived_first():
    events = _with_a_shared_cause(full_run())
    shuffled = _calls_reversed(events)
    assert shuffled != events
    first = [c.to_json() for c in build_triage(events)]
    assert any(len(c["clients"]) > 1 for c in first)  # a cause several profiles share
    assert [c.to_json() for c in build_triage(shuffled)] == first
