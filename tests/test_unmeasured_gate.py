"""A gate never passes what it could not measure (issue 24, "A gate that passes what it could
not measure"; issue 22.13: "could not measure" goes to stderr).

Real runs through the CLI: a server whose calls hang, cut short by ``--timeout-run`` (stdio and
Streamable HTTP), and a real run in which one profile could not be measured (its
``profile-error`` added to the real results, as a worker that failed writes it). ``check`` is
exit 1 when something measured failed, else exit 3 (README: "3 the target could not be
measured, or a profile could not be"), never 0; the terminal never says "No problems to fix:
every cell ..." then, and says what was not measured on stderr.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_matrix.core.events import ProfileError, RunFinished
from mcp_matrix.run.results import ResultsWriter, read_events, read_typed
from tests.conftest import run_cli, run_cli_in_process

ALL_CLEAR = "No problems to fix: every cell is visible, intact or tolerated"


def events_of(path: Path) -> list[dict]:
    return read_events(path)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_run_cut_short_by_its_deadline_never_passes_the_gate(transport, tmp_path):
    results = tmp_path / "r.jsonl"
    r = run_cli(
        "run",
        "--server",
        "faulty --mode hang-on-call",
        "--server-transport",
        transport,
        "--client",
        "claude-code",
        "--client",
        "zed",
        "--timeout-run",
        "8",
        "--results",
        str(results),
        timeout=120,
    )
    events = events_of(results)
    not_made = [e for e in events if e["event"] == "skipped" and e.get("profile")]
    assert not_made and all("--timeout-run 8 s" in e["reason"] for e in not_made[:1])
    assert r.returncode in (1, 3), r.stdout  # findings, or could not measure: never a pass
    assert ALL_CLEAR not in r.stdout
    assert "could not measure" in r.stderr and "--timeout-run 8 s" in r.stderr
    assert "could not measure" not in r.stdout.split("\n\n", 1)[0]  # the header: stderr has it
    # the calls the deadline ruled out are not blamed on the safety policy
    policy = sum(1 for e in events if e["event"] == "skipped" and not e.get("profile"))
    assert f"{policy} call(s) not made (safety policy or no case)" in r.stdout
    assert f"{len(not_made)} call(s) not made: not measured, so not passed" in r.stdout

    checklist = tmp_path / "checklist.md"
    check = run_cli_in_process("check", str(results), "-o", str(checklist))
    assert "NOT MEASURED every planned call was made" in check.stdout
    assert "every planned call was made (not measured)" in checklist.read_text(encoding="utf-8")
    assert "--timeout-run 8 s" in check.stdout
    assert "could not measure" in check.stderr
    failed = [line for line in check.stdout.splitlines() if line.startswith("FAILED ")]
    assert check.returncode == (1 if failed else 3), check.stdout


def test_a_profile_that_could_not_be_measured_is_never_an_all_clear(tmp_path):
    clean = tmp_path / "clean.jsonl"
    r = run_cli(
        "run",
        "--server",
        "memory",
        "--client",
        "claude-code",
        "--client",
        "zed",
        "--results",
        str(clean),
    )
    assert r.returncode == 0 and ALL_CLEAR in r.stdout, r.stdout
    # zed's worker failed after its discovery cells were written (a UnicodeEncodeError on a
    # latin-1 session id did this): the results hold its profile-error before run-finished
    events = read_typed(clean)
    broken = tmp_path / "profile-error.jsonl"
    with broken.open("w", encoding="utf-8") as handle:
        writer = ResultsWriter(handle)
        for e in events:
            if isinstance(e, RunFinished):
                writer(ProfileError(profile="zed", error="UnicodeEncodeError: 'latin-1' codec"))
            writer(e)
    report = run_cli_in_process("report", str(broken))
    assert ALL_CLEAR not in report.stdout
    assert "zed (not measured: profile-error)" in report.stdout
    assert "could not measure: profile zed: UnicodeEncodeError" in report.stderr
    check = run_cli_in_process("check", str(broken))
    assert check.returncode == 3, check.stdout
    assert "NOT MEASURED every profile was measured" in check.stdout
    assert "could not measure" in check.stderr
