"""A run that always ends: a hanging server through the real CLI, every cell measured or explained."""

from __future__ import annotations

from tests.hostile.conftest import assert_no_crash, matrix_run

THREE = ("claude-code", "cursor", "zed")


def _explained(run, clients) -> dict[tuple[str, str, str], str]:
    """Every (profile, tool, case) the run planned, with its verdict or why it was not called."""
    planned = {(e["tool"], e["case"]) for e in run.of("call")} | {
        (e["tool"], e["case"]) for e in run.of("skipped") if e.get("profile")
    }
    out = {}
    for e in run.of("call"):
        out[(e["profile"], e["tool"], e["case"])] = e["verdict"]
    for e in run.of("skipped"):
        if e.get("profile"):
            out[(e["profile"], e["tool"], e["case"])] = e["reason"]
    missing = {(p, t, c) for p in clients for t, c in planned} - set(out)
    assert not missing, f"cells neither measured nor explained: {sorted(missing)}"
    return out


def test_after_calls_time_out_the_circuit_breaker_reports_the_rest_instead_of_waiting(tmp_path):
    run = matrix_run(
        tmp_path,
        "--server",
        "faulty --mode hang-on-call",
        clients=THREE,
        extra=("--jobs", "1"),
        timeout=240,
    )
    assert_no_crash(run)
    assert run.returncode == 1, run.stderr[-2000:]  # the calls that were made are broken
    cells = _explained(run, THREE)
    assert {t for _, t, _ in cells} == {
        "echo",
        "slow_echo",
    }  # the read-only tools; the others are never called
    broken = [e for e in run.of("call") if e["verdict"] == "broken"]
    assert broken and all("the timeout is ours" in e["reason"] for e in broken)
    # One profile at a time: the first waits on each tool, the others are told why they did not.
    assert {e["profile"] for e in broken} == {"claude-code"}
    reasons = [cells[("zed", t, "auto")] for t in ("echo", "slow_echo")]
    assert all("circuit breaker" in r and "--no-circuit-breaker" in r for r in reasons), reasons


def test_a_run_deadline_ends_a_run_against_a_server_that_never_answers_calls(tmp_path):
    # Each call could wait 600 s and the breaker is off: only the deadline can end this run
    # inside the test's bound (240 s).
    run = matrix_run(
        tmp_path,
        "--server",
        "faulty --mode hang-on-call",
        clients=THREE,
        extra=("--timeout-call", "600", "--no-circuit-breaker", "--timeout-run", "20"),
        timeout=240,
    )
    assert_no_crash(run)
    assert run.returncode == 3, run.stderr[
        -2000:
    ]  # not fully measured, and no finding over the threshold
    assert run.finished["deadline_passed"] is True and run.finished["interrupted"] is False
    cells = _explained(run, THREE)
    assert cells and all("--timeout-run 20 s" in why for why in cells.values())


def test_a_handshake_that_hangs_is_tried_twice_and_the_report_says_the_bound_is_ours(tmp_path):
    run = matrix_run(
        tmp_path,
        "--server",
        "faulty --mode hang",
        clients=THREE,
        extra=("--timeout-initialize", "2"),
        timeout=120,
    )
    assert_no_crash(run)
    assert run.returncode == 3
    message = run.finished["error"]["message"]
    assert (
        "within 4.0s" in message
        and "the first waited 2 s" in message
        and "the timeout is ours" in message
    )


def test_a_tool_list_that_times_out_names_the_option_that_bounds_it(tmp_path):
    # The handshake is answered (1 s late, inside its bound); tools/list is not, within 0.3 s.
    run = matrix_run(
        tmp_path,
        "--server",
        "faulty --mode slow --delay 1",
        clients=("claude-code",),
        extra=("--timeout-initialize", "10", "--timeout-list", "0.3"),
        timeout=120,
    )
    assert_no_crash(run)
    assert run.returncode == 3, run.stderr[-2000:]
    message = run.finished["error"]["message"]
    assert "tools/list got no answer within 0.3s" in message
    assert "--timeout-list" in message and "the timeout is ours" in message
    assert "--timeout-list" in run.stdout + run.stderr  # the user reads it, not only the file
