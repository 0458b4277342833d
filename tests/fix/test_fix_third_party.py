"""``mcp-matrix fix`` live on real third-party servers from npm and PyPI (the pinned corpus of
tests/corpus, installed once into the shared cache): every loss in a required client is either
gone after the fix or explained by a cause the report lists as left, with why."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.corpus.conftest import SERVERS_BY_KEY, command, install, prepare

# key -> the name a user would give the server in a client's configuration (--name): the
# servers' own names (mcp-git, secure-filesystem-server) carry a '-' that Codex replaces, a
# loss of the configuration, not of the schema (the report says so without --name).
SERVERS = {
    "server-everything": "everything",
    "server-filesystem": "filesystem",
    "mcp-server-git": "git",
    "mcp-server-fetch": "fetch",
    "mcp-server-time": "time",
    "fastmcp-notes": "notes",
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    cache = install()
    work = tmp_path_factory.mktemp("corpus-fix")
    prepare(work)
    return cache, work


@pytest.mark.parametrize("key", sorted(SERVERS))
def test_fix_leaves_no_required_client_loss_unexplained_on_a_real_server(installed, key):
    cache, work = installed
    cmd = command(SERVERS_BY_KEY[key], cache, work)
    r = run_cli(
        "fix",
        "--stdio",
        cmd,
        "--name",
        SERVERS[key],
        "--timeout-initialize",
        "60",
        "-f",
        "json",
        timeout=900,
    )
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(r.stdout)
    explained = {t for u in report["unfixed"] for t in u["tools"]}
    for c in report["clients"]:
        if not c["required"]:
            continue
        assert c["lost_after"] <= c["lost_before"], c["client"]
        assert {s["tool"] for s in c["still_lost"]} <= explained, c["client"]
    left = sum(c["lost_after"] for c in report["clients"] if c["required"])
    assert (r.returncode == 0) == (left == 0)
