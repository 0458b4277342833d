"""The no-false-alarm corpus: real third-party MCP servers installed from npm and PyPI at pinned
versions, plus FastMCP-built servers, each measured once per test session through the real CLI.

Installs are cached in ``~/.cache/mcp-matrix/corpus-<pins>/`` (a lock file keeps parallel
workers and other checkouts from installing at once). Each server's snapshot and its
``discover --json`` document are made once per session, by whichever xdist worker needs them
first, under a lock of that server's own: the two workers measure different servers side by
side, and every assertion about a server reads the same two files.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcp_matrix.report.discovery_doc import read_discovery
from tests.conftest import run_cli

HERE = Path(__file__).parent
NPM = {
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
    "@modelcontextprotocol/server-memory": "2026.8.31",
    "@modelcontextprotocol/server-sequential-thinking": "2026.8.31",
}
PYPI = {
    "mcp-server-time": "2026.10.19",
    "mcp-server-git": "2026.10.19",
    "mcp-server-fetch": "2026.10.24",
    "fastmcp": "4.2.3",
}
PINS = hashlib.sha256(json.dumps([NPM, PYPI], sort_keys=True).encode()).hexdigest()[:12]
CACHE = (
    Path(os.environ.get("MCP_MATRIX_CACHE", Path.home() / ".cache" / "mcp-matrix"))
    / f"corpus-{PINS}"
)


@dataclass(frozen=True)
class Server:
    """One corpus server: its expectations file and how to start it (paths filled in at run time)."""

    key: str  # tests/corpus/expected/<key>.yaml
    argv: tuple[
        str, ...
    ]  # {npm} = node_modules/.bin, {py} = the corpus venv's bin, {here}, {root}, {repo}


SERVERS = (
    Server("server-everything", ("{npm}/mcp-server-everything",)),
    Server("server-filesystem", ("{npm}/mcp-server-filesystem", "{root}")),
    Server("server-memory", ("{npm}/mcp-server-memory",)),
    Server("server-sequential-thinking", ("{npm}/mcp-server-sequential-thinking",)),
    Server("mcp-server-time", ("{py}/mcp-server-time", "--local-timezone", "UTC")),
    Server("mcp-server-git", ("{py}/mcp-server-git", "--repository", "{repo}")),
    Server("mcp-server-fetch", ("{py}/mcp-server-fetch",)),
    Server("fastmcp-notes", ("{py}/python", "{here}/servers/fastmcp_notes.py")),
    Server("sdk-mcpserver-shop", ("{py}/python", "{here}/servers/sdk_mcpserver_shop.py")),
)
SERVERS_BY_KEY = {server.key: server for server in SERVERS}


@contextmanager
def locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(argv: list[str], cwd: Path | None = None, timeout: float = 600) -> None:
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    if r.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        )


def install() -> Path:
    """The pinned corpus, installed once into the cache (the stamp says it is complete)."""
    stamp = CACHE / "installed"
    with locked(CACHE.parent / f"corpus-{PINS}.lock"):
        if stamp.exists():
            return CACHE
        if CACHE.exists():
            shutil.rmtree(CACHE)  # a half-finished install
        (CACHE / "npm").mkdir(parents=True)
        (CACHE / "npm" / "package.json").write_text(
            '{"name": "mcp-matrix-corpus", "private": true}\n'
        )
        _run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--silent",
                *[f"{name}@{version}" for name, version in NPM.items()],
            ],
            cwd=CACHE / "npm",
        )
        _run([sys.executable, "-m", "venv", str(CACHE / "py")])
        _run(
            [
                str(CACHE / "py" / "bin" / "pip"),
                "install",
                "-q",
                *[f"{n}=={v}" for n, v in PYPI.items()],
            ]
        )
        stamp.write_text(json.dumps([NPM, PYPI]))
    return CACHE


def command(server: Server, cache: Path, work: Path) -> str:
    fill = {
        "npm": str(cache / "npm" / "node_modules" / ".bin"),
        "py": str(cache / "py" / "bin"),
        "here": str(HERE),
        "root": str(work / "fsroot"),
        "repo": str(work / "repo"),
    }
    return " ".join(part.format(**fill) for part in server.argv)


def prepare(work: Path) -> None:
    """What the filesystem and git servers are pointed at: a directory and a one-commit repository."""
    (work / "fsroot").mkdir(parents=True, exist_ok=True)
    (work / "fsroot" / "hello.txt").write_text("hello\n")
    repo = work / "repo"
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        (repo / "README").write_text("corpus\n")
        env = ["-c", "user.name=corpus", "-c", "user.email=corpus@example.invalid"]
        _run(["git", "init", "-q"], cwd=repo)
        _run(["git", "add", "README"], cwd=repo)
        _run(["git", *env, "commit", "-q", "-m", "first"], cwd=repo)


class Corpus:
    """The shared per-session directory: each server's command, snapshot and discovery document."""

    def __init__(self, cache: Path, shared: Path) -> None:
        self.cache = cache
        self.shared = shared
        self._docs: dict[str, dict] = {}

    def command(self, key: str) -> str:
        return command(SERVERS_BY_KEY[key], self.cache, self.shared)

    def snapshot(self, key: str) -> Path:
        """``mcp-matrix snapshot`` of one server, taken once per session for all workers."""
        snap = self.shared / f"{key}.json"
        with locked(self.shared / f"{key}.lock"):
            if not snap.exists():
                part = snap.with_suffix(".part")
                r = run_cli("snapshot", "--stdio", self.command(key), "-o", str(part), timeout=180)
                if r.returncode != 0:
                    raise RuntimeError(f"snapshot of {key} failed: {r.stderr[-3000:]}")
                part.rename(snap)
        return snap

    def discovery(self, key: str) -> dict:
        """``mcp-matrix discover SNAPSHOT --json`` of one server (every profile), once per session."""
        if key not in self._docs:
            snap = self.snapshot(key)
            out = self.shared / f"{key}.discover.json"
            with locked(self.shared / f"{key}.lock"):
                if not out.exists():
                    r = run_cli("discover", str(snap), "--json", timeout=180)
                    if r.returncode != 0:
                        raise RuntimeError(f"discover of {key} failed: {r.stderr[-3000:]}")
                    out.with_suffix(".part").write_text(r.stdout)
                    out.with_suffix(".part").rename(out)
            self._docs[key] = read_discovery(json.loads(out.read_text()))
        return self._docs[key]


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Corpus:
    """The corpus of this session; servers are measured when a test first asks for them."""
    cache = install()
    shared = tmp_path_factory.getbasetemp().parent / "corpus"
    with locked(shared.parent / "corpus.lock"):
        prepare(shared)
    return Corpus(cache, shared)
