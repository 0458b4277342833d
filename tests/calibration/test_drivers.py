"""Library drivers on bad settings: a message naming the variable and exit 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mcp_matrix.calibrate.harness import REPO

JS = REPO / "mcp_matrix" / "calibrate" / "drivers" / "js"


def run_driver(argv: list[str], **env: str) -> subprocess.CompletedProcess:
    base = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(REPO),
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    return subprocess.run(
        argv, check=False, capture_output=True, text=True, env={**base, **env}, timeout=120
    )


def test_a_python_driver_without_its_settings_exits_2_naming_them():
    done = run_driver([sys.executable, "-m", "mcp_matrix.calibrate.drivers.mcp_sdk"])
    assert done.returncode == 2
    assert "MCP_MATRIX_MODEL_URL" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_python_driver_rejects_a_server_command_that_is_not_a_json_list():
    done = run_driver(
        [sys.executable, "-m", "mcp_matrix.calibrate.drivers.mcp_sdk"],
        MCP_MATRIX_MODEL_URL="http://127.0.0.1:9",
        MCP_MATRIX_PROVIDER="anthropic",
        MCP_MATRIX_SERVER_COMMAND="python -m server",
    )
    assert done.returncode == 2
    assert "MCP_MATRIX_SERVER_COMMAND must be a JSON list" in done.stderr


def test_a_python_driver_reports_a_library_failure_as_its_json_line(tmp_path):
    """The server cannot start: the SDK's exception is the finding, printed as the line, exit 0."""
    done = run_driver(
        [sys.executable, "-m", "mcp_matrix.calibrate.drivers.mcp_sdk"],
        MCP_MATRIX_MODEL_URL="http://127.0.0.1:9",
        MCP_MATRIX_PROVIDER="anthropic",
        MCP_MATRIX_SERVER_COMMAND=f'["{tmp_path / "no-such-server"}"]',
    )
    assert done.returncode == 0
    line = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    assert line["ok"] is False and line["error_type"] and line["tools_seen"] == []


def test_a_node_driver_without_its_settings_exits_2_naming_them():
    done = run_driver(["node", str(JS / "ts_sdk.mjs")])
    assert done.returncode == 2
    assert "MCP_MATRIX_MODEL_URL" in done.stderr


def test_every_driver_module_is_named_by_a_recipe():
    from mcp_matrix.calibrate.harness import load_recipe, recipe_names

    drivers = {
        p.stem
        for p in (REPO / "mcp_matrix" / "calibrate" / "drivers").glob("*.py")
        if not p.stem.startswith("_")
    }
    drivers |= {p.stem for p in JS.glob("*.mjs") if p.stem != "common"}
    used = set()
    for name in recipe_names():
        for arg in load_recipe(name).run:
            last = arg.rsplit("/", 1)[-1]
            used.add(last.removesuffix(".mjs").rsplit(".", 1)[-1])
    assert drivers - used == set()


def test_an_installed_mcp_matrix_puts_only_its_own_package_on_a_drivers_path(tmp_path, monkeypatch):
    """Installed, REPO is site-packages: the client's venv must not see mcp-matrix's mcp/pydantic."""
    from mcp_matrix.calibrate import harness

    site = tmp_path / "site-packages"
    (site / "mcp_matrix").mkdir(parents=True)
    (site / "mcp").mkdir()
    monkeypatch.setattr(harness, "REPO", site)
    path = Path(harness.driver_pythonpath(tmp_path / "run"))  # a missing run folder is created
    assert sorted(p.name for p in path.iterdir()) == ["mcp_matrix"]
    assert (path / "mcp_matrix").resolve() == (site / "mcp_matrix").resolve()


def test_a_checkout_is_its_own_drivers_path(tmp_path, monkeypatch):
    """From a checkout (an editable install) nothing but the checkout's own packages is on it."""
    from mcp_matrix.calibrate import harness

    checkout = tmp_path / "checkout"
    (checkout / "mcp_matrix").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("[project]\nname = 'mcp-matrix'\n")
    monkeypatch.setattr(harness, "REPO", checkout)
    assert harness.driver_pythonpath(tmp_path / "run") == str(checkout)
    assert not (tmp_path / "run").exists()  # no link folder is made for a checkout


def test_the_drivers_path_of_this_install_imports_this_very_matrix_package(tmp_path):
    """Editable (a checkout) or not (CI's ``pip install .``): a driver imports the running package."""
    import mcp_matrix
    from mcp_matrix.calibrate import harness

    path = Path(harness.driver_pythonpath(tmp_path))
    assert (path / "mcp_matrix").resolve() == Path(mcp_matrix.__file__).resolve().parent
    assert not (path / "mcp").exists()
