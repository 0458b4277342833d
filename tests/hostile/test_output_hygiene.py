"""What commands write (issue 15, docs/security.md): no secret in any command's output, lone
surrogates written as escapes, output paths checked before the run, one run per results file,
a profile that could not be measured never a pass. Real servers, the real CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from mcp_matrix.core.events import ProfileError, RunFinished, RunStarted
from mcp_matrix.gate.checklist import evaluate
from mcp_matrix.gate.policy import load_policy
from tests.conftest import NEUTRAL_CWD, run_cli
from tests.hostile.conftest import FORMATS, assert_no_crash, matrix_run, tiny_server
from tests.hostile.test_safety import ARG_SECRET, ENV_SECRET, echo_tool


def leaky_server(tmp_path) -> str:
    leak = f"server says {ENV_SECRET} {ARG_SECRET}"
    config = {"tools": [echo_tool("echo", leak)], "leak": leak}
    return tiny_server(tmp_path, config, "--api-key", ARG_SECRET)


def test_discover_and_replay_json_never_print_a_secret_the_server_echoed(tmp_path):
    command = leaky_server(tmp_path)
    target = ("--stdio", command, "--env", f"API_TOKEN={ENV_SECRET}")
    discover = run_cli("discover", *target, "--json")
    calls = tmp_path / "live.jsonl"
    calls.write_text(json.dumps({"id": "c1", "tool": "echo", "arguments": {"text": "hi"}}) + "\n")
    replay = run_cli(
        "replay", str(calls), *target, "--json", "--results", str(tmp_path / "replay.jsonl")
    )
    for name, r in (("discover", discover), ("replay", replay)):
        assert r.returncode in (0, 1), (name, r.stderr[-2000:])
        for text in (r.stdout, r.stderr):
            assert ENV_SECRET not in text and ARG_SECRET not in text, f"a secret leaked from {name}"
        json.loads(r.stdout)  # still valid JSON after scrubbing
    assert "server says *** ***" in discover.stdout  # the leak was there, masked
    replay_file = (tmp_path / "replay.jsonl").read_text()
    assert ENV_SECRET not in replay_file and ARG_SECRET not in replay_file


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])  # JSON escapes the rest
def test_json_output_is_scrubbed_when_a_string_holds_a_unicode_line_separator(separator):
    """``discover --json`` prints such characters raw (ensure_ascii off): split there, a
    string's tail read as structure, and the secret after the separator was printed."""
    import io

    from mcp_matrix.commands.outputs import ScrubbingStream

    out = io.StringIO()
    stream = ScrubbingStream(out, [ENV_SECRET], json_lines=True)
    stream.write(json.dumps({"description": f"a{separator} {ENV_SECRET}"}, ensure_ascii=False))
    stream.write("\n")
    stream.flush()
    assert ENV_SECRET not in out.getvalue()
    assert json.loads(out.getvalue()) == {"description": f"a{separator} ***"}


def test_lone_surrogates_survive_listing_results_and_every_report(tmp_path):
    run = matrix_run(
        tmp_path, "--server", "faulty --mode surrogates", clients=["claude-code", "gemini-cli"]
    )
    assert_no_crash(run)
    assert run.returncode in (0, 1), run.stderr[-2000:]
    assert not run.of("profile-error")
    names = {t["tool"]["name"] for t in run.snapshot["tools"]}
    assert "lone\ud800surrogate" in names  # decoded back to the very same string
    answers = [e["answer"] for e in run.of("call") if e["tool"] == "echo"]
    assert answers and all("\ud800" in a["text"] for a in answers)
    for fmt in FORMATS:
        assert run.report(fmt)  # written, not a crash
    assert "\\ud800" in run.report("md")  # shown as its escape
    snap = tmp_path / "snap.json"
    r = run_cli("snapshot", "--server", "faulty --mode surrogates", "-o", str(snap))
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert "lone\ud800surrogate" in {
        t["tool"]["name"] for t in json.loads(snap.read_text())["tools"]
    }


# Permission bits do not stop root, so "read-only" is only a case for other users.
KINDS = ["directory", "fifo", "missing-folder-under-a-file"] + (
    ["read-only"] if os.geteuid() else []
)


