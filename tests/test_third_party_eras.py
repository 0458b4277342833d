"""A third-party server from npm that speaks only the handshake era, over stdio and over the
legacy HTTP+SSE transport: @modelcontextprotocol/server-everything 2026.8.31 (TypeScript SDK 1.32.2,
which has no server/discover). Installed once into the shared cache, under a lock."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import read_json
from tests.npm_servers import reference_server


@pytest.fixture(scope="module")
def everything() -> Path:
    """The installed server's entry point (npm install into the shared cache, once, locked)."""
    return reference_server("server-everything", "2026.8.31")


def test_a_handshake_only_npm_server_answers_initialize_and_refuses_server_discover(
    cli, tmp_path, everything
):
    out = tmp_path / "e.json"
    r = cli("snapshot", "--stdio", f"node {everything} stdio", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = read_json(out)
    assert doc["era"] == "handshake" and doc["protocolVersion"] == "2025-11-25" and doc["tools"]
    assert (
        doc["eras"]["modern"]["answered"] is False
        and doc["eras"]["modern"]["error"]["code"] == -32601
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_legacy_sse_npm_server_is_snapshotted_over_sse(cli, tmp_path, everything):
    port = _free_port()
    proc = subprocess.Popen(
        ["node", str(everything), "sse"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # bounded wait for the port to accept
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.3)
        out = tmp_path / "sse.json"
        r = cli("snapshot", "--sse", f"http://127.0.0.1:{port}/sse", "-o", str(out))
        assert r.returncode == 0, r.stderr
        doc = read_json(out)
        assert (
            doc["target"]["kind"] == "sse" and doc["era"] == "handshake" and len(doc["tools"]) >= 10
        )
        assert doc["error"] is None
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
