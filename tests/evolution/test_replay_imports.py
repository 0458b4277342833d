"""An offline replay imports the pattern engine (``regex``) only for a schema with a pattern.

Only the bounded ``pattern`` checks use it (``behaviours.patterns``), and it was about 25 ms
of every replay's start; most tool schemas have no pattern. The real CLI, as users run it;
asserted on the modules imported, never on times."""

from __future__ import annotations

import json

from tests.test_startup_imports import imported


def files(tmp_path, pattern: bool) -> list[str]:
    name = {"type": "string", **({"pattern": "^[a-z]+$"} if pattern else {})}
    schema = {"type": "object", "properties": {"name": name, "n": {"type": "integer"}}}
    doc = {
        "format": "mcp-matrix.snapshot",
        "version": 1,
        "target": {"kind": "server", "server": "imports"},
        "serverInfo": {"name": "imports", "version": "1"},
        "protocolVersion": "2025-11-25",
        "tools": [{"page": 0, "tool": {"name": "lookup", "inputSchema": schema}}],
    }
    snap, calls = tmp_path / f"s{pattern}.json", tmp_path / "calls.jsonl"
    snap.write_text(json.dumps(doc), encoding="utf-8")
    rows = [{"name": "ok"}, {"name": "NO"}, {"n": "7"}, {"name": 3}]
    calls.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "tool": "lookup", "arguments": r}) + "\n"
            for i, r in enumerate(rows)
        ),
        encoding="utf-8",
    )
    return [str(calls), "--population", "retry", "--snapshot", str(snap)]


def test_a_replay_of_schemas_without_a_pattern_does_not_import_regex(tmp_path):
    names = imported("replay", *files(tmp_path, pattern=False), "--json", "--fail-on", "none")
    assert "mcp_matrix.evolution.replay" in names
    assert "regex" not in names  # fails before: imported with the validators


def test_a_replay_of_a_schema_with_a_pattern_imports_it(tmp_path):
    names = imported("replay", *files(tmp_path, pattern=True), "--json", "--fail-on", "none")
    assert "regex" in names