@pytest.mark.parametrize("flag", ["--results", "--report"])
@pytest.mark.parametrize("kind", KINDS)
def test_an_unwritable_output_path_is_exit_2_before_any_server_starts(tmp_path, flag, kind):
    path = tmp_path / "out"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "missing-folder-under-a-file":
        path.write_text("a file")
        path = path / "sub" / "r.jsonl"
    else:
        path.write_text("")
        path.chmod(0o444)
    record = tmp_path / "calls.jsonl"
    value = str(path) if flag == "--results" else f"md:{path}"
    r = run_cli(
        "run", "--server", f"faulty --record {record}", flag, value, timeout=60
    )  # a FIFO hung for good
    assert r.returncode == 2, (r.returncode, r.stderr[-1500:])
    assert flag in r.stderr and str(path) in r.stderr and "Traceback" not in r.stderr
    assert not record.exists()  # no server was started, no call made


def test_two_runs_on_one_results_file_never_interleave(tmp_path):
    """The first run holds the file for as long as its server leaves a call unanswered, and
    ends only when told (SIGTERM): the second always meets it, whatever the machine's load.
    (With a slow server instead, a loaded machine let the first run end before the second
    had started, and the second then wrote the file: a test whose outcome hung on load.)"""
    results = tmp_path / "r.jsonl"
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcp_matrix",
            "run",
            "--server",
            "faulty --mode hang-on-call",
            "--client",
            "claude-code",
            "--timeout-call",
            "600",
            "--results",
            str(results),
        ],
        cwd=NEUTRAL_CWD,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (results.exists() and results.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.1)
        second = run_cli("run", "--server", "faulty", "--results", str(results), timeout=60)
        assert second.returncode == 2 and "another mcp-matrix run is writing" in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)  # ends like Ctrl-C: run-finished is written
        _, err = first.communicate(timeout=120)
    assert first.returncode == 143, err[-2000:]  # 128 + SIGTERM
    events = [json.loads(line) for line in results.read_text().splitlines()]
    assert events[0]["event"] == "run-started" and events[-1]["event"] == "run-finished"
    assert len([e for e in events if e.get("event") == "run-started"]) == 1


def test_a_profile_error_fails_the_checklist(tmp_path):
    events = [
        RunStarted(),
        ProfileError(profile="gemini-cli", error="UnicodeEncodeError: surrogates"),
        RunFinished(measured=True),
    ]
    items = {i.name: i for i in evaluate(events, load_policy(None))}
    assert items["every profile was measured"].passed is False


HOSTILE_NAME = "invoice\u202etxt.exe\x1b[2J\x07"  # displays reversed, clears a screen, rings


def test_the_html_problems_list_shows_control_and_bidi_characters_as_escapes(tmp_path):
    """A hostile tool name in the HTML report's problems list (and its data) is shown as
    visible escapes: no raw ESC, BEL or U+202E anywhere in the page."""
    config = {"tools": [echo_tool(HOSTILE_NAME, "d\x1b]0;title\x07")], "crash_on": HOSTILE_NAME}
    run = matrix_run(tmp_path, "--stdio", tiny_server(tmp_path, config), clients=("continue",))
    assert_no_crash(run)
    assert run.returncode == 1, run.stderr[-2000:]  # the crash is a broken call
    page = run.report("html")
    for raw in ("\u202e", "\x1b", "\x07"):
        assert raw not in page, f"{raw!r} reached the HTML report"
    problems = page.split('id="problem-list"', 1)[1].split("</ol>", 1)[0]
    assert "invoice\\u202etxt.exe\\x1b[2J\\x07" in problems


def test_a_secret_that_is_not_utf8_is_masked_not_a_traceback(tmp_path):
    """``--env X=$'\\xff\\xfe...'`` (bytes Python keeps as lone surrogates): finding its URL-encoded
    forms raised UnicodeEncodeError, a traceback before any server started (run, discover)."""
    from mcp_matrix.run.results import read_events
    from tests.conftest import run_cli_in_process

    target = ("--server", "memory", "--client", "claude-code", "--env", "X=\udcff\udcfeabcd")
    results = tmp_path / "r.jsonl"
    done = run_cli_in_process("run", *target, "--results", str(results), "--quiet")
    assert done.returncode == 0, done.stderr[-500:]
    assert read_events(results)[1]["snapshot"]["target"]["env"] == {"X": "***"}
    found = run_cli_in_process("discover", *target, "--json")
    assert found.returncode == 0, found.stderr[-500:]
    for text in (done.stdout, done.stderr, found.stdout, found.stderr, results.read_text()):
        assert "abcd" not in text
