"""Every evidence entry says when it was checked, and `mcp-matrix profiles` shows each profile's age."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from mcp_matrix.commands.profiles import age_text, evidence_age
from mcp_matrix.core.errors import InputError
from mcp_matrix.core.yamlfile import parse_yaml
from mcp_matrix.profiles.loader import bundled_profiles_dir, load_profiles
from tests.conftest import run_cli_in_process

BUNDLED = sorted(bundled_profiles_dir().glob("*.yaml"))
RECORDS = bundled_profiles_dir() / "calibrations"


def own_evidence(path: Path) -> list[dict]:
    """The evidence entries written in one profile file (its handshake's and every phase's)."""
    source, errors = parse_yaml(path, "profile")
    assert not errors, errors
    data = source.data
    entries = list((data.get("handshake") or {}).get("evidence") or [])
    for phase in ("discovery", "cache", "call", "result"):
        for use in data.get(phase) or []:
            entries += use.get("evidence") or []
    return entries


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_every_bundled_evidence_entry_states_a_past_checked_date(path):
    today = datetime.now(timezone.utc).date()
    for entry in own_evidence(path):
        checked = entry.get("checked")
        assert checked, f"{path.name}: an evidence entry without `checked`: {entry}"
        assert date.fromisoformat(checked) <= today, f"{path.name}: {checked} is in the future"


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_observed_evidence_is_not_dated_before_the_record_it_cites(path):
    for entry in own_evidence(path):
        found = re.search(
            r"clients/calibrations/([\w.\-]+/[\w.\-]+\.json)", entry.get("source", "")
        )
        if entry["level"] != "observed" or not found:
            continue
        record = json.loads((RECORDS / found.group(1)).read_text())
        assert entry["checked"] >= record["date"], f"{path.name}: {entry['checked']} < {record}"


def test_a_checked_date_that_is_not_yyyy_mm_dd_is_refused_with_its_line(tmp_path):
    path = tmp_path / "bad-date.yaml"
    path.write_text(
        "name: bad-date\nclient: Test\nversions: '1'\nmodels: m\n"
        "identity: {clientInfo: {name: t, version: '1'}, protocolVersion: '2025-11-25'}\n"
        "discovery:\n  - use: max-tools\n    with: {limit: 40}\n"
        "    evidence: [{level: doc, checked: 'Dec 2026', source: https://example.org}]\n"
    )
    with pytest.raises(InputError) as caught:
        load_profiles([path])
    assert caught.value.where == f"{path}:9"
    assert "discovery[0].evidence[0].checked" in caught.value.message


def test_a_profile_age_is_its_oldest_and_newest_checked_date_with_days_since_the_oldest():
    profile = load_profiles()["claude-code"]
    oldest, newest = profile.checked_range
    assert oldest <= newest
    age = evidence_age(profile, today=date(2027, 1, 1))
    assert age == {
        "checked_oldest": oldest,
        "checked_newest": newest,
        "age_days": (date(2027, 1, 1) - date.fromisoformat(oldest)).days,
    }
    assert age_text(age).startswith(oldest)


def test_profiles_json_lists_each_profile_age():
    result = run_cli_in_process("profiles", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["claude-code"]["checked_oldest"] == load_profiles()["claude-code"].checked_range[0]
    assert all(isinstance(row["age_days"], int) for row in rows.values())


def test_profiles_show_prints_when_each_entry_was_checked():
    result = run_cli_in_process("profiles", "show", "jetbrains-copilot")
    assert result.returncode == 0, result.stderr
    assert "issue (checked 2026-12-02):" in " ".join(result.stdout.split())
