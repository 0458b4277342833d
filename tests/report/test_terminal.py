"""The terminal writer: the problems to fix first (each root cause once), then the grid."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import NEUTRAL_CWD, run_cli
from tests.report import events as ev
from tests.report.conftest import render_terminal


def test_each_root_cause_is_printed_once_with_its_fix_before_the_grid(full_events):
    text = render_terminal(full_events, details=True)
    lines = text.splitlines()
    # after the header and what could not be measured (a profile-error): the problems to fix
    first = next(line for line in lines[1:] if line and not line.startswith(("could not", " ")))
    assert first.startswith("Problems to fix, worst first")
    i = next(n for n, line in enumerate(lines) if "hidden" in line and "memory_reflect:" in line)
    assert any(line.strip().startswith("fix: Flatten the root") for line in lines[i : i + 4])
    assert text.count("fix: Flatten the root") == 1
    assert text.index("Problems to fix") < text.index("\ntool ")


def test_root_causes_are_ranked_worst_first(full_events):
    lines = [
        line for line in render_terminal(full_events).splitlines() if line[:4].strip().endswith(".")
    ]
    verdicts = [line.split()[1] for line in lines]
    assert verdicts[0] == "broken" and verdicts.index("silent-loss") < verdicts.index("hidden")


def test_control_characters_from_the_server_do_not_reach_the_terminal(full_events):
    text = render_terminal(full_events)
    assert "\x07" not in text and "\x1b" not in text
    assert "30.0s\\x07 stderr: Traceback" in text


def test_without_details_only_the_grid_and_legend_are_printed(full_events):
    text = render_terminal(full_events, details=False)
    assert "fix:" not in text and "memory_store" in text


def test_the_grid_fits_120_columns_with_one_letter_client_codes(full_events):
    text = render_terminal(full_events, details=True)
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "clients:  A " in text


def test_visible_and_intact_look_different_in_the_grid(full_events):
    text = render_terminal(full_events, details=False)
    assert "○ visible" in text or "✓ intact" in text
    from mcp_matrix.core.verdicts import SYMBOL

    assert SYMBOL["visible"] != SYMBOL["intact"]


def test_an_interrupted_run_is_labelled_unfinished():
    assert "unfinished run" in render_terminal(ev.interrupted_run()).splitlines()[0]


def test_a_session_finding_every_tool_carries_is_blamed_on_the_server_not_on_one_tool():
    """The handshake or protocol era (simulate/session.py) breaks the session for every tool,
    and each tool's own cell says so: the cause is the server, not whichever tool came last."""
    era = ev._finding(
        "modern-refused",
        "the client speaks only 2026-07-28; the session never starts",
        "",
        "handshake",
        [{"level": "code", "source": "mcp mcp/client/client.py@2.3.0"}],
        radius="session",
    )
    events = [ev._run_started(), ev._snapshot()] + [
        ev._discovery("python-sdk-modern", i, "session-broken", [era]) for i in range(len(ev.TOOLS))
    ]
    causes = [line for line in render_terminal(events).splitlines() if line.startswith(" 1. ")]
    assert causes == [
        (
            f" 1. session-broken  the server (all {len(ev.TOOLS)} tools): the client speaks only "
            "2026-07-28; the session never starts"
        )
    ]


def test_a_cause_hitting_only_clients_not_required_by_default_comes_after_those_that_are():
    """A pinned-era configuration (required_by_default: false) that cannot start a session is a
    true verdict, but the first problem a newcomer reads is the one in a client the gate requires."""
    era = ev._finding(
        "modern-refused",
        "the client speaks only 2026-07-28; the session never starts. Fix: support both eras.",
        "",
        "handshake",
        [],
        radius="session",
    )
    profiles = [
        {"name": "cursor", "required_by_default": True},
        {"name": "python-sdk-modern", "required_by_default": False},
    ]
    array = ev._finding(
        "removed-by-client",
        "the client drops format",
        "/inputSchema/properties/q/format",
        "strip-keywords",
        [],
    )
    events = [
        ev._run_started(profiles=profiles),
        ev._snapshot(),
        ev._discovery("cursor", 0, "degraded", [array]),
    ]
    events += [
        ev._discovery("python-sdk-modern", i, "session-broken", [era]) for i in range(len(ev.TOOLS))
    ]
    lines = render_terminal(events).splitlines()
    causes = [line.split()[1] for line in lines if line[:4].strip().endswith(".")]
    assert causes == ["degraded", "session-broken"]
    text = " ".join(lines)
    assert "not required by default" in text
    assert (
        "Fix: support both eras" not in text
    )  # the advice line says it; the title does not repeat it


HINT = "the server ran with a minimal environment"
START_FAILURES = {
    # a bug in the server's code: no variable would have helped
    "zero-division": ("import sys\nprint('starting', file=sys.stderr)\n1/0\n", False),
    "syntax": ("def broken(:\n    pass\n", False),
    # reading a variable the minimal environment did not pass on
    "environ-key": ("import os\nkey = os.environ['WEATHER_API_KEY']\n", True),
    "named": ("raise RuntimeError('WEATHER_API_KEY must be given')\n", True),
    "import": ("import weather_sdk_not_installed_here\n", True),  # PYTHONPATH is not passed on
    "no-traceback": ("import sys\nsys.exit('error: WEATHER_API_KEY is not set')\n", True),
}


@pytest.mark.parametrize("case", sorted(START_FAILURES))
def test_the_minimal_environment_hint_is_printed_only_when_it_can_be_the_cause(tmp_path, case):
    """A stdio server that dies at start: the --env hint was printed under any Python
    traceback, a ZeroDivisionError or a SyntaxError too, where it is beside the point. It now
    follows a traceback only when it reads the environment, names a variable, or fails an import
    (PYTHONPATH is not passed on); without a traceback it is printed as before."""
    source, hinted = START_FAILURES[case]
    server = tmp_path / "server.py"
    server.write_text(source, encoding="utf-8")
    r = run_cli("run", "--stdio", f"{sys.executable} {server}", "--client", "claude-code")
    assert r.returncode == 3 and "could not measure" in r.stderr, r.stderr[-2000:]
    assert ('stderr:   File "' in r.stderr) is (case != "no-traceback"), r.stderr[-2000:]
    assert (HINT in r.stderr) is hinted, r.stderr[-2000:]
    inherited = run_cli("run", "--stdio", f"{sys.executable} {server}", "--inherit-env")
    assert inherited.returncode == 3 and HINT not in inherited.stderr  # it had every variable


def test_no_minimal_environment_hint_after_ctrl_c_while_connecting(tmp_path):
    """Ctrl-C while the server starts is the user's, not the environment's: "interrupted while
    connecting to the server" was followed by the --env hint."""
    marker, server = tmp_path / "started", tmp_path / "server.py"
    server.write_text(
        f"import pathlib, time\npathlib.Path({str(marker)!r}).write_text('up')\ntime.sleep(120)\n",
        encoding="utf-8",
    )
    cli = [sys.executable, "-m", "mcp_matrix", "run", "--stdio", f"{sys.executable} {server}"]
    proc = subprocess.Popen(
        [*cli, "--client", "claude-code", "--timeout-initialize", "120"],
        cwd=NEUTRAL_CWD,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(1200):  # the server runs: the run is connecting (at most 120 s)
            if marker.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert "interrupted while connecting to the server" in err, err[-2000:]
    assert HINT not in err, err[-2000:]
