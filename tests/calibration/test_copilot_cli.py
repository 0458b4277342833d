"""GitHub Copilot CLI against servers the probe sets do not cover: the real client (pinned in
clients/harnesses/copilot-cli.yaml, installed once into the calibrate cache like the other live
clients) through the real CLI, with a tiny stdio server of this file as the target.

It backs the copilot-cli profile's handshake ``accepts``: the client goes on with whatever version
a server answers to ``initialize``, so a server on an older protocol loses nothing.
"""

from __future__ import annotations

import json
import sys

import pytest

from mcp_matrix.profiles.loader import load_profiles
from tests.conftest import run_cli

# Answers server/discover with -32601, initialize with the version in argv[1], lists one tool.
SERVER = r"""
import json, sys
version = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if not isinstance(m, dict) or "id" not in m:
        continue
    method = m.get("method")
    if method == "initialize":
        out = {"result": {"protocolVersion": version, "capabilities": {"tools": {}},
                          "serverInfo": {"name": "versioned", "version": "1"}}}
    elif method == "tools/list":
        out = {"result": {"tools": [{"name": "vtool", "description": "A tool.",
                                     "inputSchema": {"type": "object", "properties": {}}}]}}
    else:
        out = {"error": {"code": -32601, "message": "Method not found: " + str(method)}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], **out}) + "\n")
    sys.stdout.flush()
"""

OLDER = ("2025-06-18", "2025-03-26", "2024-11-05")


@pytest.mark.timeout(1200)  # a first install from the registry, then three bounded client runs
def test_copilot_cli_goes_on_with_any_version_a_server_answers_as_its_profile_says(tmp_path):
    server = tmp_path / "versioned_server.py"
    server.write_text(SERVER)
    accepts = load_profiles()["copilot-cli"].handshake.accepts
    for version in OLDER:
        assert version in accepts
        r = run_cli(
            "calibrate",
            "--client",
            "copilot-cli",
            "--stdio",
            f"{sys.executable} {server} {version}",
            "--json",
            timeout=1100,
        )
        assert r.returncode in (0, 1), f"exit {r.returncode}: {r.stderr[-2000:]}"
        target = json.loads(r.stdout)["record"]["probe_sets"]["target"]
        assert target["tap"]["handshake"][-1] == "tools/list", (version, target["tap"])
        assert target["tools"]["vtool"] == {**target["tools"]["vtool"], "present": True}, (
            version,
            target["tools"],
        )
