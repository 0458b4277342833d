"""How long a stale schema lives per client under the server's ttlMs and list-change subscriptions."""

from __future__ import annotations

import json
from dataclasses import replace

from mcp_matrix.evolution.diff import diff_snapshots
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.simulate.caching import stale_window
from mcp_matrix.targets.snapshot import Snapshot

TOOL_V1 = {
    "name": "put",
    "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
}
TOOL_V2 = {
    "name": "put",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    },
}


def snap(tool, ttl=None, listen=None) -> Snapshot:
    modern = {
        "answered": True,
        "supportedVersions": ["2026-07-28"],
        "toolsTtlMs": ttl,
        "listen": listen,
    }
    return Snapshot(
        {
            "tools": [{"page": 0, "tool": tool}],
            "eras": {"handshake": {"answers": []}, "modern": modern},
            "target": {"name": "s"},
        }
    )


def honouring(name: str, **kw):
    profile = load_profiles()[name]
    return replace(profile, handshake=replace(profile.handshake, **kw))


def test_a_client_that_honours_ttl_0_holds_no_stale_schema_and_drops_out_of_the_caching_clients():
    cached = honouring("stale-cache", honours_ttl=True)
    assert stale_window(cached, snap(TOOL_V1, 0), snap(TOOL_V2, 0)).stale is False
    result = diff_snapshots(snap(TOOL_V1, 0), snap(TOOL_V2, 0), [cached])
    assert result.caching == () and result.stale_for == {}


def test_a_positive_ttl_bounds_the_stale_window_of_a_client_that_honours_it():
    window = stale_window(
        honouring("stale-cache", honours_ttl=True), snap(TOOL_V1, 60000), snap(TOOL_V2, 60000)
    )
    assert window.stale and "up to 60 s" in window.text


def test_a_client_that_ignores_ttl_keeps_a_stale_schema_for_the_session_and_diff_says_so():
    cached = load_profiles()["stale-cache"]
    result = diff_snapshots(snap(TOOL_V1, 0), snap(TOOL_V2, 0), [cached])
    assert result.caching == ("stale-cache",)
    assert (
        "whole session" in result.stale_for["stale-cache"]
        and "ignores the server's ttlMs" in result.stale_for["stale-cache"]
    )


def test_a_client_that_listens_for_list_changes_refetches_when_the_server_acknowledges_them():
    cached = honouring("stale-cache", listens=True)
    acked = {"acknowledged": {"toolsListChanged": True}, "error": None}
    assert stale_window(cached, snap(TOOL_V1, 60000), snap(TOOL_V2, 60000, acked)).stale is False
    assert stale_window(cached, snap(TOOL_V1, 60000), snap(TOOL_V2, 60000)).stale is True


def test_a_version_1_baseline_says_the_server_sent_no_ttl():
    old = Snapshot({"tools": [{"page": 0, "tool": TOOL_V1}]})
    window = stale_window(load_profiles()["stale-cache"], old, snap(TOOL_V2))
    assert window.stale and "sent no ttlMs" in window.text


FRESH = {"name": "fresh", "inputSchema": {"type": "object", "properties": {}}}


def replayed_verdicts(profile, tmp_path) -> dict:
    """Offline replay of one call to a tool only the new list has, the old one held by caching clients."""
    from mcp_matrix.evolution.calls_file import calls_file
    from mcp_matrix.evolution.replay import ReplayConfig, replay

    line = {"id": "c1", "tool": "fresh", "arguments": {}}
    path = tmp_path / "live.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    new = Snapshot(
        {
            "tools": [{"page": 0, "tool": TOOL_V2}, {"page": 0, "tool": FRESH}],
            "eras": snap(TOOL_V2, 0).eras,
            "target": {"name": "s"},
        }
    )
    config = ReplayConfig(
        files=[calls_file(path)], profiles=[profile], snapshot=new, baseline=snap(TOOL_V1, 0)
    )
    (tally,) = replay(config).tallies
    return dict(tally.verdicts)


def test_replay_applies_the_stale_window_that_run_and_diff_apply(tmp_path):
    # ttlMs 0 honoured: the client refetches, so it holds the new list and the new tool
    assert "unreachable" not in replayed_verdicts(
        honouring("stale-cache", honours_ttl=True), tmp_path
    )
    # ttlMs ignored: it keeps the old list, which has no such tool
    assert replayed_verdicts(load_profiles()["stale-cache"], tmp_path) == {"unreachable": 1}
