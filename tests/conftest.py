"""Shared fixtures: real servers as subprocesses, the real CLI, bounded waits everywhere."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from matrix.targets import Target

REPO = Path(__file__).resolve().parent.parent


def run_cli(*args: str, timeout: float = 120, input: str | None = None) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess (as a user would), bounded."""
    return subprocess.run(
        [sys.executable, "-m", "matrix", *args],
        capture_output=True, text=True, timeout=timeout, input=input,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(params=["stdio", "http"])
def transport(request) -> str:
    return request.param


def installed_tool(name: str) -> str | None:
    """A console script of this environment (on PATH, or beside the running interpreter)."""
    import shutil

    beside = Path(sys.executable).parent / name
    return shutil.which(name) or (str(beside) if beside.exists() else None)


def bundled(spec: str, transport: str = "stdio") -> Target:
    return Target.bundled(spec, transport=transport)


def read_json(path: Path):
    return json.loads(Path(path).read_text())
