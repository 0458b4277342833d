"""Every target kind reaches every front end: the CLI, ``diff``, the pytest plugin and every
report, against a real server over legacy HTTP+SSE on 127.0.0.1.

Each CLI test here failed before the target kinds became one registry (``mcp_matrix.targets.kinds.KINDS``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_matrix.targets.kinds import KINDS, Target
from mcp_matrix.targets.warm_start import module_argv
from tests.conftest import run_cli

LISTENING = "MCP_MATRIX_LISTENING "


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    """The GET stream of the bundled memory server, serving legacy HTTP+SSE on 127.0.0.1."""
    proc = subprocess.Popen(
        module_argv(("matrix_servers.memory", "--transport", "sse", "--port", "0")),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout
        for line in proc.stdout:
            if line.startswith(LISTENING):
                yield line[len(LISTENING) :].strip()
                break
        else:
            pytest.fail(f"the SSE server exited before listening (code {proc.wait()})")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def sse_results(sse_url, tmp_path_factory) -> Path:
    """A run's results stream against the SSE server (discovery only: no calls needed)."""
    path = tmp_path_factory.mktemp("sse") / "results.jsonl"
    r = run_cli(
        "run",
        "--sse",
        sse_url,
        "--client",
        "claude-code",
        "--no-auto-cases",
        "--results",
        str(path),
    )
    assert r.returncode == 0, r.stderr
    return path


def test_diff_takes_an_sse_side(sse_url):
    r = run_cli("diff", f"sse:{sse_url}", "server:memory", timeout=180)
    assert r.returncode == 0, r.stderr
    assert f"taking the OLD snapshot: sse:{sse_url}" in r.stderr


@pytest.mark.parametrize("fmt", ["md", "junit", "html"])
def test_reports_describe_an_sse_target_as_sse(sse_url, sse_results, fmt):
    r = run_cli("report", str(sse_results), "--format", fmt)
    assert r.returncode in (0, 1), r.stderr
    assert f"sse: {sse_url}" in r.stdout and f"http: {sse_url}" not in r.stdout


def test_the_pytest_plugin_targets_an_sse_server(sse_url, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + ["--mcp-sse", sse_url, "--mcp-client", "claude-code", "--mcp-timeout-initialize", "60"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "mcp-matrix::memory_reflect[claude-code]" in r.stdout


@pytest.mark.parametrize(
    ("header", "message"),
    [("Bad Name: x", "not a valid header"), ("X-Token: caf\u00e9\u2603", "only Latin-1")],
)
def test_an_sse_target_checks_its_headers_as_an_http_target_does(header, message):
    for option in ("--http", "--sse"):
        r = run_cli("snapshot", option, "http://127.0.0.1:9/x", "--header", header)
        assert r.returncode == 2, (option, r.stderr)
        assert message in r.stderr and "--header" in r.stderr, (option, r.stderr)


def test_an_sse_url_without_a_host_is_refused_before_connecting():
    r = run_cli("snapshot", "--sse", "http://")
    assert r.returncode == 2, r.stderr
    assert "names no host" in r.stderr and "--sse" in r.stderr


def test_every_kind_has_a_cli_option_a_plugin_option_and_a_description():
    assert set(KINDS) >= {"stdio", "http", "sse", "server"}
    for name, kind in KINDS.items():
        assert kind.option == f"--{name}" and kind.plugin_option == f"--mcp-{name}"
    line = Target.sse("http://127.0.0.1:1/sse").describe()
    from mcp_matrix.targets.kinds import describe_line

    assert describe_line(line) == "sse: http://127.0.0.1:1/sse"


def test_calibrate_refuses_an_sse_target_with_a_clear_error():
    # before: a traceback (a bundled server's argv asked of an SSE target), exit 1
    r = run_cli("calibrate", "--client", "claude-code", "--sse", "http://127.0.0.1:9/sse")
    assert r.returncode == 2, r.stderr
    assert "--sse" in r.stderr and "cannot be calibrated against" in r.stderr
    assert "Traceback" not in r.stderr
