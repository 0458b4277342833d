"""Packaging: the hand-kept package list is complete, and the installed CLI finds its bundled data."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.conftest import REPO, run_cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_every_python_package_directory_is_listed_in_pyproject():
    listed = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = set()
    for root, name in (("mcp_matrix", "mcp_matrix"), ("servers", "matrix_servers")):
        for init in (REPO / root).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / root).parts
            found.add(".".join((name, *rel)))
    assert found - listed == set(), "add these to [tool.setuptools] packages"


def test_the_installed_cli_finds_every_bundled_profile_from_any_directory():
    r = run_cli("profiles", "--all", "--json")
    assert r.returncode == 0, r.stderr
    names = {p["name"] for p in json.loads(r.stdout)}
    assert names == {p.stem for p in (REPO / "clients").glob("*.yaml")}


def test_the_installed_cli_starts_every_bundled_reference_server():
    for spec in ("memory", "gateway --version 1", "billing --version 2", "faulty --mode ok"):
        r = run_cli("snapshot", "--server", spec)
        assert r.returncode == 0, (spec, r.stderr)
        assert json.loads(r.stdout)["tools"], spec


def test_bundled_cases_ship_with_their_servers():
    from mcp_matrix.commands.run import bundled_cases

    assert bundled_cases("memory") is not None and bundled_cases("gateway --version 2") is not None
    assert Path(bundled_cases("memory")).read_text().startswith("#")


def test_no_top_level_package_collides_with_the_pypi_package_matrix(tmp_path):
    """The import package is ``mcp_matrix``: PyPI's unrelated ``matrix`` (it ships
    ``matrix/__init__.py`` and ``matrix/cli.py``) installs beside it without overwriting a file."""
    import subprocess
    import zipfile

    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "matrix==3.0.0",
            "-d",
            tmp_path,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    [wheel] = tmp_path.glob("matrix-*.whl")
    theirs = {n.split("/", 1)[0] for n in zipfile.ZipFile(wheel).namelist() if "/" in n}
    listed = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    ours = {name.split(".", 1)[0] for name in listed}
    assert "matrix" in theirs and ours == {"mcp_matrix", "matrix_servers"}
    assert not ours & theirs
