"""An offline replay ends without a collection walking what it built.

While the calls are played the collector's young threshold is held high (few cycles are made;
reference counting frees the rest); set back as it was with everything the replay built still
counted young, the next allocation set off one collection walking all of it (0.07 s of a
10,000-call replay). What the replay built is set apart first (``gc.freeze``), so nothing is
counted young when the threshold comes back. Counted, never timed."""

from __future__ import annotations

import gc
from pathlib import Path

import matrix_servers.billing
from matrix_servers.billing.schemas import tool_definitions

import mcp_matrix.evolution.replay as replay_module
from mcp_matrix.evolution.calls_file import calls_file
from mcp_matrix.evolution.replay import ReplayConfig, replay
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.targets.snapshot import Snapshot

CORPORA = Path(matrix_servers.billing.__file__).parent / "corpora"


def test_an_offline_replay_ends_without_a_collection(monkeypatch):
    played: list[bool] = []
    after: list[int] = []  # the generations collected once the calls were played
    real = replay_module._play_offline

    def playing(*args, **kw):
        real(*args, **kw)
        played.append(True)

    def heard(phase: str, info: dict) -> None:
        if phase == "start" and played:
            after.append(info["generation"])

    monkeypatch.setattr(replay_module, "_play_offline", playing)
    tools = [{"page": 0, "tool": t} for t in tool_definitions("3")]
    profiles = [p for p in load_profiles().values() if not p.abstract]
    files = [calls_file(CORPORA / n) for n in ("retry.jsonl", "live.jsonl")]
    config = ReplayConfig(files=files, profiles=profiles, snapshot=Snapshot({"tools": tools}))
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    gc.callbacks.append(heard)
    try:
        report = replay(config)
    finally:
        gc.callbacks.remove(heard)
    assert played and after == []  # fails before: [0], the young generation walked whole
    assert gc.get_threshold() == threshold and gc.get_freeze_count() == frozen
    assert sum(t.calls for t in report.tallies) > len(profiles)
