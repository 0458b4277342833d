"""Library schema code run as code evidence, in each library's pinned venv, against what its
profile predicts, on every probe set (the calibration records cover the sets that existed when
they were taken):

- openai-agents 0.24.0: the real ``MCPUtil.to_function_tool`` (agents/mcp/util.py,
  ``ensure_strict_json_schema`` in agents/strict_schema.py) on every distinct probe schema, against
  the openai-agents-strict rule (schema sent, and whether it stayed strict);
- langchain-google: langchain-mcp-adapters 0.3.2's tool conversion, then
  ``ChatGoogleGenerativeAI.bind_tools(...).invoke`` (langchain-google-genai 4.4.3 on google-genai
  3.6.1) with an in-process transport answering, each probe set's tools in one request, against
  the langchain-google profile's names, schemas and descriptions.

They live with the live library calibrations (tests/calibration/test_library_profiles.py
installs the same venvs, cached) rather than in tests/behaviours: the libraries pull openai,
langchain, google-genai, requests and websockets into the test extras, and their imports take
seconds. The offline differential test (tests/behaviours/test_library_gates.py) keeps 26 recorded
strict cases.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.calibrate import harness
from mcp_matrix.calibrate.drift import predict, same
from mcp_matrix.calibrate.model_requests import model_tools
from mcp_matrix.calibrate.probe import PROBE_SETS
from mcp_matrix.profiles.loader import load_profiles
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
# Run in the langchain venv: stdin {set: [listed tools]}, stdout {set: the Gemini request body}.
SEND = """
import json, sys
import httpx
from mcp import types
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from langchain_google_genai import ChatGoogleGenerativeAI
ANSWER = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
          "finishReason": "STOP"}]}
bodies = []
def answer(request):
    bodies.append(json.loads(request.content))
    return httpx.Response(200, json=ANSWER)
llm = ChatGoogleGenerativeAI(model="gemini-2.5-flash", google_api_key="probe", max_retries=0,
                             client_args={"transport": httpx.MockTransport(answer)})
connection = {"transport": "stdio", "command": "true", "args": []}  # never opened
out = {}
for set_id, listed in json.load(sys.stdin).items():
    tools = [convert_mcp_tool_to_langchain_tool(None, types.Tool.model_validate(t),
             connection=connection) for t in listed]
    llm.bind_tools(tools).invoke("hi")
    out[set_id] = bodies[-1]
json.dump(out, sys.stdout)
"""
INSTALL_TIMEOUT = 900  # a cold install of the pinned packages takes minutes; cached, seconds


def distinct_probe_schemas() -> list[dict]:
    seen: dict[str, dict] = {}
    for probe in PROBE_SETS.values():
        for tool in probe.tools:
            seen.setdefault(json.dumps(tool["inputSchema"], sort_keys=True), tool["inputSchema"])
    return list(seen.values())


def run_in(recipe_name: str, script: str, data: object) -> Any:
    """``script`` run by the Python of ``recipe_name``'s pinned venv: JSON in, JSON out."""
    python = harness.install(harness.load_recipe(recipe_name)) / "venv" / "bin" / "python"
    done = subprocess.run(
        [str(python), "-c", script],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.timeout(INSTALL_TIMEOUT)
def test_the_strict_rule_predicts_what_openai_agents_converts_on_every_probe_schema():
    schemas = distinct_probe_schemas()
    tools = [{"name": "t", "inputSchema": s} for s in schemas]
    converted = run_in("openai-agents-strict", CONVERT, tools)
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


@pytest.mark.timeout(INSTALL_TIMEOUT)
def test_the_langchain_google_profile_predicts_the_gemini_request_on_every_probe_set():
    sets = {set_id: list(probe.tools) for set_id, probe in PROBE_SETS.items()}
    bodies = run_in("langchain-google", SEND, sets)
    profile = load_profiles()["langchain-google"]
    wrong, shown = [], 0
    for set_id, probe in PROBE_SETS.items():
        sent = {t.name: t for t in model_tools("gemini", bodies[set_id])}
        for tool, p in predict(profile, probe, "probe")["tools"].items():
            if not p["present"]:
                if tool in sent:
                    wrong.append((set_id, tool, "sent, predicted absent"))
                continue
            shown += 1
            real = sent.get(p["name"])
            if real is None:
                wrong.append((set_id, tool, f"{p['name']!r} not in the request"))
            elif not (
                same(p["schema"], real.parameters) and same(p["description"], real.description)
            ):
                wrong.append((set_id, tool, p["schema"], real.parameters))
    # 2026-12-02: 239 shown tools; 9 differed while the API's name rule ran before the conversion
    assert wrong == [], f"{len(wrong)} of {shown} differ; first: {wrong[:2]}"
