"""Helpers of the hostile tests that need more than tests/conftest.py's ``run_cli``: the real CLI
with extra variables in its environment, and a server started as a user would that prints the
URL it listens on."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence

from mcp_matrix.calibrate.harness import kill_group, start_http_server
from tests.conftest import LOADED_MACHINE_BOUNDS, NEUTRAL_CWD


def cli_with_env(*args: str, env: dict, timeout: float = 180) -> subprocess.CompletedProcess:
    """``run_cli`` (the same neutral directory and bounds) with extra variables in the CLI's own
    environment."""
    if args and args[0] in LOADED_MACHINE_BOUNDS:
        args = (args[0], *LOADED_MACHINE_BOUNDS[args[0]], *args[1:])
    return subprocess.run(
        [sys.executable, "-m", "mcp_matrix", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=NEUTRAL_CWD,
        env={**os.environ, **env},
        check=False,
    )


@contextlib.contextmanager
def listening(argv: Sequence[str]) -> Iterator[str]:
    """Start ``argv`` (a server printing ``MCP_MATRIX_LISTENING URL`` first); its URL; ended after."""
    proc, url = start_http_server(argv, timeout=60)
    try:
        yield url
    finally:
        kill_group(proc)
