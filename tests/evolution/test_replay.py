"""``replay`` on the billing story: recorded frozen calls against real server subprocesses.

The corpora (servers/billing/corpora) were recorded against version 1 (and the hybrid calls
against version 2); ``expected.json`` holds the outcomes per version, computed by the server's
own recorder. Version 3 renames ``customer_id`` in place; version 2 keeps it as an alias.
Each server version is replayed once per module (both side by side); the 100,000-call
bounded-memory path runs offline, with no server.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import matrix_servers.billing
import pytest

from mcp_matrix.commands.cli import main
from mcp_matrix.evolution.calls_file import calls_file
from mcp_matrix.evolution.replay import ReplayConfig, hold, prepare_and_classify, replay
from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.snapshot import Snapshot, write_snapshot
from mcp_matrix.wire.session import Timeouts

CORPORA = Path(matrix_servers.billing.__file__).parent / "corpora"
EXPECTED = json.loads((CORPORA / "expected.json").read_text())["corpora"]
SLOW_START = Timeouts(initialize=60.0)  # server subprocesses start side by side on a busy machine
# The offline path keeps counters, never calls: its traced peak over 100,000 calls is well under
# 1 MB; 10 MB still fails if as little as 100 bytes per call were kept.
OFFLINE_PEAK_BYTES = 10_000_000


def profiles(*names: str):
    return select_profiles(load_profiles(), list(names))


def corpus(name: str, population: str | None = None):
    return calls_file(CORPORA / name, population)


def result(doc: dict, profile: str, file: str) -> dict:
    return next(
        r for r in doc["results"] if r["profile"] == profile and Path(r["file"]).name == file
    )


# Run in its own process, started before the live replays so the two overlap, and so that
# tracemalloc sees only the offline replay. The tool list is version 3's own definitions.
LARGE_OFFLINE = """
import json, sys, tracemalloc
from pathlib import Path
from matrix_servers.billing.schemas import tool_definitions
from mcp_matrix.evolution.calls_file import calls_file, check_files
from mcp_matrix.evolution.replay import ReplayConfig, replay
from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.targets.snapshot import Snapshot

path = Path(sys.argv[1]) / "retry-large.jsonl"
with path.open("w") as f:
    for i in range(100_000):
        f.write(json.dumps({"id": f"r{i}", "tool": "get_account", "arguments": {"account_id": "acct_8Q2R"},
                            "timestamp": "2026-09-10T01:28:28Z"}) + "\\n")
