"""``calibrate --latest`` and ``install.python``: the newest release from the real registries,
installed with an interpreter that supports it, or an error that says why not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mcp_matrix.calibrate import harness, interpreters, releases
from tests.conftest import run_cli


@pytest.mark.parametrize("name", harness.recipe_names())
def test_every_bundled_recipe_names_its_client_package(name):
    recipe = harness.load_recipe(name)
    package = releases.client_package(recipe)
    spec = getattr(recipe, package.ecosystem)[package.index]
    assert recipe.version in spec and package.name in spec


def test_a_newer_release_is_pinned_alone_and_the_rest_unpinned_in_a_folder_of_its_own():
    recipe = harness.load_recipe("fast-agent")
    newer = releases.at_release(recipe, releases.Release("0.10.48", sys.executable))
    assert newer.pip == ("fast-agent-mcp==0.10.48", "pydantic", "a2a-sdk")
    assert newer.version == "0.10.48" and newer.install_key == "fast-agent-0.10.48"
    assert newer.python == "=={}.{}.*".format(*sys.version_info[:2])
    vercel = releases.at_release(harness.load_recipe("vercel-ai-sdk"), releases.Release("9.0.0"))
    assert vercel.npm[0] == "ai@9.0.0" and "@ai-sdk/mcp" in vercel.npm


def test_the_npm_registry_names_a_release_no_older_than_the_pinned_one():
    recipe = harness.load_recipe("ts-sdk")
    newest = releases.newest_release(releases.client_package(recipe))
    assert releases._version(newest.version) >= releases._version(recipe.version)


def test_pip_is_asked_by_an_interpreter_that_can_install_what_it_names():
    newest = releases.newest_release(releases.ClientPackage("pip", "mcp", 0))
    assert newest.python in interpreters.interpreters(oldest=releases.DRIVER_PYTHON)
    listed = subprocess.run(
        [newest.python, "-m", "pip", "index", "versions", "mcp"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert f"mcp ({newest.version})" in listed


def _recipe_copy(tmp_path: Path, name: str, **changes) -> Path:
    data = yaml.safe_load((harness.harness_dir() / f"{name}.yaml").read_text())
    for key, value in changes.items():
        if key == "python":
            data["install"]["python"] = value
        else:
            data[key] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _calibrate_core(recipe: Path, cache: Path):
    """``calibrate`` of a recipe copy on the core probe set, installing (if ever) under ``cache``."""
    return run_cli(
        "calibrate",
        "--client",
        str(recipe),
        "--probe",
        "core",
        env={"MCP_MATRIX_CACHE": str(cache)},
    )


def test_latest_stops_at_once_when_the_pinned_release_is_the_newest(tmp_path):
    newest = releases.newest_release(releases.client_package(harness.load_recipe("ts-sdk")))
    recipe = _recipe_copy(
        tmp_path,
        "ts-sdk",
        version=newest.version,
        install={"npm": [f"@modelcontextprotocol/sdk@{newest.version}"]},
    )
    done = run_cli("calibrate", "--client", str(recipe), "--latest", "--probe", "core")
    assert done.returncode == 0, done.stderr
    assert f"{newest.version} (pinned) is the newest release" in done.stderr


def test_a_client_needing_a_python_nobody_has_is_an_install_error_not_an_older_release(tmp_path):
    recipe = _recipe_copy(tmp_path, "python-sdk", python=">=3.99", version="2.3.0")
    done = _calibrate_core(recipe, tmp_path)
    assert done.returncode == 3, done.stderr
    assert "needs Python >=3.99" in done.stderr and "Traceback" not in done.stderr


def test_a_malformed_python_requirement_names_the_recipe(tmp_path):
    recipe = _recipe_copy(tmp_path, "python-sdk", python="three")
    done = _calibrate_core(recipe, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "install.python 'three'" in done.stderr and str(recipe) in done.stderr


def test_latest_and_a_client_command_are_refused_together():
    done = run_cli("calibrate", "--client", "ts-sdk", "--latest", "--client-command", "node x.mjs")
    assert done.returncode == 2 and "--latest" in done.stderr
