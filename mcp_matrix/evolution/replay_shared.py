"""Offline, the outcomes kept across profiles that cannot tell a call apart (``SharedOutcomes``),
keyed by the call's arguments in words (``memo_key``)."""

from __future__ import annotations

from mcp_matrix.evolution.calls_file import RecordedCall
from mcp_matrix.evolution.replay_prepare import Prepared
from mcp_matrix.run.call_servers import sorted_words
from mcp_matrix.run.classify import Answer, Verdict

OFFLINE_MEMO = (
    4096  # distinct calls whose offline outcome a segment remembers (retry queues repeat)
)


class SharedOutcomes:
    """Offline outcomes shared across profiles: a pure function of (kind, tool, arguments).

    Each call's arguments are put into words once (for the first profile that asks), not once
    per profile; the last ``OFFLINE_SHARED`` outcomes are kept (a replay reads each call once
    for all profiles, and retry queues repeat their calls). An outcome is kept with the held
    schema and tool it read (None: it read neither, so it holds for every held copy)."""

    def __init__(self) -> None:
        self.memo: dict[
            tuple, list[tuple[tuple | None, tuple[Verdict, Answer | None, Prepared]]]
        ] = {}
        self.decided: dict[tuple, tuple[Verdict, Answer | None]] = {}  # by what is sent
        # (kind, tool) -> the outcome of every call of a tool the client does not show
        self.unseen: dict[tuple[int, str], tuple[Verdict, Answer | None, Prepared]] = {}
        self.kinds: dict[tuple, int] = {}
        self._last: tuple[RecordedCall | None, tuple[str, str] | None] = (None, None)

    def number(self, kind: tuple) -> int:
        """A kind as a small number (a kind's tuple of behaviours is hashed once, not per call)."""
        return self.kinds.setdefault(kind, len(self.kinds))

    def key(self, kind: int, call: RecordedCall) -> tuple | None:
        last, words = self._last
        if last is not call:
            words = memo_key(call)
            self._last = (call, words)
        return None if words is None else (kind, words)

    def remember(self, key: tuple, value: tuple) -> None:
        """One more outcome of ``key`` (for another held copy), in ``memo``."""
        if key not in self.memo and len(self.memo) >= OFFLINE_SHARED:
            self.memo.clear()
        self.memo.setdefault(key, []).append(value)

    def decide(self, key: tuple, value: tuple) -> None:
        if len(self.decided) >= OFFLINE_SHARED:
            self.decided.clear()
        self.decided[key] = value


# outcomes kept across profiles (kinds x distinct calls: ~100 calls of 52 profiles); more is
# not faster: each one kept is walked by the young collections it lives through
OFFLINE_SHARED = 2048


def memo_key(call: RecordedCall) -> tuple[str, str] | None:
    try:
        return call.tool, sorted_words(call.arguments)
    except (TypeError, ValueError):
        return None


__all__ = ["OFFLINE_MEMO", "OFFLINE_SHARED", "SharedOutcomes", "memo_key"]
