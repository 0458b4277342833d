"""Every calibrated profile predicts exactly what its client was observed doing (offline, from the
records in clients/calibrations/), and every registry behaviour is covered by a probe set."""

from __future__ import annotations

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.calibrate import probe, probe_coverage, record
from mcp_matrix.calibrate.drift import agreement, record_drift
from mcp_matrix.profiles.loader import load_profiles

RECORDS = sorted(p for p in record.calibrations_dir().glob("*/*.json"))


def test_there_are_calibration_records():
    assert RECORDS, "clients/calibrations/ holds no record"


def _latest_per_client() -> list:
    """The newest record of each client a profile models (one profile may model several
    packages, e.g. the TypeScript and Python Claude Agent SDKs): older releases of the same
    client are history, not a prediction the profile still makes."""
    newest: dict = {}
    for path in RECORDS:
        doc = record.load_record(path)
        key = (path.parent.name, doc.get("client"))
        rank = record.record_rank(doc)
        if key not in newest or rank > newest[key][0]:
            newest[key] = (rank, path)
    return sorted(path for _, path in newest.values())


@pytest.mark.parametrize("path", _latest_per_client(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_profile_agrees_with_its_latest_calibration_on_every_cell(path):
    profile_name = path.parent.name
    doc = record.load_record(path)
    profile = load_profiles()[profile_name]
    cells = record_drift(profile, doc, probe.PROBE_SETS)
    assert cells, "the record compares no cell (probe sets changed since it was taken?)"
    wrong = [c.to_json() for c in cells if not c.agree]
    agree, total = agreement(cells)
    assert not wrong, f"{profile_name}: {agree}/{total} cells agree; first drift: {wrong[:3]}"


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_profile_cites_its_record_as_observed_evidence(path):
    profile = load_profiles()[path.parent.name]
    sources = {
        e.source
        for uses in profile.phases().values()
        for u in uses
        for e in u.evidence
        if e.level == "observed"
    }
    assert any(str(s).endswith(f"{path.parent.name}/{path.name}") for s in sources)


def test_every_registry_behaviour_is_probed_or_says_why_not():
    names = set(registry.load_all())
    covered = {n for n, sets in probe_coverage.PROBE_COVERAGE.items() if sets} | set(
        probe_coverage.NOT_PROBED
    )
    assert names - covered == set()
    assert all(
        s in probe.PROBE_SETS for sets in probe_coverage.PROBE_COVERAGE.values() for s in sets
    )


def test_names_and_schemas_are_compared_for_every_tool_the_one_the_api_refuses_included():
    """claude-code-278's long-name set: the over-long name breaks the session (the API's 400 on a
    ToolSearch tool_reference over 64, which the unenforced fake endpoint does not show). The API
    judges what the client sends, so that tool's name and schema are compared as well (before,
    a culprit went uncompared, which kept Agent Framework's renames of 'space name' and the like
    unseen: its profile blamed the raw names on the OpenAI API)."""
    from mcp_matrix.calibrate.drift import predict

    profile = load_profiles()["claude-code-278"]
    _, doc = record.latest_record("claude-code-278")
    probe_set = probe.PROBE_SETS["long-name"]
    pred = predict(profile, probe_set, "probe")
    blocked = {t for t, p in pred["tools"].items() if p.get("blocks")}
    assert pred["outcome"] == "session-broken" and len(blocked) == 1
    cells = record_drift(
        profile, {"probe_sets": {"long-name": doc["probe_sets"]["long-name"]}}, probe.PROBE_SETS
    )
    named = {c.tool for c in cells if c.aspect == "name"}
    assert blocked < named
    assert all(c.agree for c in cells)
