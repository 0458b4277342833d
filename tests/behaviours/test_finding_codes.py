"""Finding codes are declared (mcp_matrix/behaviours/codes.py), not free strings: every code a
behaviour module spells is one it declares, every finding the simulation produces carries a code
its behaviour's module declares, and every declared code has fix advice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.behaviours.codes import DECLARED, FINDING_CODES, LOSS_CODES, declared
from mcp_matrix.calibrate.probe import PROBE_SETS
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.report.advice import BY_BEHAVIOUR, BY_CODE
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.targets.snapshot import Snapshot
from tests.report import test_advice as advice_scan

BEHAVIOURS = Path(__file__).resolve().parents[2] / "mcp_matrix" / "behaviours"


def spelled_codes(text: str) -> set[str]:
    """The literal finding codes a module's source spells (a guard on the declarations: the
    source is read for strings that look like codes, so none escapes the table)."""
    return advice_scan.spelled_codes(text) | set(
        re.findall(r'\bFinding\(\s*"([a-z][a-z-]*)"', text)
    )


def test_every_code_a_behaviour_module_spells_is_declared_by_it():
    undeclared = {}
    for path in sorted(BEHAVIOURS.glob("*.py")):
        extra = spelled_codes(path.read_text(encoding="utf-8")) - declared(path.stem)
        if extra:
            undeclared[path.stem] = sorted(extra)
    assert not undeclared, f"declare these in mcp_matrix/behaviours/codes.py: {undeclared}"
    assert {m for m in DECLARED if not (BEHAVIOURS / f"{m}.py").exists()} == set()


# Codes that reach a report with no fix advice today (found when the codes were declared; the
# regexes that stood for a registry missed them). Listed so that a new one fails.
WITHOUT_ADVICE: set[str] = set()  # 36d0831 advised the last three


def _module(name: str) -> str:
    return registry.REGISTRY[name].fn.__module__.rsplit(".", 1)[-1]


def test_every_declared_code_has_fix_advice():
    """By its code (advice.BY_CODE), or by a behaviour of a module that emits it (BY_BEHAVIOUR)."""
    registry.load_all()
    advised_modules = {_module(b) for b in BY_BEHAVIOUR if b in registry.REGISTRY}
    missing = sorted(
        c
        for c in FINDING_CODES - LOSS_CODES
        if c not in BY_CODE and not any(c in DECLARED[m] for m in advised_modules & set(DECLARED))
    )
    assert set(missing) <= WITHOUT_ADVICE, sorted(set(missing) - WITHOUT_ADVICE)
    assert set(missing) == WITHOUT_ADVICE, f"advised since: {sorted(WITHOUT_ADVICE - set(missing))}"


@pytest.mark.parametrize("set_id", sorted(PROBE_SETS))
def test_every_finding_of_the_probe_sets_carries_a_code_its_behaviour_declares(set_id):
    """Every profile's discovery of each hazard probe set: a finding stamped with a behaviour
    has a code that behaviour's module declares."""
    registry.load_all()
    profiles = [p for p in load_profiles().values() if not p.abstract]
    probe = PROBE_SETS[set_id]
    page = probe.page_size or len(probe.tools) or 1
    snapshot = Snapshot(
        {
            "serverInfo": {"name": "mcp-matrix-probe", "version": "1"},
            "tools": [{"page": i // page, "tool": t} for i, t in enumerate(probe.tools)],
        }
    )
    wrong = set()
    for view in discover_all(snapshot, profiles):
        for tool in view.tools:
            for f in tool.findings:
                if not f.behaviour or f.behaviour not in registry.REGISTRY:
                    continue
                module = _module(f.behaviour)
                if f.code not in declared(module):
                    wrong.add((f.behaviour, module, f.code))
    assert not wrong, sorted(wrong)


def test_the_probe_sets_exercise_the_declared_codes():
    """The check above reads real findings: across the sets, most modules' codes are met."""
    met = set()
    registry.load_all()
    profiles = [p for p in load_profiles().values() if not p.abstract]
    for probe in PROBE_SETS.values():
        page = probe.page_size or len(probe.tools) or 1
        tools = [{"page": i // page, "tool": t} for i, t in enumerate(probe.tools)]
        snapshot = Snapshot({"serverInfo": {"name": "mcp-matrix-probe"}, "tools": tools})
        for view in discover_all(snapshot, profiles):
            met |= {f.code for t in view.tools for f in t.findings if f.behaviour}
    assert len(met & FINDING_CODES) >= 20, sorted(met)
