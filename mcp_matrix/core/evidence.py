"""Evidence: where a modelled client behaviour comes from, and how far to trust it."""

from __future__ import annotations

from dataclasses import dataclass

# Strongest first, as docs/design.md lists them. A verdict is never stronger than its weakest evidence.
LEVELS = ("observed", "code", "issue", "doc", "assumed")


@dataclass(frozen=True)
class Evidence:
    level: str
    source: str = ""
    note: str = ""
    checked: str = (
        ""  # YYYY-MM-DD the source was last read (observed: the record's date); "" unknown
    )

    def to_json(self) -> dict:
        return {
            "level": self.level,
            "source": self.source,
            "note": self.note,
            "checked": self.checked,
        }


def weakest(levels) -> str | None:
    """The weakest of the given evidence levels (or Evidence objects), or None if there are none."""
    ranks = [LEVELS.index(x.level if isinstance(x, Evidence) else x) for x in levels]
    return LEVELS[max(ranks)] if ranks else None
