"""A culprit's name never splits its root cause: triage reads the culprit from the finding's
``culprit`` field, not by cutting the message at ": " (a tool may be named ``evil: name``)."""

from __future__ import annotations

import json
import sys

from mcp_matrix.core.events import DiscoveryCell
from mcp_matrix.core.model import Finding, blamed, culprit_message
from mcp_matrix.report.triage import build_triage
from mcp_matrix.run.results import read_events
from tests.conftest import run_cli

EVIL = "evil: name"
# The MCP TypeScript SDK's Zod gate rejects the whole tools/list for a properties that is not an
# object, so a client on it drops the server: the other tools' cells carry a copy naming the culprit.
TOOLS = [
    {
        "name": EVIL,
        "description": "A tool whose name holds a colon and a space.",
        "inputSchema": {"type": "object", "properties": []},
    },
    {
        "name": "plain_tool",
        "description": "An ordinary tool.",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
    },
    {
        "name": "other_tool",
        "description": "Another ordinary tool.",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
    },
]


def test_a_culprit_named_with_a_colon_is_one_root_cause_through_the_cli(tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    results = tmp_path / "results.jsonl"
    done = run_cli(
        "run",
        "--stdio",
        f"{sys.executable} -m matrix_servers.probe --tools {tools}",
        "--client",
        "claude-code",
        "--results",
        str(results),
        "--no-auto-cases",
        "--fail-on",
        "none",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    events = read_events(results)
    dropped = [
        e for e in events if e.get("event") == "discovery" and e["verdict"] == "server-dropped"
    ]
    assert {e["tool"] for e in dropped} == {EVIL, "plain_tool", "other_tool"}
    assert {f.get("culprit") for e in dropped for f in e["findings"][-1:]} == {None, EVIL}
    causes = [c for c in build_triage(events) if c.verdict == "server-dropped"]
    assert len(causes) == 1, [c.summary for c in causes]
    (cause,) = causes
    assert cause.tool == EVIL and cause.culprits == [EVIL]
    assert sorted(cause.tools) == sorted(t["name"] for t in TOOLS)
    assert cause.summary.startswith(f"tool {EVIL!r}: inputSchema.properties is not an object")
    report = run_cli("report", str(results), "--format", "md", timeout=120)
    assert report.returncode == 0, report.stderr
    listed = [line for line in report.stdout.splitlines() if line.startswith(("1. ", "2. ", "3. "))]
    dropped_causes = [line for line in listed if "**server-dropped**" in line]
    assert len(dropped_causes) == 1, listed  # one problem, not one per half of the tool's name


def test_a_blamed_copy_gives_back_the_culprits_own_message():
    rule = Finding(code="list-rejected", message="tool 'a: b': inputSchema is not an object")
    copy = blamed(rule, "a: b")
    assert copy.culprit == "a: b"
    assert copy.message == f"because of tool 'a: b': {rule.message}"
    assert culprit_message(copy.message, copy.culprit) == rule.message
    events = [
        DiscoveryCell(
            profile="p", tool="a: b", verdict="server-dropped", findings=(rule.to_json(),)
        ),
        DiscoveryCell(profile="p", tool="c", verdict="server-dropped", findings=(copy.to_json(),)),
    ]
    (cause,) = build_triage(events)
    assert cause.culprits == ["a: b"] and cause.tools == ["a: b", "c"]
