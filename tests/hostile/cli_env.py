"""Helpers of the hostile tests that need more than tests/conftest.py's ``run_cli``: the real CLI
with extra variables in its environment, and a server started as a user would that prints the
URL it listens on."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator, Sequence

from mcp_matrix.calibrate.harness import kill_group, start_http_server
from tests.conftest import run_cli


def cli_with_env(*args: str, env: dict, timeout: float = 180) -> subprocess.CompletedProcess:
    """``run_cli`` with extra variables in the CLI's own environment."""
    return run_cli(*args, timeout=timeout, env=env)


@contextlib.contextmanager
def listening(argv: Sequence[str]) -> Iterator[str]:
    """Start ``argv`` (a server printing ``MCP_MATRIX_LISTENING URL`` first); its URL; ended after."""
    proc, url = start_http_server(argv, timeout=60)
    try:
        yield url
    finally:
        kill_group(proc)
