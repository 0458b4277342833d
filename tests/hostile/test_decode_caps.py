"""Every HTTP body is capped while it is decoded, and a body a client cannot read is named at
once instead of waiting for the call's timeout (issue 24, docs/security.md).

Each test starts tests/hostile/deadline_server.py in one mode and runs the real CLI against it;
memory is the peak of the largest process of the run (tests/hostile/peak_rss.py), bounded far
above the measured figure and far below what the attack reached before the fix.
"""

from __future__ import annotations

import time

import pytest

from mcp_matrix.core.events import CallCell
from mcp_matrix.report.advice import advice_for
from mcp_matrix.run.results import read_events, read_typed
from tests.conftest import run_cli
from tests.hostile.conftest import measured_cli
from tests.hostile.test_deadline_wire import hostile

MEMORY_BOUND_MB = 400  # docs/security.md: the 32 MiB cap, 64 KiB pieces, the interpreter


def run_args(tmp_path, flag: str, url: str, *extra: str) -> tuple[str, ...]:
    """``run`` against the hostile server, one profile, a results file."""
    results = str(tmp_path / "r.jsonl")
    return ("run", flag, url, "--client", "cursor", "--results", results, *extra)


def test_a_nested_gzip_body_is_capped_as_it_inflates(tmp_path):
    """``Content-Encoding: gzip, gzip``: about 2 KB on the wire, 1 GiB inflated. Was: 2.1 GB
    peak (httpx inflated the inner layer's whole output in one piece), against the 32 MiB cap."""
    with hostile("http-gzip-gzip") as url:
        args = run_args(tmp_path, "--http", url, "--timeout-run", "60")
        r, peak = measured_cli(tmp_path, *args, timeout=300)
    assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr[-2000:]
    error = read_events(tmp_path / "r.jsonl")[-1]["error"]
    assert error["kind"] == "protocol-error" and "over the 32.0 MiB cap" in error["message"]
    assert peak < MEMORY_BOUND_MB, peak


def test_a_legacy_sse_post_answered_with_a_gzip_bomb_is_never_inflated(tmp_path):
    """A 202 whose body is 1 MB of gzip inflating to 1 GiB. Was: 4.2 GB peak, the run 99 s
    past its deadline. Now a 2xx body is never read: the call waits for its answer on the
    stream, as a legacy client does, and the run ends."""
    with hostile("sse-gzip-bomb") as url:
        args = run_args(tmp_path, "--sse", url, "--timeout-call", "5", "--timeout-run", "30")
        r, peak = measured_cli(tmp_path, *args, timeout=300)
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    events = read_events(tmp_path / "r.jsonl")
    assert events[-1]["event"] == "run-finished"
    assert peak < MEMORY_BOUND_MB, peak


@pytest.mark.parametrize(
    "mode, words",
    [
        ("http-utf16", ["charset=utf-16", "UTF-8 JSON"]),
        ("http-sse-as-json", ["server-sent events", "labelled application/json"]),
        ("http-brotli", ["Content-Encoding 'br'", "did not offer"]),
        ("http-reset", ["connection-lost", "reset or closed", "HTTP logs"]),
    ],
)
def test_a_body_a_client_cannot_read_is_named_at_once_not_a_timeout(tmp_path, mode, words):
    """Was: each call waited its whole timeout and read "the timeout is ours: a slow or loaded
    machine can cause it"; a reset was ``server-exited`` with stdio's advice."""
    with hostile(mode) as url:
        started = time.monotonic()
        r = run_cli(*run_args(tmp_path, "--http", url, "--timeout-call", "60"), timeout=300)
        elapsed = time.monotonic() - started
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    calls = [e for e in read_events(tmp_path / "r.jsonl") if e["event"] == "call"]
    assert calls, r.stdout[-2000:]
    for call in calls:
        assert call["verdict"] == "broken", call
        assert all(w in call["reason"] for w in words), call["reason"]
        assert "the timeout is ours" not in call["reason"] and "stdout" not in call["reason"]
    assert elapsed < 60, elapsed  # one call timeout: nothing waited for it


def test_a_reset_http_connection_gets_http_advice_not_stdio_advice(tmp_path):
    """Issue 22.6: a reset was ``server-exited`` and its fix read "nothing but JSON-RPC on stdout
    (log to stderr)", which an HTTP server cannot act on."""
    with hostile("http-reset") as url:
        r = run_cli(*run_args(tmp_path, "--http", url), timeout=300)
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    calls = [e for e in read_typed(tmp_path / "r.jsonl") if isinstance(e, CallCell)]
    assert calls
    for cell in calls:
        advice = advice_for(cell) or ""
        assert "HTTP" in advice and "stdout" not in advice, advice
