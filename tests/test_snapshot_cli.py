"""``mcp-matrix snapshot`` through the real CLI, against real servers."""

from __future__ import annotations

import json

import pytest

from tests.conftest import installed_tool, read_json, run_cli_in_process


@pytest.fixture
def snapshot_cli(shared_work):
    """``snapshot ARGS -o FILE`` through the real CLI, once a test run for each ARGS (whichever
    xdist worker a test runs on): tests that read the same snapshot (its file, the CLI's answer)
    share one real server start."""
    return lambda *args: shared_work.cli("snapshot", *args, to="-o", name="snap.json")


TIME_WITH_A_SECRET = ("--env", "API_TOKEN=s3cr3t-value")


def test_a_snapshot_of_the_flat_memory_server_shows_the_amended_schema(cli, tmp_path, transport):
    out = tmp_path / "snap.json"
    r = cli("snapshot", "--server", "memory", "--server-transport", transport, "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = read_json(out)
    assert doc["format"] == "mcp-matrix.snapshot" and doc["version"] == 2
    tools = {e["tool"]["name"]: e["tool"] for e in doc["tools"]}
    reflect = tools["memory_reflect"]["inputSchema"]
    assert reflect["type"] == "object" and reflect["required"] == ["action"]
    assert reflect["additionalProperties"] is False
    assert not {"anyOf", "oneOf", "allOf"} & set(reflect)
    assert {"action", "agent_id", "agent", "text", "target", "confidence"} <= set(
        reflect["properties"]
    )


def test_a_snapshot_of_the_anyof_variant_shows_the_root_combinator(snapshot_cli, transport):
    r, out = snapshot_cli("--server", "memory --schema anyof", "--server-transport", transport)
    assert r.returncode == 0, r.stderr
    reflect = {e["tool"]["name"]: e["tool"] for e in read_json(out)["tools"]}["memory_reflect"][
        "inputSchema"
    ]
    assert reflect["anyOf"] == [{"required": ["agent_id"]}, {"required": ["agent"]}]


def test_a_snapshot_records_page_indexes(cli, tmp_path):
    out = tmp_path / "snap.json"
    assert cli("snapshot", "--server", "memory --page-size 2", "-o", str(out)).returncode == 0
    doc = read_json(out)
    assert [p["count"] for p in doc["pages"]] == [2, 2, 2, 1]
    assert [e["page"] for e in doc["tools"]] == [0, 0, 1, 1, 2, 2, 3]


def test_a_third_party_server_installed_from_pypi_is_snapshotted_correctly(snapshot_cli):
    exe = installed_tool("mcp-server-time")
    assert exe, "the test set-up installs mcp-server-time from PyPI (extra 'test')"
    # the secret's test reads the same snapshot (the secret is an environment the server ignores)
    r, out = snapshot_cli("--stdio", f"{exe} --local-timezone UTC", *TIME_WITH_A_SECRET)
    assert r.returncode == 0, r.stderr
    doc = read_json(out)
    assert doc["serverInfo"]["name"] == "mcp-time"
    assert doc["protocolVersion"] == "2025-11-25"
    names = sorted(e["tool"]["name"] for e in doc["tools"])
    assert names == ["convert_time", "get_current_time"]
    assert all(e["tool"]["annotations"]["readOnlyHint"] is True for e in doc["tools"])


def test_summarising_a_snapshot_file_lists_tools_and_notable_features(cli, snapshot_cli):
    _, out = snapshot_cli("--server", "memory --schema anyof", "--server-transport", "stdio")
    r = cli("snapshot", str(out))
    assert r.returncode == 0
    assert "memory_reflect" in r.stdout and "root anyOf" in r.stdout


def test_snapshot_json_goes_to_stdout_alone_when_no_file_is_given(cli):
    r = cli("snapshot", "--server", "memory")
    assert r.returncode == 0
    assert json.loads(r.stdout)["format"] == "mcp-matrix.snapshot"


def test_snapshot_to_a_file_prints_one_summary_line_not_the_table(cli, tmp_path):
    # the file is the point: a row per tool on stderr was most of a 5,000-tool snapshot's CPU
    out = tmp_path / "snap.json"
    r = cli("snapshot", "--server", "memory --page-size 2", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "memory" in lines[0] and "7 tools on 4 page(s)" in lines[0]
    assert f"written to {out}" in " ".join(r.stderr.split())
    assert "memory_reflect" not in r.stderr  # no row per tool
    assert len(read_json(out)["tools"]) == 7


def test_snapshot_to_a_file_with_verbose_also_prints_every_tool(cli, tmp_path):
    out = tmp_path / "snap.json"
    r = cli("snapshot", "--server", "memory --page-size 2", "-o", str(out), "--verbose")
    assert r.returncode == 0, r.stderr
    assert "7 tools on 4 page(s)" in r.stderr
    names = [e["tool"]["name"] for e in read_json(out)["tools"]]
    assert all(name in r.stderr for name in names)  # the table: a row per tool


def test_header_and_env_secrets_never_appear_in_the_snapshot(snapshot_cli):
    exe = installed_tool("mcp-server-time")
    r, out = snapshot_cli("--stdio", f"{exe} --local-timezone UTC", *TIME_WITH_A_SECRET)
    assert r.returncode == 0, r.stderr
    assert "s3cr3t-value" not in out.read_text() and "s3cr3t-value" not in r.stderr


def test_a_server_that_crashes_during_initialize_gives_exit_3_and_keeps_its_stderr(cli, tmp_path):
    out = tmp_path / "snap.json"
    r = cli(
        "snapshot",
        "--server",
        "faulty --mode crash-on-initialize",
        "-o",
        str(out),
        "--timeout-initialize",
        "5",
    )
    assert r.returncode == 3
    doc = read_json(out)
    assert doc["error"]["kind"] == "server-exited"
    assert any("boom" in line for line in doc["error"]["stderr_tail"])
    assert "Traceback" not in r.stderr


def test_a_hanging_server_ends_in_a_timeout_finding_not_a_hang(cli, tmp_path):
    out = tmp_path / "snap.json"
    r = cli(
        "snapshot",
        "--server",
        "faulty --mode hang",
        "-o",
        str(out),
        "--timeout-initialize",
        "2",
        timeout=30,
    )
    assert r.returncode == 3
    assert read_json(out)["error"]["kind"] == "timeout"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--server", "memroy"], "did you mean 'memory'"),
        (["--http", "ftp://x"], "expected an http:// or https:// URL"),
        (["no-such-file.json"], "no such snapshot file"),
        ([], "no target"),
    ],
)
def test_bad_input_is_a_clear_error_with_exit_2_and_no_traceback(args, message):
    r = run_cli_in_process("snapshot", *args)  # refused before any server starts: no process
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr
