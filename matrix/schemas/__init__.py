"""The published JSON Schemas (draft 2020-12) of every document mcp-matrix reads or writes.

They ship inside the package (``matrix/schemas/*.schema.json``) so other tools can validate
our output, and our readers validate input against the same files (docs/schemas.md lists
them with the format and versions each covers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class Published:
    """One published schema: the document it describes and the versions it covers."""

    name: str
    format: str  # the document's ``format`` value, or what the file is when it has none
    versions: tuple[int, ...]
    written_by: str

    @property
    def file(self) -> str:
        return f"{self.name}.schema.json"


SCHEMAS: tuple[Published, ...] = (
    Published("results", "mcp-matrix.results", (1, 2), "run --results, merge (JSON lines: one event a line)"),
    Published("snapshot", "mcp-matrix.snapshot", (1, 2), "snapshot -o, snapshot (stdout)"),
    Published("discovery", "mcp-matrix.discovery", (1, 2), "discover --json"),
    Published("report", "mcp-matrix.report", (1,), "report --format json, run --report json:FILE"),
    Published("diff", "mcp-matrix.diff", (1,), "diff --json"),
    Published("replay", "mcp-matrix.replay", (1,), "replay --json"),
    Published("replay-events", "mcp-matrix.replay", (1,), "replay --results (JSON lines: one event a line)"),
    Published("cases", "cases file (YAML)", (1,), "read by run --cases"),
    Published("policy", "policy file (YAML or [tool.mcp-matrix] in pyproject.toml)", (1,), "read by check --policy"),
)


@cache
def load_schema(name: str) -> Any:
    """The schema ``name`` (one of SCHEMAS) as parsed JSON; callers must not change it."""
    text = resources.files("matrix.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    return json.loads(text)


__all__ = ["SCHEMAS", "Published", "load_schema"]
