"""The verdict table is complete: every verdict the code can produce is a row with everything."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_matrix.verdicts import (
    BY_NAME,
    CALL_VERDICTS,
    DISCOVERY_VERDICTS,
    RELEASE_FAILING,
    REPLAY_CATEGORY,
    REPLAY_MEANING,
    SEVERITY,
    VERDICTS,
    rank,
    worst,
)

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_matrix"


def test_every_verdict_has_a_symbol_a_colour_a_meaning_and_a_phase():
    for v in VERDICTS:
        assert v.symbol and v.colour and v.meaning, v.name
        assert v.phase in ("discovery", "call", "any"), v.name


def test_names_are_unique_and_severity_follows_the_table():
    assert len(BY_NAME) == len(VERDICTS)
    assert SEVERITY == tuple(v.name for v in VERDICTS)
    assert rank("broken") < rank("silent-loss") < rank("hidden") < rank("visible")
    assert worst(["visible", "degraded", "loud"]) == "loud"


def test_every_call_verdict_has_a_replay_category_and_no_discovery_verdict_does():
    assert set(REPLAY_CATEGORY) == set(CALL_VERDICTS)
    assert not set(REPLAY_CATEGORY) & set(DISCOVERY_VERDICTS)


def test_every_replay_category_has_its_meaning():
    assert set(REPLAY_MEANING) == set(REPLAY_CATEGORY.values())
    assert all(REPLAY_MEANING.values())


def test_the_default_release_gate_is_the_design_documents():
    assert set(RELEASE_FAILING) == {
        "broken",
        "silent-corruption",
        "silent-loss",
        "accepted-invalid",
    }


def test_every_verdict_the_classifier_produces_is_in_the_table():
    """Scan the classifier and the discovery simulation for verdict literals they emit."""
    produced: set[str] = set()
    for name in ("classify.py", "simulate/discovery.py", "simulate/calls.py", "run.py"):
        text = (PACKAGE / name).read_text(encoding="utf-8")
        produced |= set(re.findall(r"""\bv\(\s*["']([a-z-]+)["']""", text))
        produced |= set(re.findall(r"""verdict\s*=\s*["']([a-z-]+)["']""", text))
    assert produced, "the scan found no verdict literals: the pattern no longer matches the code"
    assert produced <= set(BY_NAME), produced - set(BY_NAME)
