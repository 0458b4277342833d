"""``mcp-matrix calibrate`` from the command line: bad input is a clear error, hostile text is
shown as escapes, and a client that never asks its model is "not measured" (exit 3)."""

from __future__ import annotations

import json
import sys

from mcp_matrix.calibrate import drift
from mcp_matrix.commands.calibrate import clean, print_drift
from tests.conftest import run_cli


def test_an_unknown_client_is_an_input_error_that_lists_the_known_ones():
    r = run_cli("calibrate", "--client", "claude-cod")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "no harness recipe" in r.stderr and "claude-code" in r.stderr


def test_an_unknown_probe_set_is_an_input_error_naming_the_flag():
    r = run_cli(
        "calibrate", "--client", "claude-code", "--client-command", "true", "--probe", "cor"
    )
    assert r.returncode == 2 and "--probe" in r.stderr and "core" in r.stderr


def test_a_client_that_never_asks_its_model_is_not_measured(tmp_path):
    script = tmp_path / "silent.py"
    script.write_text("print('nothing to see')\n")
    r = run_cli(
        "calibrate",
        "--client",
        "claude-code",
        "--client-command",
        f"{sys.executable} {script}",
        "--probe",
        "paged",
        "--json",
        timeout=300,
    )
    assert r.returncode == 3, r.stderr
    doc = json.loads(r.stdout)
    assert doc["record"]["probe_sets"]["paged"]["outcome"] == "no-model-request"


def test_hostile_names_and_descriptions_are_printed_as_escapes(capsys):
    cell = drift.Cell(
        "core", "evil\x1b[2Jname", "description", "a", "\x1b]52;c;AAAA\x07\u202eb", False, ""
    )
    record = {
        "client": "X\x1b[31m",
        "client_version": "1",
        "date": "2026-12-01",
        "probe_sets": {"core": {"outcome": "ok", "tap": {"handshake": ["initialize"]}}},
    }
    print_drift(record, "p", [cell], [])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert clean("\x1b[2J") == "\\x1b[2J"


def test_an_unreachable_registry_fails_with_the_install_error_not_a_pass(tmp_path):
    import os
    import subprocess

    from tests.conftest import NEUTRAL_CWD

    env = {
        **os.environ,
        "MCP_MATRIX_CACHE": str(tmp_path),
        "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_fetch_retries": "0",
        "npm_config_cache": str(tmp_path / "npm"),
    }
    r = subprocess.run(
        [sys.executable, "-m", "mcp_matrix", "calibrate", "--client", "codex", "--probe", "core"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=NEUTRAL_CWD,
    )
    assert r.returncode == 3 and "Traceback" not in r.stderr
    assert "cannot install OpenAI Codex CLI 0.171.0 with npm" in r.stderr and "registry" in r.stderr
