"""A notes server written the way FastMCP users write one (``fastmcp`` 4.x): typed parameters,
``Optional`` values, ``Literal`` choices, defaults, a nested pydantic model and a list; FastMCP
turns them into the JSON Schema real users ship (``anyOf`` with ``null``, ``$defs``/``$ref``,
``title`` on every property). The corpus uses it to prove none of that is a false alarm."""

from __future__ import annotations

from typing import Annotated, Literal

from fastmcp import FastMCP
from pydantic import BaseModel, Field

mcp = FastMCP("notes-fastmcp")
NOTES: dict[str, dict] = {}


class Author(BaseModel):
    name: str
    email: str | None = None


@mcp.tool(annotations={"readOnlyHint": True})
def search_notes(
    query: Annotated[str, Field(description="words to look for")],
    limit: Annotated[int, Field(ge=1, le=50, description="at most this many")] = 10,
    sort: Literal["newest", "oldest", "relevance"] = "relevance",
    tag: str | None = None,
) -> list[str]:
    """Search notes by text."""
    return [
        k for k, v in NOTES.items() if query in v["text"] and (tag is None or tag in v["tags"])
    ][:limit]


@mcp.tool()
def add_note(text: str, author: Author, tags: list[str] | None = None) -> str:
    """Add a note."""
    key = f"n{len(NOTES) + 1}"
    NOTES[key] = {"text": text, "author": author.model_dump(), "tags": tags or []}
    return key


@mcp.tool(annotations={"readOnlyHint": True})
def count_notes() -> int:
    """How many notes there are."""
    return len(NOTES)


if __name__ == "__main__":
    mcp.run(show_banner=False)
