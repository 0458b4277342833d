"""What a session keeps of what a server says about itself: a bounded prefix of each field.

The ``initialize`` and ``server/discover`` results, error objects and notification parameters
are echoed by every report, once per cell: 1.5 MB of protocol versions became 144 MB of
results. ``bounded`` keeps each such field up to a bound that says how much there was
(docs/security.md); tools and call results are kept exactly as sent, elsewhere.
"""

from __future__ import annotations

from mcp_matrix.wire.versions import HANDSHAKE_PROTOCOLS, MODERN_PROTOCOLS

ECHO_CHARS = 8192  # characters in all, strings and keys
ECHO_STRING = 4096  # characters of one string
ECHO_ITEMS = 100  # items of one list, keys of one object
ECHO_DEPTH = 16  # levels of nesting
VERSION_LISTS = ("supportedVersions", "supported")  # lists of protocol versions, by key


def bounded(value: object, key: str = "", budget: int = ECHO_CHARS) -> object:
    """``value`` as a server sent it, cut to a bounded prefix that says how much there was:
    a string to ``ECHO_STRING`` characters plus ``… (N characters in all)``, a list or object
    to ``ECHO_ITEMS`` entries plus a last ``… (N items in all)`` item (``"…"`` key), nesting to
    ``ECHO_DEPTH``, all of it to ``budget`` characters. A list of protocol versions (under a
    ``VERSION_LISTS`` key) also keeps every version mcp-matrix speaks, wherever it stands, so
    no verdict changes. Values within the bounds are returned unchanged."""
    return _Echo(budget).keep(value, key, 0)


def bounded_fields(value: object) -> object:
    """``bounded`` with a budget per top-level field, so one huge field starves no other."""
    if not isinstance(value, dict) or len(value) > ECHO_ITEMS:
        return bounded(value)
    return {k: bounded(v, k) for k, v in value.items()}


class _Echo:
    """One ``bounded`` walk: the characters it may still keep."""

    def __init__(self, budget: int) -> None:
        self.left = budget

    def keep(self, value: object, key: str, depth: int) -> object:
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, int) and not isinstance(value, bool):
            self.left -= max(8, value.bit_length() // 3)  # about its digits
            return value
        if not isinstance(value, (list, dict)):
            self.left -= 8
            return value
        if depth >= ECHO_DEPTH:
            return f"… (nested deeper than {ECHO_DEPTH} levels)"
        if isinstance(value, list):
            return self._items(value, key, depth)
        out: dict[str, object] = {}
        for k, v in value.items():
            if len(out) >= ECHO_ITEMS or self.left <= 0:
                out["…"] = f"{len(value):,} keys in all"
                break
            out[self._text(k)] = self.keep(v, k, depth + 1)
        return out

    def _items(self, value: list, key: str, depth: int) -> list:
        speaks = (*HANDSHAKE_PROTOCOLS, *MODERN_PROTOCOLS) if key in VERSION_LISTS else ()
        out: list[object] = []
        for item in value:
            if len(out) < ECHO_ITEMS and self.left > 0:
                out.append(self.keep(item, "", depth + 1))
            elif isinstance(item, str) and item in speaks and item not in out:
                out.append(item)
        if len(out) < len(value):
            out.append(f"… ({len(value):,} items in all)")
        return out

    def _text(self, text: str) -> str:
        n = max(0, min(len(text), ECHO_STRING, self.left))
        self.left -= n
        return text if n == len(text) else f"{text[:n]}… ({len(text):,} characters in all)"


def short(value: object) -> str:
    """A value a server chose (an id, a cursor) as a problem message quotes it."""
    text = repr(value)
    return text if len(text) <= 100 else f"{text[:100]}… ({len(text):,} characters)"