source = calls_file(path)
checked = check_files([source])[str(path)]
snapshot = Snapshot({"tools": [{"page": 0, "tool": t} for t in tool_definitions("3")]}, source="v3 definitions")
config = ReplayConfig(files=[source], profiles=select_profiles(load_profiles(), ["continue"]), snapshot=snapshot, jobs=1)
tracemalloc.start()
tally = replay(config).tallies[0]
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"calls": tally.calls, "delivered": tally.categories["delivered"], "checked": checked, "peak": peak}))
"""


@pytest.fixture(scope="module")
def large_offline(tmp_path_factory):
    proc = subprocess.Popen(
        [sys.executable, "-c", LARGE_OFFLINE, str(tmp_path_factory.mktemp("large"))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    yield proc
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


@pytest.fixture(scope="module")
def snapshots(large_offline, shared_work) -> dict[str, Snapshot]:
    """Versions 2 and 3, each snapshotted once a test run (diff and check use the same)."""
    specs = {v: f"billing --version {v}" for v in ("2", "3")}
    with ThreadPoolExecutor(max_workers=2) as pool:
        docs = dict(zip(specs, pool.map(shared_work.snapshot, specs.values())))
    return {v: Snapshot(d, source=f"billing v{v}") for v, d in docs.items()}


@pytest.fixture(scope="module")
def reports(snapshots, tmp_path_factory) -> dict[str, dict]:
    """v3 through continue (no call behaviour); v2 through claude-code (caching) and, for the
    live file, claude-code-legacy (intermittent stringify: ``frequency: sometimes``).

    The hybrid calls are copied as ``live-hybrid.jsonl`` so the file name says their population.
    """
    hybrid = tmp_path_factory.mktemp("calls") / "live-hybrid.jsonl"
    shutil.copy(CORPORA / "hybrid.jsonl", hybrid)
    frozen = [corpus("live.jsonl"), corpus("retry.jsonl"), corpus("transcript.jsonl")]
    configs = {
        "3": ReplayConfig(
            files=frozen,
            profiles=profiles("continue"),
            target=Target.bundled("billing --version 3"),
            snapshot=snapshots["3"],
            timeouts=SLOW_START,
            read_after=("billing_metrics",),
        ),
        "2": ReplayConfig(
            files=[*frozen, calls_file(hybrid)],
            profiles=profiles("claude-code"),
            target=Target.bundled("billing --version 2"),
            snapshot=snapshots["2"],
            timeouts=SLOW_START,
            read_after=("billing_metrics",),
        ),
        "2-intermittent": ReplayConfig(
            files=[corpus("live.jsonl")],
            profiles=profiles("claude-code-legacy"),
            target=Target.bundled("billing --version 2"),
            snapshot=snapshots["2"],
            timeouts=SLOW_START,
            read_after=("billing_metrics",),
        ),
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(configs, pool.map(lambda c: replay(c).to_json(), configs.values())))
    for doc in done.values():
        assert doc["measured"] and doc["format"] == "mcp-matrix.replay" and doc["version"] == 1
    return done


# -- version 3: the in-place rename ------------------------------------------------------------


def test_after_an_in_place_rename_every_queued_retry_fails_on_every_attempt(reports):
    r = result(reports["3"], "continue", "retry.jsonl")
    assert r["calls"] == 20
    assert r["retry"]["permanent_loss"] == {
        "count": 20,
        "of": 20,
        "percent": 100.0,
        "text": "100.0% (20 of 20)",
    }
    # update_account is idempotent, so each failure was really sent again (3 retries), and failed each time
    assert r["retry"]["failed_every_attempt"]["count"] == 20 and r["retry"]["attempts"] == 60
    assert r["outcomes"]["loud"]["text"] == "100.0% (20 of 20)"
    assert "no longer accepts customer_id" in r["examples"]["loud"][0]["reason"]
    # the server counted every attempt: 20 calls + 60 retries
    assert r["reads"]["billing_metrics"]["alias_uses"] == 80


def test_after_an_in_place_rename_transcripts_diverge_from_their_first_update(reports):
    r = result(reports["3"], "continue", "transcript.jsonl")
    want = EXPECTED["transcript"]["versions"]["3"]
    assert r["divergence"]["diverged"]["text"] == f"87.5% ({want['diverged']} of 40)"
    firsts = {t["transcript"]: t["first_diverging"]["turn"] for t in r["transcripts"]["each"]}
    assert firsts == want["first_divergence"]
    first = r["divergence"]["first"]
    assert (first["transcript"], first["turn"], first["id"]) == ("t-01", 4, "tr-0002")
    assert r["transcripts"]["diverged"]["text"] == "100.0% (5 of 5)"
    assert (
        r["outcomes"]["delivered"]["count"] == want["ok"]
        and r["outcomes"]["loud"]["count"] == want["error"]
    )


def test_after_an_in_place_rename_every_live_call_is_refused_loudly(reports):
    r = result(reports["3"], "continue", "live.jsonl")
    assert r["outcomes"]["loud"]["text"] == "100.0% (40 of 40)"
    assert r["divergence"]["diverged"]["count"] == EXPECTED["live"]["versions"]["3"]["diverged"]
    assert r["divergence"]["first"]["id"] == EXPECTED["live"]["versions"]["3"]["first_divergence"]


# -- version 2: the additive alias ---------------------------------------------------------------


@pytest.mark.parametrize(
    "file, key, known",
    [
        ("live.jsonl", "live", "live-0023"),
        ("retry.jsonl", "retry", "retry-0012"),
        ("transcript.jsonl", "transcript", "tr-0019"),
    ],
)
def test_with_the_alias_every_population_keeps_working_but_the_customer_id_call(
    reports, file, key, known
):
    r = result(reports["2"], "claude-code", file)
    want = EXPECTED[key]["versions"]["2"]
    n = EXPECTED[key]["calls"]
    assert (
        r["outcomes"]["delivered"]["count"] == want["ok"]
        and r["outcomes"]["loud"]["count"] == want["error"] == 1
    )
    assert r["outcomes"]["loud"]["text"] == f"{100 / n:.1f}% (1 of {n})"
    assert [e["id"] for e in r["examples"]["loud"]] == [known]
    assert "cust_" in r["examples"]["loud"][0]["reason"]
    assert r["reads"]["billing_metrics"]["cust_prefix_rejections"] >= 1


def test_with_the_alias_the_one_failed_retry_is_a_permanent_loss_of_one_in_twenty(reports):
    r = result(reports["2"], "claude-code", "retry.jsonl")
    assert r["retry"]["permanent_loss"]["text"] == "5.0% (1 of 20)"
    assert r["retry"]["delivered_first_attempt"]["text"] == "95.0% (19 of 20)"


def test_with_the_alias_only_transcript_t03_diverges_at_turn_six(reports):
    r = result(reports["2"], "claude-code", "transcript.jsonl")
    assert r["divergence"]["diverged"]["text"] == "5.0% (2 of 40)"
    diverged = [t for t in r["transcripts"]["each"] if t["first_diverging"]]
    assert [(t["transcript"], t["first_diverging"]["turn"]) for t in diverged] == [("t-03", 6)]


def test_hybrid_calls_are_counted_as_alias_conflicts_by_a_read_after_the_replay(reports):
    r = result(reports["2"], "claude-code", "live-hybrid.jsonl")
    want = EXPECTED["hybrid"]["versions"]["2"]
    assert (
        r["outcomes"]["delivered"]["count"] == want["ok"]
        and r["outcomes"]["loud"]["count"] == want["error"]
    )
    metrics = r["reads"]["billing_metrics"]
    assert {k: metrics[k] for k in want["metrics"]} == want["metrics"]  # alias_conflicts 4
    assert r["divergence"]["diverged"]["text"] == "0.0% (0 of 10)"  # recorded against v2 itself


def test_intermittent_client_behaviours_are_counted_but_never_sent_twice(reports):
    # claude-code-legacy stringifies objects and booleans only sometimes (its calibration)
    r = result(reports["2-intermittent"], "claude-code-legacy", "live.jsonl")
    assert r["sometimes"]["stringify-arguments, stringify-booleans"]["text"] == "100.0% (40 of 40)"
    assert (
        r["reads"]["billing_metrics"]["alias_uses"] == 40
    )  # each recorded call reached the server once


# -- the command line ---------------------------------------------------------------------------


def test_the_terminal_report_says_retries_are_lost_in_plain_words_with_denominators(capsys):
    code = main(
        [
            "replay",
            str(CORPORA / "retry.jsonl"),
            "--server",
            "billing --version 3",
            "--client",
            "gemini-cli",
            "--timeout-initialize",
            "60",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert (
        "retry: 20 of 20 calls (100.0%) fail on every attempt in gemini-cli: permanent loss." in out
    )
    assert "permanent-loss 100.0% (20 of 20) in gemini-cli (retry.jsonl)" in out
    # gemini-cli validates against the live schema, where customer_id is unknown: refused before sending
    assert "the client's own validation refused the call before sending" in out


def test_a_bad_line_is_an_input_error_naming_the_file_the_line_and_the_key(tmp_path, capsys):
    bad = tmp_path / "retry.jsonl"
    good = json.dumps(
        {
            "id": "r1",
            "tool": "update_account",
            "arguments": {"customer_id": "acct_8Q2R", "fields": {}},
        }
    )
    bad.write_text(
        good
        + "\n\n"
        + json.dumps({"id": "r2", "tool": "update_account", "arguments": "acct_8Q2R"})
        + "\n"
        + '{"id": "r3", "tool": "get_account", "arguments": {}, "timestamp": "yesterday"}\n'
    )
    assert main(["replay", str(bad), "--server", "billing --version 3"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3: arguments: expected an object" in err
    assert f"{bad}:4: timestamp: expected an ISO 8601 date" in err


def test_a_file_whose_name_does_not_say_its_population_needs_population(tmp_path, capsys):
    calls = tmp_path / "calls.jsonl"
    calls.write_text('{"id": "x", "tool": "get_account", "arguments": {}}\n')
    assert main(["replay", str(calls), "--server", "billing --version 3"]) == 2
    assert "pass --population" in capsys.readouterr().err


def test_transcript_files_need_a_transcript_id_on_every_line(tmp_path, capsys):
    calls = tmp_path / "transcripts.jsonl"
    calls.write_text('{"id": "x", "tool": "get_account", "arguments": {}}\n')
    assert main(["replay", str(calls), "--server", "billing --version 3"]) == 2
    assert f"{calls}:1: transcript: missing" in capsys.readouterr().err


# -- offline ------------------------------------------------------------------------------------


def test_offline_json_judges_every_call_by_the_modelled_server(snapshots, tmp_path, capsys):
    snap, events = tmp_path / "v3.json", tmp_path / "events.jsonl"
    write_snapshot(snapshots["3"].doc, snap)
    code = main(
        [
            "replay",
            str(CORPORA / "retry.jsonl"),
            "--snapshot",
            str(snap),
            "--client",
            "gemini-cli",
            "--client",
            "continue",
            "--json",
            "--fail-on",
            "none",
            "--results",
            str(events),
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert (
        code == 0
        and doc["offline"]
        and doc["format"] == "mcp-matrix.replay"
        and doc["version"] == 1
    )
    gemini, cont = result(doc, "gemini-cli", "retry.jsonl"), result(doc, "continue", "retry.jsonl")
    assert (
        gemini["outcomes"]["loud"]["text"] == "100.0% (20 of 20)"
    )  # refused by its own validation
    assert (
        gemini["retry"]["permanent_loss"]["text"] == "100.0% (20 of 20)"
    )  # deterministic, no server needed
    # continue sends the frozen customer_id calls as they are: v3's listed schema refuses them
    assert cont["outcomes"]["loud"]["text"] == "100.0% (20 of 20)"
    assert (
        cont["retry"]["permanent_loss"]["text"] == "100.0% (20 of 20)"
    )  # the same refusal every time
    reason = cont["examples"]["loud"][0]["reason"]
    assert (
        "do not match the server's inputSchema" in reason
        and "account_id is missing" in reason  # plain words, from the errors' fields
    )
    lines = [json.loads(x) for x in events.read_text().splitlines()]
    assert lines[0] == {"event": "replay-started", "format": "mcp-matrix.replay", "version": 1}
    calls = [e for e in lines if e["event"] == "replay-call"]
    assert len(calls) == 40 and {e["category"] for e in calls if e["profile"] == "gemini-cli"} == {
        "loud"
    }
    # why the modelled server refuses continue's calls, as fields
    refused = next(e for e in calls if e["profile"] == "continue")
    assert {(v["validator"], tuple(v["names"])) for v in refused["violations"]} >= {
        ("required", ("account_id",))
    }
    assert (
        lines[-1]["event"] == "replay-finished" and lines[-1]["report"]["results"] == doc["results"]
    )


def test_prepare_and_classify_decides_what_it_can_without_a_server(snapshots):
    chosen = profiles("gemini-cli", "continue", "stale-cache")
    views = discover_all(snapshots["3"], chosen)
    call = {
        "tool": "update_account",
        "arguments": {"customer_id": "acct_8Q2R", "fields": {"plan": "growth"}},
    }
    gemini, cont, stale = (prepare_and_classify(p, v, call) for p, v in zip(chosen, views))
    assert gemini.verdict.verdict == "loud" and "own validation" in gemini.verdict.reason
    assert cont.verdict is None and cont.primary.mutations == () and cont.risk is None
    assert stale.verdict is None and stale.risk == "silent-loss"
    assert [m.pointer for m in stale.primary.mutations] == ["/customer_id"]
    hidden = prepare_and_classify(chosen[1], views[1], {"tool": "no_such_tool", "arguments": {}})
    assert hidden.verdict.verdict == "unreachable" and hidden.variants == []
    held = hold(chosen[0], views[0], None, {t["name"]: t for _, t in snapshots["3"].tools})
    assert prepare_and_classify(chosen[0], held, call).verdict.verdict == "loud"


def test_a_hundred_thousand_calls_replay_offline_in_bounded_memory(large_offline):
    out, err = large_offline.communicate(timeout=170)
    assert large_offline.returncode == 0, err
    got = json.loads(out)
    assert got["calls"] == got["delivered"] == 100_000 and got["checked"] == 100_000
    assert got["peak"] < OFFLINE_PEAK_BYTES, f"traced peak {got['peak'] / 1e6:.1f} MB"
