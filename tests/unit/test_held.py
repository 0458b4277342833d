"""``Held`` (what a profile calls with) is built in one place, so the drivers cannot disagree on it.

``run``, ``replay``, ``diff`` and ``fix`` once each built it their own way, and ``replay`` skipped
the stale-cache window the others applied (tests/test_stale_window.py has that case).
"""

from __future__ import annotations

import ast
from pathlib import Path

import mcp_matrix

PACKAGE = Path(mcp_matrix.__file__).parent
HOME = PACKAGE / "run" / "held.py"


def _builds_held(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "Held"
    ]


def test_held_is_built_only_by_the_functions_beside_it():
    elsewhere = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != HOME and (lines := _builds_held(path))
    }
    assert elsewhere == {}, "build Held with held.hold or held.hold_tool"
    assert _builds_held(HOME), "held.py builds it"
