"""Offline, the outcomes kept across profiles that cannot tell a call apart (``SharedOutcomes``),
keyed by the call's arguments in words (``memo_key``)."""

from __future__ import annotations

from mcp_matrix.evolution.calls_file import RecordedCall
from mcp_matrix.evolution.replay_prepare import Prepared
from mcp_matrix.run.call_servers import room, sorted_words
from mcp_matrix.run.classify import Answer, Verdict

OFFLINE_MEMO = (
    4096  # distinct calls whose offline outcome a segment remembers (retry queues repeat)
)


class SharedOutcomes:
    """Offline outcomes shared across profiles: a pure function of (kind, tool, arguments).

    Each call's arguments are put into words once (for the first profile that asks), not once
    per profile; the last ``OFFLINE_SHARED`` outcomes are kept (a replay reads each call once
    for all profiles, and retry queues repeat their calls), and no more than
    ``OFFLINE_SHARED_BYTES`` of arguments in words in their keys (each key holds its call's
    arguments, the outcome about as much). An outcome is kept with the held schema and tool it
    read (None: it read neither, so it holds for every held copy)."""

    def __init__(self) -> None:
        self.memo: dict[
            tuple, list[tuple[tuple | None, tuple[Verdict, Answer | None, Prepared]]]
        ] = {}
        self.decided: dict[tuple, tuple[Verdict, Answer | None]] = {}  # by what is sent
        # (kind, tool) -> the outcome of every call of a tool the client does not show
        self.unseen: dict[tuple[int, str], tuple[Verdict, Answer | None, Prepared]] = {}
        self.kinds: dict[tuple, int] = {}
        self._last: tuple[RecordedCall | None, tuple[str, str] | None] = (None, None)
        self.memo_bytes = 0  # characters of words the keys of ``memo`` hold
        self.decided_bytes = 0  # and of ``decided``

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
        if key not in self.memo:
            self.memo_bytes = _room(self.memo, self.memo_bytes, key)
        self.memo.setdefault(key, []).append(value)

    def decide(self, key: tuple, value: tuple) -> None:
        if key not in self.decided:
            self.decided_bytes = _room(self.decided, self.decided_bytes, key)
        self.decided[key] = value


def _room(table: dict, held: int, key: tuple) -> int:
    """The characters ``table`` holds once ``key`` is in it (``room``, at this module's bounds)."""
    return room(table, held, words_in(key), OFFLINE_SHARED, OFFLINE_SHARED_BYTES)


# outcomes kept across profiles (kinds x distinct calls: ~100 calls of 52 profiles); more is
# not faster: each one kept is walked by the young collections it lives through
OFFLINE_SHARED = 2048
# and by size: a replay of 300 calls each carrying a 1 MiB string kept them all (968 MB peak);
# calls of usual size (a few hundred characters) never come near it
OFFLINE_SHARED_BYTES = 32 << 20


def words_in(key: tuple) -> int:
    """Characters of the strings in ``key`` (a call's arguments in words, what is sent)."""
    return sum(
        words_in(part) if isinstance(part, tuple) else len(part) if isinstance(part, str) else 0
        for part in key
    )


def memo_key(call: RecordedCall) -> tuple[str, str] | None:
    try:
        return call.tool, sorted_words(call.arguments)
    except (TypeError, ValueError):
        return None


__all__ = [
    "OFFLINE_MEMO",
    "OFFLINE_SHARED",
    "OFFLINE_SHARED_BYTES",
    "SharedOutcomes",
    "memo_key",
    "words_in",
]
