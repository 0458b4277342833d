"""What review found in ``diff`` and ``replay``: input that crashed them, and rename matching that
grew with the square of the tools renamed. Through the real CLI where the crash was the CLI's;
the rename search is counted (difflib ratios), never timed."""

from __future__ import annotations

import difflib
import json
import random
import sys
from pathlib import Path

import pytest

from mcp_matrix.evolution.tool_pairs import pair_tools, tool_similarity
from tests.conftest import run_cli_in_process

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import WORDS, snapshot_doc, tool_list


def deep_schema(levels: int, leaf: str) -> dict:
    schema: dict = {"type": leaf}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_diff_of_a_schema_300_levels_deep_reports_the_change_at_its_leaf(tmp_path):
    """``copy.deepcopy`` took two frames per level: RecursionError, a traceback (exit 1)."""
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    for path, leaf in ((old, "string"), (new, "integer")):
        tool = {"name": "deep", "inputSchema": deep_schema(300, leaf)}
        path.write_text(json.dumps(snapshot_doc([tool])), encoding="utf-8")
    done = run_cli_in_process("diff", str(old), str(new), "-f", "json")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    changes = json.loads(done.stdout)["changes"]
    assert [(c["kind"], c["tool"]) for c in changes] == [("type-changed", "deep")]
    assert changes[0]["pointer"].count("/properties/a") == 300


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_a_timestamp_outside_utcs_years_is_an_input_error_naming_the_line(tmp_path, stamp):
    """ISO 8601, but in year 0 or 10000 once in UTC: ``astimezone`` raised OverflowError."""
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(snapshot_doc(tool_list(1))), encoding="utf-8")
    name = tool_list(1)[0]["name"]
    calls = tmp_path / "live.jsonl"
    lines = [
        {"id": "1", "tool": name, "arguments": {}, "timestamp": "2026-09-14T08:11:36Z"},
        {"id": "2", "tool": name, "arguments": {}, "timestamp": stamp},
    ]
    calls.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    done = run_cli_in_process("replay", "--snapshot", str(snap), str(calls))
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "live.jsonl:2: timestamp: expected an ISO 8601 date and time" in done.stderr
    assert "from year 1 to 9999 in UTC" in done.stderr and stamp in done.stderr


def every_pair_scored(removed, added, old, new) -> dict[str, str]:
    """pair_tools as it was: every pair scored, sorted, taken greedily (the oracle)."""
    scored = sorted(
        ((tool_similarity(old[r], new[a]), r, a) for r in removed for a in added),
        key=lambda t: -t[0],
    )
    out: dict[str, str] = {}
    for score, r, a in scored:
        if score >= 0.6 and r not in out and a not in out.values():
            out[r] = a
    return out


def _mutated(rng: random.Random, tool: dict) -> dict:
    props = dict(tool["inputSchema"].get("properties", {}))
    roll = rng.random()
    if roll < 0.3 and props:
        props.pop(rng.choice(list(props)))
    elif roll < 0.6:
        props[rng.choice(WORDS)] = {"type": rng.choice(["string", "integer"])}
    text = tool.get("description", "")
    roll = rng.random()
    if roll < 0.2:
        text = ""
    elif roll < 0.5:
        text = f"{text} {rng.choice(WORDS)}"
    elif roll < 0.6:
        text = rng.choice(WORDS) * rng.randint(1, 50)
    return {
        **tool,
        "inputSchema": {**tool["inputSchema"], "properties": props},
        "description": text,
    }


def test_rename_pairs_are_those_of_scoring_every_pair():
    """Random releases (shared shapes, ties, empty descriptions and schemas): the same pairs."""
    made = 0
    for seed in range(150):
        rng = random.Random(seed)
        n = rng.randint(0, 25)
        olds = tool_list(n, seed=seed, distinct=rng.choice([None, 1, 3]) if n else None)
        old = {f"o{i}": t for i, t in enumerate(olds)}
        new = {f"n{i}": _mutated(rng, t) for i, t in enumerate(olds) if rng.random() < 0.8}
        for i, t in enumerate(tool_list(rng.randint(0, 10), seed=seed + 1000)):
            new[f"x{i}"] = t if rng.random() < 0.5 else _mutated(rng, t)
        for name in list(new)[:2] if seed % 5 == 0 else []:
            new[name] = {**new[name], "inputSchema": {"type": "object"}}
        removed, added = list(old), list(new)
        rng.shuffle(removed)
        rng.shuffle(added)
        expected = every_pair_scored(removed, added, old, new)
        assert pair_tools(removed, added, old, new) == expected, seed
        made += len(expected)
    assert made > 500  # the cases do pair tools


def counted_ratios(monkeypatch) -> list[int]:
    count = [0]
    real = difflib.SequenceMatcher.ratio

    def counting(self):
        count[0] += 1
        return real(self)

    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", counting)
    return count


@pytest.mark.parametrize("n", [50, 200])
def test_renaming_n_tools_computes_n_description_ratios_not_n_squared(monkeypatch, n):
    old = {t["name"]: t for t in tool_list(n)}
    new = {f"v2_{k}": {**t, "name": f"v2_{k}"} for k, t in old.items()}
    count = counted_ratios(monkeypatch)
    assert pair_tools(list(old), list(new), old, new) == {k: f"v2_{k}" for k in old}
    assert count[0] == n  # n * n before


def test_a_few_removed_tools_against_thousands_of_alike_added_ones_compute_few_ratios(monkeypatch):
    """7 removed tools against 2,000 added copies of one tool: 14,000 ratios before."""
    old = {t["name"]: t for t in tool_list(7, seed=3)}
    copies = tool_list(2000, seed=4, distinct=1)
    new = {t["name"]: t for t in copies}
    count = counted_ratios(monkeypatch)
    found = pair_tools(list(old), list(new), old, new)
    assert count[0] <= 7
    assert found == every_pair_scored(list(old), list(new), old, new)
