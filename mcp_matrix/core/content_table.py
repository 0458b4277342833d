"""Values stored once per distinct content and referenced by number (documents v2).

A 5,000-tool server seen by 20 profiles has 100,000 cells but about 13,000 distinct
model-facing schemas and 10,000 distinct findings: writing each cell's schema in full made
``discover --json`` 160 MB. Cells now carry the number of an entry in a table that holds
each distinct value once. The rewrite framework is copy-on-write, so a schema a profile
leaves alone is the very object the next profile holds: lookups go by identity first and
only serialise an object the table has not seen.
"""

from __future__ import annotations

import json
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def canonical(value: object) -> str:
    """The JSON text that decides whether two values are the same content. Key order is kept:
    the order of a schema's properties is part of what a model is shown."""
    return _ENCODER.encode(value)


class ContentTable:
    """Distinct JSON values in first-seen order, kept as their JSON text (what a writer writes);
    ``ref(value)`` is the value's number."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._by_text: dict[str, int] = {}
        self._by_id: dict[int, int] = {}
        self._held: list[
            object
        ] = []  # keeps every object looked up by identity alive (ids stay unique)

    def ref(self, value: Any) -> int:
        known = self._by_id.get(id(value))
        if known is not None:
            return known
        number = self._by_id[id(value)] = self.number(canonical(value))
        self._held.append(value)
        return number

    def number(self, text: str) -> int:
        """The number of the value whose JSON text is ``text``: for a value made afresh for one
        look-up (held by ``ref``, it would be kept alive for nothing)."""
        number = self._by_text.get(text)
        if number is None:
            number = self._by_text[text] = len(self.texts)
            self.texts.append(text)
        return number

    def __len__(self) -> int:
        return len(self.texts)


def resolve(table: object, ref: object, where: str) -> Any:
    """The value ``ref`` names in ``table`` (a list); a bad reference is the reader's ValueError."""
    if (
        isinstance(ref, bool)
        or not isinstance(ref, int)
        or not isinstance(table, list)
        or not 0 <= ref < len(table)
    ):
        raise ValueError(
            f"{where}: {ref!r} is not an entry of the table ({len(table) if isinstance(table, list) else 0} entries)"
        )
    return table[ref]
