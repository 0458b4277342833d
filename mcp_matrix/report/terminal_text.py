"""What every terminal view prints text through: the server's and a profile's words made safe
(``printable`` for names, ``clean`` for prose, ``mcp_matrix.core.text``), name lists, and prose
wrapped with a hanging indent at the console width (at most 120 columns), never cut.
"""

from __future__ import annotations

import textwrap

from rich.console import Console
from rich.text import Text

from mcp_matrix.core.text import safe
from mcp_matrix.report import cause_words
from mcp_matrix.report.cause_words import LIST_LIMIT

MAX_WIDTH = 120


def printable(text: object) -> str:
    return safe(text)


def clean(text: object) -> str:
    """Untrusted prose for a terminal: line breaks folded, control characters shown as escapes."""
    return safe(text, fold=True)


def names(items: list[str], limit: int = LIST_LIMIT) -> str:
    return cause_words.name_list(items, limit, printable)


def text_width(console: Console) -> int:
    return max(60, min(console.width, MAX_WIDTH))


def print_wrapped(
    console: Console, text: str, indent: int, first: str = "", style: str = ""
) -> None:
    width = text_width(console) - indent - len(first)
    lines = textwrap.wrap(
        text, width=max(20, width), break_long_words=True, break_on_hyphens=False
    ) or [""]
    for i, line in enumerate(lines):
        head = first if i == 0 else " " * len(first)
        console.print(
            Text(" " * indent if not first else "") + Text(head) + Text(line, style=style),
            soft_wrap=True,
        )


__all__ = ["MAX_WIDTH", "clean", "names", "print_wrapped", "printable", "text_width"]
