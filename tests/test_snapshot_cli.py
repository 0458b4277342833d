"""``mcp-matrix snapshot`` through the real CLI, against real servers."""

from __future__ import annotations

import json

import pytest

from tests.conftest import installed_tool, read_json


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


def test_a_snapshot_of_the_anyof_variant_shows_the_root_combinator(cli, tmp_path, transport):
    out = tmp_path / "snap.json"
    r = cli(
        "snapshot",
        "--server",
        "memory --schema anyof",
        "--server-transport",
        transport,
        "-o",
        str(out),
    )
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


def test_a_third_party_server_installed_from_pypi_is_snapshotted_correctly(cli, tmp_path):
    exe = installed_tool("mcp-server-time")
    assert exe, "the test set-up installs mcp-server-time from PyPI (extra 'test')"
    out = tmp_path / "time.json"
    r = cli("snapshot", "--stdio", f"{exe} --local-timezone UTC", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = read_json(out)
    assert doc["serverInfo"]["name"] == "mcp-time"
    assert doc["protocolVersion"] == "2025-11-25"
    names = sorted(e["tool"]["name"] for e in doc["tools"])
    assert names == ["convert_time", "get_current_time"]
    assert all(e["tool"]["annotations"]["readOnlyHint"] is True for e in doc["tools"])


def test_summarising_a_snapshot_file_lists_tools_and_notable_features(cli, tmp_path):
    out = tmp_path / "snap.json"
    cli("snapshot", "--server", "memory --schema anyof", "-o", str(out))
    r = cli("snapshot", str(out))
    assert r.returncode == 0
    assert "memory_reflect" in r.stdout and "root anyOf" in r.stdout


def test_snapshot_json_goes_to_stdout_alone_when_no_file_is_given(cli):
    r = cli("snapshot", "--server", "memory")
    assert r.returncode == 0
    assert json.loads(r.stdout)["format"] == "mcp-matrix.snapshot"


def test_header_and_env_secrets_never_appear_in_the_snapshot(cli, tmp_path):
    out = tmp_path / "snap.json"
    r = cli(
        "snapshot",
        "--stdio",
        f"{installed_tool('mcp-server-time')} --local-timezone UTC",
        "--env",
        "API_TOKEN=s3cr3t-value",
        "-o",
        str(out),
    )
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
def test_bad_input_is_a_clear_error_with_exit_2_and_no_traceback(cli, args, message):
    r = cli("snapshot", *args)
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr
