"""Helpers of the hostile tests that need more than tests/conftest.py's ``run_cli``: the real CLI
with extra variables in its environment, and a server started as a user would that prints the
URL it listens on."""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence

from tests.conftest import LOADED_MACHINE_BOUNDS, NEUTRAL_CWD


def cli_with_env(*args: str, env: dict, timeout: float = 180) -> subprocess.CompletedProcess:
    """``run_cli`` (the same neutral directory and bounds) with extra variables in the CLI's own
    environment."""
    if args and args[0] in LOADED_MACHINE_BOUNDS:
        args = (args[0], *LOADED_MACHINE_BOUNDS[args[0]], *args[1:])
    return subprocess.run(
        [sys.executable, "-m", "matrix", *args],
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
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    try:
        line = lines.get(timeout=60)
        assert line.startswith("MCP_MATRIX_LISTENING "), line
        yield line.split(" ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
