"""The written style rules are executable: ruff's lint rules and its formatter over the whole tree."""

from __future__ import annotations

import subprocess

from tests.conftest import REPO, installed_tool


def _ruff(*args: str) -> subprocess.CompletedProcess:
    ruff = installed_tool("ruff")
    assert ruff, "ruff is a test dependency (pyproject.toml [test]); install the test extras"
    return subprocess.run(
        [ruff, *args, "--no-cache", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_tree_passes_ruff_check_with_the_projects_rules():
    r = _ruff("check", "--output-format", "concise")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_tree_is_formatted_as_ruff_format_writes_it():
    r = _ruff("format", "--check")
    assert r.returncode == 0, "run `ruff format .`; these files differ:\n" + r.stdout + r.stderr
