"""The release checklist's evolution items on the billing story, through the real ``check`` command.

(a) no breaking change against the baseline without an alias; (b) a deprecated alias is still
accepted, proved by replaying its recorded old-name calls against the live target; (c) an alias
is retired only once the live, retry and transcript signals have been quiet long enough.
Results come from real ``run``s (discovery only, so each is one server start); the alias
replays start their own servers.
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import matrix_servers.billing
import pytest

from mcp_matrix.commands.cli import main

CORPORA = Path(matrix_servers.billing.__file__).parent / "corpora"
SIGNALS = f"recorded_calls: [{CORPORA / 'live.jsonl'}, {CORPORA / 'retry.jsonl'}, {CORPORA / 'transcript.jsonl'}]\n"
ALIAS = "{tool: update_account, old: customer_id, new: account_id, calls: %s, retire: %s}"
# The last call using customer_id is live-0040 at 2026-09-15T03:44Z: with 50 quiet days needed,
# retirement is blocked on 2026-10-01 and allowed from 2026-11-04.
NOT_QUIET, QUIET = "2026-10-01", "2100-01-01"


@pytest.fixture(scope="module")
def story(tmp_path_factory, shared_work) -> Path:
    """v1 and v2 snapshots (the baselines: taken once a test run, diff and replay use the same)
    and results of discovery-only runs of v2 and v3."""
    d = tmp_path_factory.mktemp("story")
    (d / "no-cases.yaml").write_text("cases: {}\n")

    def snapshot(version: str) -> None:
        shutil.copy(
            shared_work.snapshot_file(f"billing --version {version}"), d / f"v{version}.json"
        )

    def run(version: str) -> None:
        code = main(
            [
                "run",
                "--server",
                f"billing --version {version}",
                "--client",
                "continue",
                "--no-auto-cases",
                "--cases",
                str(d / "no-cases.yaml"),
                "--results",
                str(d / f"r{version}.jsonl"),
                "--quiet",
                "--timeout-initialize",
                "60",
            ]
        )
        assert code == 0

    with ThreadPoolExecutor(max_workers=4) as pool:
        for f in [
            pool.submit(snapshot, "1"),
            pool.submit(snapshot, "2"),
            pool.submit(run, "2"),
            pool.submit(run, "3"),
        ]:
            f.result()
    return d


def policy(d: Path, name: str, text: str) -> str:
    p = d / name
    p.write_text("required_clients: [continue]\nfail_on: [broken]\n" + text)
    return str(p)


def check(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def line(out: str, start: str) -> str:
    return next(x for x in out.splitlines() if x.startswith(start))


# -- (c) retiring the alias ------------------------------------------------------------------------


def test_retiring_the_alias_is_blocked_while_the_frozen_caller_signals_are_not_quiet(story, capsys):
    p = policy(
        story,
        "retire.yaml",
        f"baseline: v2.json\nretire_quiet_days: 50\naliases:\n"
        f"  - {ALIAS % (CORPORA / 'live.jsonl', 'true')}\n" + SIGNALS,
    )
    code, out, _ = check(capsys, str(story / "r3.jsonl"), "--policy", p, "--now", NOT_QUIET)
    assert code == 1
    item = line(out, "FAILED retiring alias update_account.customer_id -> account_id")
    assert "retirement blocked (marked retire: true)" in item
    assert (
        "live: last use 2026-09-15T03:44:17Z (live-0040 in live.jsonl), 15 days before 2026-10-01: "
        "not quiet (quiet from 2026-11-04)" in item
    )
    assert "retry: last use 2026-09-13T07:36:06Z (retry-0020 in retry.jsonl)" in item
    assert "transcript: last use 2026-09-10T13:18:26Z (tr-0039 in transcript.jsonl)" in item
    # the breaking alias-removed change is the retirement itself: covered by the alias, judged by (c)
    assert (
        "passed breaking change update_account:alias-removed:customer_id is covered by an alias"
        in out
    )


def test_retiring_the_alias_is_allowed_once_every_signal_has_been_quiet_long_enough(story, capsys):
    p = policy(
        story,
        "retire.yaml",
        f"baseline: v2.json\nretire_quiet_days: 50\naliases:\n"
        f"  - {ALIAS % (CORPORA / 'live.jsonl', 'true')}\n" + SIGNALS,
    )
    code, out, _ = check(capsys, str(story / "r3.jsonl"), "--policy", p, "--now", QUIET)
    assert code == 0, out
    assert "passed retiring alias update_account.customer_id -> account_id" in out
    assert "retirement allowed (marked retire: true)" in out


def test_a_signal_without_a_calls_file_is_not_quiet(story, capsys):
    p = policy(
        story,
        "two-signals.yaml",
        f"aliases:\n  - {ALIAS % (CORPORA / 'live.jsonl', 'true')}\n"
        f"recorded_calls: [{CORPORA / 'retry.jsonl'}]\n",
    )
    code, out, _ = check(capsys, str(story / "r3.jsonl"), "--policy", p, "--now", QUIET)
    assert code == 1
    assert "transcript: not measured (list a transcript calls file under recorded_calls)" in out


# -- (b) the alias is still accepted, against the live target -----------------------------------------


def test_with_the_alias_in_place_the_old_name_is_still_accepted(story, capsys):
    p = policy(
        story,
        "keep.yaml",
        f"baseline: v1.json\naliases:\n  - {ALIAS % (CORPORA / 'live.jsonl', 'false')}\n",
    )
    code, out, _ = check(
        capsys,
        str(story / "r2.jsonl"),
        "--policy",
        p,
        "--server",
        "billing --version 2",
        "--timeout-initialize",
        "60",
    )
    assert code == 0, out
    item = line(
        out, "passed deprecated alias update_account.customer_id -> account_id is still accepted"
    )
    # live-0023 passes a customer id: refused under either name, so not the alias's fault
    assert "97.5% (39 of 40) accepted, 2.5% (1 of 40) refused under both names" in item
    assert "0.0% (0 of 40) refused because of the old name" in item
    assert "passed no breaking change against the baseline for continue" in out


def test_after_an_in_place_rename_the_alias_is_refused_and_its_retirement_is_caught(story, capsys):
    p = policy(
        story,
        "keep.yaml",
        f"baseline: v1.json\naliases:\n  - {ALIAS % (CORPORA / 'live.jsonl', 'false')}\n" + SIGNALS,
    )
    code, out, _ = check(
        capsys,
        str(story / "r3.jsonl"),
        "--policy",
        p,
        "--server",
        "billing --version 3",
        "--now",
        NOT_QUIET,
        "--timeout-initialize",
        "60",
    )
    assert code == 1
    item = line(
        out, "FAILED deprecated alias update_account.customer_id -> account_id is still accepted"
    )
    assert "the new schema of update_account no longer declares customer_id" in item
    assert "97.5% (39 of 40) refused because of the old name" in item
    assert "(refused with customer_id, delivered with account_id)" in item
    assert "FAILED retiring alias" in out and "the new schema no longer declares customer_id" in out


def test_proving_an_alias_needs_a_live_target(story, capsys):
    p = policy(story, "keep.yaml", f"aliases:\n  - {ALIAS % (CORPORA / 'live.jsonl', 'false')}\n")
    code, out, _ = check(capsys, str(story / "r2.jsonl"), "--policy", p)
    assert code == 1
    assert "needs a live target to replay the recorded calls" in out


# -- (a) no breaking change without an alias --------------------------------------------------------


def test_an_in_place_rename_without_an_alias_in_the_policy_fails_the_release(story, capsys):
    p = policy(story, "bare.yaml", "baseline: v1.json\n")
    code, out, _ = check(capsys, str(story / "r3.jsonl"), "--policy", p)
    assert code == 1
    item = line(
        out, "FAILED no breaking change update_account:param-renamed:customer_id without an alias"
    )
    assert (
        "customer_id is renamed to account_id in place" in item
        and "keep the old name as a deprecated alias" in item
    )


def test_an_additive_alias_is_not_a_breaking_change(story, capsys):
    code, out, _ = check(
        capsys,
        str(story / "r2.jsonl"),
        "--policy",
        policy(story, "bare.yaml", "baseline: v1.json\n"),
    )
    assert code == 0, out
    assert "passed no breaking change against the baseline for continue" in out


# -- input errors ----------------------------------------------------------------------------------


def test_an_alias_entry_without_its_new_name_is_an_input_error(story, capsys):
    p = policy(story, "bad.yaml", "aliases:\n  - {tool: update_account, old: customer_id}\n")
    code, _, err = check(capsys, str(story / "r3.jsonl"), "--policy", p)
    assert code == 2 and "aliases[0]" in err and "new" in err


def test_a_bad_line_in_a_signal_file_is_an_input_error_with_file_and_line(story, capsys):
    bad = story / "retry.jsonl"
    bad.write_text(
        json.dumps(
            {
                "id": "r1",
                "tool": "update_account",
                "arguments": {"customer_id": "a"},
                "timestamp": "2026-09-01T00:00:00Z",
            }
        )
        + "\n"
        + '{"id": "r2", "arguments": {}}\n'
    )
    p = policy(
        story,
        "badcalls.yaml",
        f"aliases:\n  - {ALIAS % (CORPORA / 'live.jsonl', 'true')}\nrecorded_calls: [{bad}]\n",
    )
    code, _, err = check(capsys, str(story / "r3.jsonl"), "--policy", p, "--now", QUIET)
    assert code == 2 and f"{bad}:2: tool: missing" in err


def test_now_must_be_a_date(story, capsys):
    p = policy(
        story,
        "retire.yaml",
        f"aliases:\n  - {ALIAS % (CORPORA / 'live.jsonl', 'true')}\n" + SIGNALS,
    )
    code, _, err = check(capsys, str(story / "r3.jsonl"), "--policy", p, "--now", "next tuesday")
    assert code == 2 and "--now" in err
