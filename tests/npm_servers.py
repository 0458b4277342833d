"""Third-party MCP servers from the npm registry, installed once into a cache shared by test and
benchmark runs, under a lock: ``tests/test_third_party_eras.py`` (server-everything) and
``benchmarks/run_cost.py`` (server-filesystem) both start theirs by the entry point this returns."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

CACHE = Path.home() / ".cache" / "mcp-matrix" / "npm-servers"


class NpmMissing(RuntimeError):
    """No ``npm`` on PATH: the server cannot be installed."""


def reference_server(name: str, version: str) -> Path:
    """The entry point (``dist/index.js``) of ``@modelcontextprotocol/NAME@VERSION``, run with
    ``node``; ``npm install`` into ``CACHE/NAME-VERSION`` the first time (several runs at once
    wait for one install)."""
    folder = CACHE / f"{name}-{version}"
    entry = folder / "node_modules" / "@modelcontextprotocol" / name / "dist" / "index.js"
    folder.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not entry.exists():
            npm = shutil.which("npm")
            if npm is None:
                raise NpmMissing(f"npm is needed to install @modelcontextprotocol/{name}@{version}")
            subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(folder),
                    "--no-audit",
                    "--no-fund",
                    f"@modelcontextprotocol/{name}@{version}",
                ],
                check=True,
                capture_output=True,
                timeout=600,
            )
    return entry
