"""A secret given with ``--mcp-env`` is masked in every id and output of the plugin, the way the
results stream masks it, so a tool named after it is still a cell that runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.plugin.inner import inner_pytest

TINY = Path(__file__).resolve().parents[1] / "hostile" / "tiny_server.py"
SECRET = "s3cr3t-VALUE-91"


@pytest.mark.timeout(300)
def test_a_tool_named_after_the_env_secret_is_masked_in_ids_and_output_and_runs(tmp_path):
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    tools = [
        {"name": f"lookup_{SECRET}", "description": "look up", "inputSchema": schema},
        {"name": "plain", "description": "a plain tool", "inputSchema": schema},
    ]
    # The server repeats the secret in its server info, descriptions and results (a careless one).
    (tmp_path / "server.json").write_text(json.dumps({"tools": tools, "leak": SECRET}))
    (tmp_path / "cases.yaml").write_text(
        f"cases:\n  lookup_{SECRET}:\n    - name: by-{SECRET}\n      arguments: {{q: {SECRET}}}\n"
    )
    # intact calls fail, so the failures' text (the reason, the server's answer) is printed too
    (tmp_path / "policy.yaml").write_text("fail_on: [intact, broken]\n")
    r = inner_pytest(
        tmp_path,
        "--mcp-stdio",
        f"{sys.executable} {TINY} {tmp_path / 'server.json'}",
        "--mcp-env",
        f"API_KEY={SECRET}",
        "--mcp-client",
        "claude-code",
        "--mcp-client",
        "cursor",
        "--mcp-cases",
        "cases.yaml",
        "--mcp-policy",
        "policy.yaml",
        "--mcp-results",
        "r.jsonl",
        "--junitxml",
        "junit.xml",
        "-v",
        "-rA",
        "-p",
        "no:cacheprovider",
    )
    out = r.stdout
    assert "the run made no such cell" not in out, out[-3000:]
    assert "mcp-matrix::lookup_***[cursor]::by-*** FAILED" in out, out[-3000:]
    assert "no intact for lookup_***::by-***[cursor]" in out  # the failure's text
    assert " 2 failed, 5 passed in " in out.strip().splitlines()[-1]
    for text in (out, (tmp_path / "junit.xml").read_text(), (tmp_path / "r.jsonl").read_text()):
        assert SECRET not in text
