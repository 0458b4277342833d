"""The outcomes an offline replay shares across profiles are bounded by size, not only by count.

Each key holds its call's arguments in words (``memo_key``); 2,048 of them were kept whatever
their size, so a replay of 300 calls each carrying a 1 MiB string kept them all (968 MB peak
RSS). Counted (what the memo holds), never timed or measured in RSS."""

from __future__ import annotations

from mcp_matrix.evolution import replay_shared
from mcp_matrix.evolution.calls_file import RecordedCall
from mcp_matrix.evolution.replay_shared import OFFLINE_SHARED_BYTES, SharedOutcomes

MIB = 1 << 20


def held(table: dict) -> int:
    """Characters of the arguments in words the keys of ``table`` hold."""
    return sum(len(key[1][1]) for key in table)


def big(i: int) -> RecordedCall:
    return RecordedCall(id=f"c{i}", tool="store", arguments={"text": "x" * MIB, "n": i}, line=i)


def test_large_calls_are_kept_up_to_a_size():
    shared = SharedOutcomes()
    for i in range(300):
        call = big(i)
        for kind in (0, 1):  # two kinds of profile share each call's words
            key = shared.key(kind, call)
            assert key is not None
            shared.remember(key, (None, ("verdict", None, None)))
        sent = shared.key(-1, call)
        shared.decide((sent, "", False, False, 0), ("verdict", None))
    assert held(shared.memo) <= OFFLINE_SHARED_BYTES  # fails before: 600 MiB (300 calls x 2)
    assert 0 < len(shared.memo) <= 2 * OFFLINE_SHARED_BYTES // MIB
    decided = sum(len(key[0][1][1]) for key in shared.decided)
    assert decided <= OFFLINE_SHARED_BYTES  # fails before: 300 MiB


def test_the_last_calls_stay_shared():
    """What is kept is still found: the profiles of one call ask one after the other."""
    shared = SharedOutcomes()
    for i in range(100):
        call = big(i)
        key = shared.key(0, call)
        assert key is not None
        shared.remember(key, (None, ("verdict", i)))
        assert shared.memo[key] == [(None, ("verdict", i))]
        assert shared.memo.get((1, key[1])) is None  # the other kind: computed, then kept


def test_usual_calls_are_kept_by_count_as_before():
    shared = SharedOutcomes()
    for i in range(replay_shared.OFFLINE_SHARED):
        call = RecordedCall(id=f"c{i}", tool="t", arguments={"n": i}, line=i)
        shared.remember(shared.key(0, call), (None, ("verdict", i)))
    assert len(shared.memo) == replay_shared.OFFLINE_SHARED
