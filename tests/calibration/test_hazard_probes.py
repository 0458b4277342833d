"""The two silent hazards probed on real clients (probe sets ``coercion`` and ``big-int``): every client
calibrated on them keeps both sets in its latest record and its profile predicts every cell, and a
live run shows a rounded 64-bit id as a loss exactly in the profiles observed to round it."""

from __future__ import annotations

import json
import sys

import pytest

from mcp_matrix.calibrate import probe, record
from mcp_matrix.calibrate.drift import agreement, record_drift
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.run.results import read_events
from tests.conftest import run_cli

HAZARD_SETS = ("coercion", "big-int")
# Profiles whose client was run on both sets (docs/calibration.md, "Argument coercion and big integers").
CALIBRATED = (
    "claude-code",
    "claude-code-278",
    "qwen-code",
    "opencode",
    "gemini-cli",
    "codex",
    "vercel-ai-sdk",
    "vercel-ai-sdk-anthropic",
    "vercel-ai-sdk-google",
    "ts-sdk",
    "python-sdk",
    "openai-agents",
    "pydantic-ai",
    "langchain",
    "claude-code-legacy",
    "cline-cli",
    "continue-cli",
)
# Clients that send the model's integers exactly (Python and Rust); every JavaScript one rounds.
EXACT_CLIENTS = {"codex", "python-sdk", "openai-agents", "pydantic-ai", "langchain"}
ROUNDS = {"claude-code", "qwen-code", "opencode"}  # run live below: observed to round
EXACT = {"python-sdk", "codex"}  # run live below: observed exact


@pytest.mark.parametrize("name", CALIBRATED)
def test_the_latest_record_holds_both_hazard_sets_and_the_profile_predicts_every_cell(name):
    _, doc = record.latest_record(name)
    for set_id in HAZARD_SETS:
        obs = doc["probe_sets"].get(set_id)
        assert obs is not None, f"{name}: the latest record has no {set_id} observations"
        assert obs["probe_digest"] == probe.digest(probe.PROBE_SETS[set_id]), (
            f"{name}: {set_id} was observed on an older version of the set"
        )
        cells = record_drift(load_profiles()[name], {"probe_sets": {set_id: obs}}, probe.PROBE_SETS)
        agree, total = agreement(cells)
        assert total == 35 and agree == total, (
            f"{name} on {set_id}: {agree}/{total}; first drift: "
            f"{[c.to_json() for c in cells if not c.agree][:2]}"
        )


def test_the_records_show_which_clients_round_big_integers():
    for name in CALIBRATED:
        _, doc = record.latest_record(name)
        sent = {c["tool"]: c.get("arguments") for c in doc["probe_sets"]["big-int"]["calls"]}
        rounded = sent["big_id"] == {"id": 2**53}
        assert rounded == (name not in EXACT_CLIENTS), name
        assert sent["big_safe"] == {"id": 2**53 - 1} and sent["big_string"] == {
            "id": str(2**53 + 1)
        }


def run_probe_tools(tmp_path, probe_set: str, names, cases: str, clients):
    """``mcp-matrix run`` on the probe server listing only ``names`` of ``probe_set``, with
    ``cases`` (a cases file's text) and no automatic cases; the process and its call events."""
    tools = [t for t in probe.PROBE_SETS[probe_set].tools if t["name"] in names]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    (tmp_path / "cases.yaml").write_text(cases)
    results = tmp_path / "results.jsonl"
    server = f"{sys.executable} -m matrix_servers.probe --tools {tmp_path / 'tools.json'}"
    r = run_cli(
        "run",
        "--stdio",
        server,
        "--cases",
        str(tmp_path / "cases.yaml"),
        "--no-auto-cases",
        "--results",
        str(results),
        "--quiet",
        *(a for name in clients for a in ("--client", name)),
        timeout=300,
    )
    calls = [e for e in read_events(results) if e["event"] == "call"]
    return r, calls


def test_a_rounded_64_bit_id_is_a_silent_corruption_only_where_a_client_rounds_it(tmp_path):
    r, calls = run_probe_tools(
        tmp_path,
        "big-int",
        ("big_id", "big_safe"),
        "cases:\n"
        "  big_id:\n    - name: unsafe\n      arguments: {id: 9007199254740993}\n"
        "  big_safe:\n    - name: safe\n      arguments: {id: 9007199254740991}\n",
        sorted(ROUNDS | EXACT),
    )
    assert r.returncode == 1, r.stderr[-2000:]  # silent-corruption fails the default gate
    verdict = {(e["profile"], e["tool"]): e for e in calls}
    for name in ROUNDS:
        cell = verdict[(name, "big_id")]
        assert cell["verdict"] == "silent-corruption", cell
        assert cell["mutations"] == [
            {"kind": "changed", "pointer": "/id", "before": 2**53 + 1, "after": 2**53}
        ]
        assert "round-big-integers" in cell["behaviours"]
        assert verdict[(name, "big_safe")]["verdict"] == "intact"
    for name in EXACT:
        assert verdict[(name, "big_id")]["verdict"] == "intact"
        assert verdict[(name, "big_safe")]["verdict"] == "intact"


def test_a_probe_set_merged_into_a_record_keeps_its_own_date_and_versions_must_match():
    from mcp_matrix.core.errors import InputError

    base = {"profile": "p", "client_version": "1", "date": "2026-12-01", "probe_sets": {"a": {}}}
    later = {"profile": "p", "client_version": "1", "date": "2026-12-02", "probe_sets": {"b": {}}}
    merged = record.merge_probe_sets(base, later)
    assert merged["date"] == "2026-12-01" and merged["probe_sets"] == {
        "a": {},
        "b": {"date": "2026-12-02"},
    }
    with pytest.raises(InputError, match="client_version"):
        record.merge_probe_sets(base, {**later, "client_version": "2"})


def test_a_string_the_client_converts_to_the_schemas_type_is_tolerated_not_a_loss(tmp_path):
    """Claude Code and Qwen Code send "5" as 5 where the schema asks for an integer (observed):
    the server gets a valid call the model's own text would have failed, so the client repaired
    it: ``tolerated``, never ``silent-corruption`` (which it was, because the intact "5" is
    refused and so "differs"). A client that sends "5" as it is gets the server's refusal."""
    r, cells = run_probe_tools(
        tmp_path,
        "coercion",
        ("coerce_scalars",),
        "cases:\n  coerce_scalars:\n    - name: count-as-text\n      arguments: {count: '5'}\n",
        ("claude-code", "qwen-code", "python-sdk"),
    )
    calls = {e["profile"]: e for e in cells}
    for name in ("claude-code", "qwen-code"):
        cell = calls[name]
        assert cell["verdict"] == "tolerated", cell
        assert cell["mutations"] == [
            {"kind": "retyped", "pointer": "/count", "before": "5", "after": 5}
        ]
        assert "converted the arguments to the types" in cell["reason"]
    assert calls["python-sdk"]["verdict"] != "tolerated"
    assert "silent-corruption" not in r.stdout
