"""Running the real inner pytest in a subprocess, as a server's own suite runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def inner_pytest(directory: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m pytest ARGS`` in ``directory`` (its own basetemp and cache), with none of the
    outer session's pytest or xdist settings in its environment; stdout and stderr together."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTEST_ADDOPTS" and not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", f"--basetemp={directory / 'tmp'}", *args],
        cwd=directory,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
    )
