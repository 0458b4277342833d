"""Offline, a call a profile's behaviours change is asked whether they leave it alone once.

``ReplaySegment._judge`` asks ``leaves_alone`` to find the groups that send a call as written;
a group that changes it was then asked again by ``_compute`` (``_as_written``) before it was
planned. Counted, never timed; the report is the one of each profile replayed alone."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import matrix_servers.billing
from matrix_servers.billing.schemas import tool_definitions

from mcp_matrix.evolution import replay_segment
from mcp_matrix.evolution.calls_file import calls_file
from mcp_matrix.evolution.replay import ReplayConfig, replay
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.simulate import calls as calls_module
from mcp_matrix.targets.snapshot import Snapshot

CORPORA = Path(matrix_servers.billing.__file__).parent / "corpora"


def offline(profiles) -> list:
    tools = [{"page": 0, "tool": t} for t in tool_definitions("3")]
    files = [calls_file(CORPORA / n) for n in ("retry.jsonl", "live.jsonl")]
    config = ReplayConfig(files=files, profiles=profiles, snapshot=Snapshot({"tools": tools}))
    return replay(config).to_json([])["results"]


def test_a_changed_call_is_asked_once_whether_it_is_left_alone(monkeypatch):
    profiles = [p for p in load_profiles().values() if not p.abstract]
    asked: Counter = Counter()
    held: list = []  # what the keys' ids stand for, alive to the end
    real = calls_module.leaves_alone

    def counting(profile, ctx, arguments, omit=False):
        alone = real(profile, ctx, arguments, omit)
        if not alone:
            held.append((profile, ctx, arguments))
            asked[(id(profile), id(ctx), id(arguments))] += 1
        return alone

    monkeypatch.setattr(calls_module, "leaves_alone", counting)  # as_written's
    monkeypatch.setattr(replay_segment, "leaves_alone", counting)  # _judge's
    together = offline(profiles)
    assert asked  # some profiles change these calls (stringified, coerced, refused)
    assert max(asked.values()) == 1  # fails before: 2, once more to plan it
    monkeypatch.undo()
    for p in profiles[:12]:
        assert [r for r in together if r["profile"] == p.name] == offline([p]), p.name


def test_groups_apart_only_by_what_they_hold_ask_once_when_nothing_held_is_read(monkeypatch):
    """Continue and the OpenAI Agents SDK (JS) only round big integers, which reads nothing
    held; their held schemas differ (discovery), so they are two groups: whether the rounding
    leaves a call alone is asked once a call for both (fails before: once a group)."""
    loaded = load_profiles()
    pair = [loaded["continue"], loaded["openai-agents-js"]]
    assert [[u.name for u in p.call] for p in pair] == [["round-big-integers"]] * 2
    asked: list = []
    real = replay_segment.leaves_alone

    def counting(profile, ctx, arguments, omit=False):
        asked.append(arguments)
        return real(profile, ctx, arguments, omit)

    monkeypatch.setattr(replay_segment, "leaves_alone", counting)
    together = offline(pair)
    calls = sum(r["calls"] for r in together) // 2
    assert 0 < len(asked) <= calls  # fails before: 2 a call
    monkeypatch.undo()
    assert [r for p in pair for r in offline([p])] == sorted(
        together, key=lambda r: [p.name for p in pair].index(r["profile"])
    )
