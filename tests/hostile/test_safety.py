"""Safety: a stdio server gets only the environment it is given; secrets never reach an output;
nothing that may write is called without the user's opt-in."""

from __future__ import annotations

import json
import sys

import pytest

from mcp_matrix.run.results import read_events
from mcp_matrix.wire.stdio import MINIMAL_ENV
from tests.conftest import run_cli
from tests.hostile.cli_env import cli_with_env, listening
from tests.hostile.conftest import (
    FORMATS,
    assert_no_crash,
    assert_reports_render,
    matrix_run,
    tiny_server,
)

PARENT_SECRET = "sk-live-PARENT-0001"  # in mcp-matrix's own environment only
ENV_SECRET = "tok-ENV-7f3a9c"  # --env API_TOKEN=...
ARG_SECRET = "arg-KEY-5b2e"  # --api-key ... on the server's command line
HEADER_SECRET = "hdr-SECRET-91d0"  # --header "Authorization: Bearer ..."
URL_SECRET = "url-TOKEN-c4d2"  # ?access_token=... in the URL
READ_ONLY = {"readOnlyHint": True}


def echo_tool(name: str, description: str = "") -> dict:
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object"},
        "annotations": READ_ONLY,
    }


def test_a_stdio_server_gets_the_minimal_environment_plus_env_and_never_the_callers_secrets(
    tmp_path,
):
    env_file = tmp_path / "server-env.json"
    command = tiny_server(tmp_path, {"tools": [echo_tool("echo")], "env_file": str(env_file)})
    r = cli_with_env(
        "run",
        "--stdio",
        command,
        "--env",
        "GIVEN=value-we-gave",
        "--env",
        "DEBUG=true",
        "--client",
        "continue",
        "--results",
        str(tmp_path / "r.jsonl"),
        env={"MCP_MATRIX_TEST_SECRET": PARENT_SECRET},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    seen = json.loads(env_file.read_text())
    assert PARENT_SECRET not in json.dumps(seen) and "MCP_MATRIX_TEST_SECRET" not in seen
    assert seen["GIVEN"] == "value-we-gave" and seen["DEBUG"] == "true"
    assert set(seen) <= set(MINIMAL_ENV) | {"GIVEN", "DEBUG"}, sorted(set(seen) - set(MINIMAL_ENV))
    # A secret as plain as "true" is masked inside strings only: every line stays valid JSON.
    assert {e["event"] for e in read_events(tmp_path / "r.jsonl")} >= {
        "run-started",
        "call",
        "run-finished",
    }

    inherit = cli_with_env(
        "snapshot",
        "--stdio",
        command,
        "--inherit-env",
        "-o",
        str(tmp_path / "s.json"),
        env={"MCP_MATRIX_TEST_SECRET": PARENT_SECRET},
    )
    assert inherit.returncode == 0, inherit.stderr[-2000:]
    # --inherit-env is the documented opt-in to pass everything.
    assert json.loads(env_file.read_text())["MCP_MATRIX_TEST_SECRET"] == PARENT_SECRET


def outputs(root) -> dict[str, str]:
    return {
        p.name: p.read_text(encoding="utf-8", errors="replace")
        for p in root.iterdir()
        if p.is_file()
    }


def test_env_and_argument_secrets_are_masked_in_every_output_even_when_the_server_echoes_them(
    tmp_path,
):
    leak = f"server says {ENV_SECRET} {ARG_SECRET}"  # a careless server repeats what it was given
    config = {
        "tools": [echo_tool("echo", leak), echo_tool("boom")],
        "leak": leak,
        "crash_on": "boom",
    }
    command = tiny_server(tmp_path, config, "--api-key", ARG_SECRET)
    out = tmp_path / "out"
    out.mkdir()
    run = matrix_run(
        out,
        "--stdio",
        command,
        "--env",
        f"API_TOKEN={ENV_SECRET}",
        clients=("claude-code", "continue"),
    )
    assert_no_crash(run)
    assert run.returncode == 1  # boom crashes the server: broken
    snapshot = run_cli(
        "snapshot",
        "--stdio",
        command,
        "--env",
        f"API_TOKEN={ENV_SECRET}",
        "-o",
        str(out / "snap.json"),
    )
    stdout_snapshot = run_cli("snapshot", "--stdio", command, "--env", f"API_TOKEN={ENV_SECRET}")
    texts = {
        **outputs(out),
        "terminal": run.stdout + run.stderr,
        "snapshot stdout": stdout_snapshot.stdout,
        "snapshot stderr": snapshot.stderr + stdout_snapshot.stderr,
    }
    assert set(FORMATS.values()) | {"r.jsonl", "snap.json"} <= set(texts)
    for name, text in texts.items():
        assert ENV_SECRET not in text and ARG_SECRET not in text, f"a secret leaked into {name}"
    # The leaks were there to mask: the server's words arrive, with the secrets as ***.
    assert "server says *** ***" in texts["r.jsonl"] and "server says *** ***" in texts["snap.json"]
    assert "--api-key" in texts["r.jsonl"] and "boom" in texts["r.md"]
    assert_reports_render(run)


@pytest.fixture
def faulty_http():
    """The faulty server over Streamable HTTP, started as a user would; its URL."""
    argv = [sys.executable, "-m", "matrix_servers.faulty", "--transport", "http", "--port", "0"]
    with listening(argv) as url:
        yield url


def test_header_and_url_secrets_are_masked_in_every_output(tmp_path, faulty_http):
    url = f"{faulty_http}?access_token={URL_SECRET}"
    out = tmp_path / "out"
    out.mkdir()
    run = matrix_run(
        out,
        "--http",
        url,
        "--header",
        f"Authorization: Bearer {HEADER_SECRET}",
        clients=("claude-code", "continue"),
    )
    assert_no_crash(run)
    assert run.returncode == 0, run.stderr[-2000:]
    snap = run_cli(
        "snapshot",
        "--http",
        url,
        "--header",
        f"Authorization: Bearer {HEADER_SECRET}",
        "-o",
        str(out / "snap.json"),
    )
    assert snap.returncode == 0, snap.stderr[-2000:]
    texts = {**outputs(out), "terminal": run.stdout + run.stderr + snap.stderr}
    for name, text in texts.items():
        assert HEADER_SECRET not in text and URL_SECRET not in text, f"a secret leaked into {name}"
    start = read_events(out / "r.jsonl")[0]
    assert (
        start["target"]["headers"] == {"Authorization": "***"}
        and "access_token=***" in start["target"]["url"]
    )


def called(record) -> set[str]:
    if not record.exists():
        return set()
    return {json.loads(line)["name"] for line in record.read_text().splitlines()}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_tools_that_may_write_are_called_only_with_the_users_opt_in(tmp_path, transport):
    def run_with(name: str, *extra: str) -> set[str]:
        record = tmp_path / f"{name}.jsonl"
        out = tmp_path / name
        out.mkdir()
        run = matrix_run(
            out,
            "--server",
            f"faulty --record {record}",
            "--server-transport",
            transport,
            clients=("continue",),
            extra=extra,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        return called(record)

    assert run_with("default") == {"echo", "slow_echo"}  # read-only tools only
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        "cases:\n  write_note:\n    - name: one\n      arguments: {title: t, body: b}\n"
    )
    listed = run_with(
        "listed", "--cases", str(cases)
    )  # listing a call in a cases file is the opt-in
    assert listed == {"echo", "slow_echo", "write_note"}
    assert run_with("allowed", "--allow-writes") == {
        "echo",
        "slow_echo",
        "write_note",
        "delete_all",
    }
