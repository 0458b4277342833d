"""Every class under ``mcp_matrix`` has a name of its own.

Two classes with one name (``Verdict`` the table row and ``Verdict`` a call's verdict) make a
reader, a traceback and a grep guess which one is meant; a class's name should say what it is.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_matrix"


def class_sites(root: Path) -> dict[str, list[str]]:
    """Class name -> every ``path:line`` under ``root`` that defines a class of that name."""
    sites: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                sites[node.name].append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return sites


def test_no_two_classes_under_the_package_share_a_name() -> None:
    shared = {name: where for name, where in class_sites(PACKAGE).items() if len(where) > 1}
    assert not shared, (
        "classes sharing a name (give each a name that says what it is):\n"
        + "\n".join(f"  {name}: {', '.join(where)}" for name, where in sorted(shared.items()))
    )


def test_the_check_sees_a_shared_name(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("class Outcome:\n    pass\n", encoding="utf-8")
    (pkg / "sub" / "b.py").write_text(
        "def f():\n    class Outcome:\n        pass\n", encoding="utf-8"
    )
    assert class_sites(pkg)["Outcome"] == ["pkg/a.py:1", "pkg/sub/b.py:2"]
