"""openai-agents' strict conversion, run as code evidence: the real ``MCPUtil.to_function_tool``
(openai-agents 0.24.0 agents/mcp/util.py, ``ensure_strict_json_schema`` in
agents/strict_schema.py) on every distinct probe schema, in the library's pinned venv, against
what the openai-agents-strict profile's rule predicts (schema sent, and whether it stayed strict).

It lives with the live library calibrations (tests/calibration/test_library_profiles.py installs the same
venv, cached) rather than in tests/behaviours: openai-agents pulls openai, requests, websockets
and griffe into the test extras for one pure function, and its import takes seconds. The
offline differential test (tests/behaviours/test_library_gates.py) keeps 26 recorded cases.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.calibrate import harness
from mcp_matrix.calibrate.probe import PROBE_SETS
from mcp_matrix.simulate.discovery import initial_state

# Run in the library's venv: stdin a list of listed tools, stdout what to_function_tool made.
CONVERT = """
import json, sys
from mcp import types
from agents.mcp import MCPServerStdio
from agents.mcp.util import MCPUtil
server = MCPServerStdio(params={"command": "true"}, name="probe")  # built, never started
out = []
for listed in json.load(sys.stdin):
    tool = MCPUtil.to_function_tool(types.Tool.model_validate(listed), server, True)
    out.append({"sent": tool.params_json_schema, "strict": tool.strict_json_schema})
json.dump(out, sys.stdout)
"""
INSTALL_TIMEOUT = 900  # a cold install of the pinned packages takes minutes; cached, seconds


def distinct_probe_schemas() -> list[dict]:
    seen: dict[str, dict] = {}
    for probe in PROBE_SETS.values():
        for tool in probe.tools:
            seen.setdefault(json.dumps(tool["inputSchema"], sort_keys=True), tool["inputSchema"])
    return list(seen.values())


@pytest.mark.timeout(INSTALL_TIMEOUT)
def test_the_strict_rule_predicts_what_openai_agents_converts_on_every_probe_schema():
    recipe = harness.load_recipe("openai-agents-strict")
    python = harness.install(recipe) / "venv" / "bin" / "python"
    schemas = distinct_probe_schemas()
    done = subprocess.run(
        [str(python), "-c", CONVERT],
        input=json.dumps([{"name": "t", "inputSchema": s} for s in schemas]),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    converted = json.loads(done.stdout)
    rewrite = registry.get("openai-agents-strict").fn
    wrong = []
    for schema, real in zip(schemas, converted, strict=True):
        state = rewrite(initial_state([(0, {"name": "t", "inputSchema": schema})], "p")).tools[0]
        fell_back = any(f.code == "strict-fallback" for f in state.findings)
        if (state.schema, not fell_back) != (real["sent"], real["strict"]):
            wrong.append((schema, real, state.schema))
    assert wrong == [], f"{len(wrong)} of {len(schemas)} differ; first: {wrong[:2]}"
    # 2026-12-02: 66 distinct probe schemas, 57 converted to strict, 9 left non-strict
    assert sum(r["strict"] for r in converted) < len(schemas)
