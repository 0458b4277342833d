"""Bounded regular expressions for a schema's ``pattern`` and ``patternProperties``.

A server's ``pattern`` such as ``^(a+)+$`` makes a backtracking engine run for ever on a
40-character string (and Python's ``re`` holds the GIL and ignores Ctrl-C while it does).
Every pattern of an untrusted schema is matched here with the ``regex`` module, which has
Python ``re`` syntax (so verdicts do not change) and a per-match time budget. A match that
runs out of budget raises ``PatternTooCostly``; the validator treats the keyword as
unchecked and says so (docs/security.md has the figures).
"""

from __future__ import annotations

import regex

PATTERN_BUDGET_SECONDS = 0.05
_CACHE: dict[str, regex.Pattern[str]] = {}
_CACHE_MAX = 2048


class PatternTooCostly(Exception):
    """The pattern did not finish within the budget on this string."""

    def __init__(self, pattern: str, length: int) -> None:
        super().__init__(
            f"pattern {pattern[:80]!r} did not finish within {PATTERN_BUDGET_SECONDS * 1000:.0f} ms "
            f"on a string of {length} characters (catastrophic backtracking); it was not checked"
        )
        self.pattern = pattern


def _compiled(pattern: str) -> regex.Pattern[str]:
    hit = _CACHE.get(pattern)
    if hit is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        hit = _CACHE[pattern] = regex.compile(pattern, regex.VERSION0)
    return hit


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``, within the budget.

    Raises ``regex.error`` for a pattern that does not compile (the caller's "schema does not
    compile" path) and ``PatternTooCostly`` when the budget runs out."""
    try:
        return _compiled(pattern).search(text, timeout=PATTERN_BUDGET_SECONDS) is not None
    except TimeoutError:
        raise PatternTooCostly(pattern, len(text)) from None
