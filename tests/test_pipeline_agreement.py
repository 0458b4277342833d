"""``run``, ``replay`` and ``diff`` give the same verdict for the same intended call (mcp_matrix.run.deliver).

The same intended calls go through test clients that each mangle one kind of argument
(tests/data/pipeline_profiles) and reach the bundled ``strict`` server, which validates against
the ``inputSchema`` it lists and answers with what its handler reads: so the server that
``diff`` and an offline ``replay`` model (``SchemaServer``) and the real one agree, and any
verdict that differs between the drivers is the pipeline's fault. Drivers: ``run`` (the real
CLI, a real server subprocess), ``replay`` live (the same server) and offline (its snapshot),
and ``diff``'s per-call classification (``effects.call_outcomes``).

They say the same words too: each call's reason is the classifier's, so two drivers whose
server is the same (``run`` and a live ``replay``; an offline ``replay`` and ``diff``) give the
same sentence for it, and the verdict's meaning is ``mcp_matrix.core.verdicts``'.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_matrix.core.replay_events import ReplayCall
from mcp_matrix.core.verdicts import rank
from mcp_matrix.evolution.calls_file import calls_file
from mcp_matrix.evolution.effects import call_outcomes
from mcp_matrix.evolution.replay import ReplayConfig, replay
from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.run.results import read_events
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.snapshot import Snapshot, take_snapshot
from mcp_matrix.wire.session import Timeouts

PROFILES_DIR = Path(__file__).parent / "data" / "pipeline_profiles"
SLOW_START = Timeouts(initialize=60.0)

# tool -> case name -> intended arguments
CALLS = {
    "tags_strict": {"list": {"tags": ["a", "b"]}},
    "tags_lax": {"list": {"tags": ["a", "b"]}},
    "count_strict": {"five": {"count": 5}, "bad-with-extra": {"count": "x", "extra": 1}},
    "count_lax": {"five": {"count": 5}},
    "note_optional": {"null-note": {"text": "hi", "note": None}},
    "note_required": {"null-note": {"text": "hi", "note": None}},
    "keys_open": {"extra": {"text": "hi", "extra": "kept?"}},
    "keys_closed": {"extra": {"text": "hi", "extra": "kept?"}},
}

# (profile, tool, case) -> the verdict every driver must give: each mutation kind, accepted and refused
EXPECTED = {
    ("pipe-plain", "tags_strict", "list"): "intact",
    ("pipe-stringify-arrays", "tags_strict", "list"): "loud",  # stringified array, refused
    (
        "pipe-stringify-arrays",
        "tags_lax",
        "list",
    ): "silent-corruption",  # accepted: the handler reads a string
    ("pipe-stringify-numbers", "count_strict", "five"): "loud",  # coerced number, refused
    ("pipe-stringify-numbers", "count_lax", "five"): "silent-corruption",  # accepted as "5"
    (
        "pipe-strip-unknown",
        "keys_open",
        "extra",
    ): "tolerated",  # the server never read it: same answer
    (
        "pipe-strip-unknown",
        "keys_closed",
        "extra",
    ): "silent-loss",  # the intact call is refused; this one is not
    (
        "pipe-strip-unknown",
        "count_strict",
        "bad-with-extra",
    ): "loud",  # dropped unknown key, still refused
    ("pipe-drop-nulls", "note_optional", "null-note"): "silent-loss",  # null dropped, accepted
    ("pipe-drop-nulls", "note_required", "null-note"): "loud",  # null dropped, refused
    (
        "pipe-plain",
        "keys_open",
        "extra",
    ): "silent-loss",  # sent, accepted, never read (same answer without it)
    (
        "pipe-plain",
        "keys_closed",
        "extra",
    ): "loud",  # intact but invalid: refused legibly, not "failed"
}
NAMES = sorted({p for p, _, _ in EXPECTED})


@pytest.fixture(scope="module")
def profiles():
    return select_profiles(load_profiles(extra_dirs=[PROFILES_DIR]), NAMES)


@pytest.fixture(scope="module")
def snapshot() -> Snapshot:
    doc = take_snapshot(Target.bundled("strict"), timeouts=SLOW_START)
    assert doc["error"] is None, doc["error"]
    return Snapshot(doc, source="strict")


@pytest.fixture(scope="module")
def calls_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("calls") / "live.jsonl"
    lines = [
        json.dumps({"id": f"{tool}:{case}", "tool": tool, "arguments": args})
        for tool, cases in CALLS.items()
        for case, args in cases.items()
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


Said = dict[tuple[str, str, str], tuple[str, str]]  # (profile, tool, case) -> (verdict, reason)


def by_run(cli, tmp_path: Path) -> Said:
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        json.dumps(
            {
                "cases": {
                    tool: [{"name": c, "arguments": a} for c, a in by.items()]
                    for tool, by in CALLS.items()
                }
            }
        )
    )
    results = tmp_path / "r.jsonl"
    clients = [x for name in NAMES for x in ("--client", name)]
    cli(
        "run",
        "--server",
        "strict",
        "--profiles-dir",
        str(PROFILES_DIR),
        *clients,
        "--cases",
        str(cases),
        "--no-auto-cases",
        "--results",
        str(results),
        timeout=300,
    )
    return {
        (e["profile"], e["tool"], e["case"]): (e["verdict"], e["reason"])
        for e in read_events(results)
        if e["event"] == "call"
    }


def by_replay(profiles, snapshot: Snapshot, calls_path: Path, live: bool) -> Said:
    events: list[ReplayCall] = []
    config = ReplayConfig(
        files=[calls_file(calls_path)],
        profiles=profiles,
        snapshot=snapshot,
        target=Target.bundled("strict") if live else None,
        timeouts=SLOW_START,
        jobs=2,
        emit=events.append,
    )
    replay(config)
    return {(e.profile, *str(e.id).split(":")): (e.verdict, e.reason) for e in events}


def by_diff(profiles, snapshot: Snapshot) -> Said:
    tools = {t["name"]: t for _, t in snapshot.tools}
    out = {}
    for profile, view in zip(profiles, discover_all(snapshot, profiles)):
        views = view.by_tool()
        for tool, cases in CALLS.items():
            for case, args in cases.items():
                found = call_outcomes(
                    profile,
                    tool,
                    views.get(tool),
                    tools[tool],
                    False,
                    args,
                    tools[tool]["inputSchema"],
                )
                worst = min(found.values(), key=lambda o: rank(o.verdict))
                out[(profile.name, tool, case)] = (worst.verdict, worst.message)
    return out


def test_run_replay_and_diff_give_the_same_verdict_for_every_call(
    cli, tmp_path, profiles, snapshot, calls_path
):
    drivers = {
        "run": by_run(cli, tmp_path),
        "replay": by_replay(profiles, snapshot, calls_path, live=True),
        "replay offline": by_replay(profiles, snapshot, calls_path, live=False),
        "diff": by_diff(profiles, snapshot),
    }
    every = {(p, t, c) for p in NAMES for t, cases in CALLS.items() for c in cases}
    for name, verdicts in drivers.items():
        assert set(verdicts) == every, name
    disagree = {
        k: {n: v[k][0] for n, v in drivers.items()}
        for k in sorted(every)
        if len({v[k][0] for v in drivers.values()}) > 1
    }
    assert disagree == {}
    assert {k: drivers["run"][k][0] for k in EXPECTED} == EXPECTED
    # The same server, the same words: the classifier's reason, in every driver.
    for one, other in (("run", "replay"), ("replay offline", "diff")):
        worded = {
            k: (drivers[one][k][1], drivers[other][k][1])
            for k in sorted(every)
            if drivers[one][k][1] != drivers[other][k][1]
        }
        assert worded == {}, (one, other)
    assert all(v[k][1] for v in drivers.values() for k in every)  # no call without its reason
