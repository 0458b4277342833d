"""No function under ``mcp_matrix`` is over cyclomatic complexity 20 without a reason written down.

ruff's C901 (mccabe) measures; a function over the limit passes only when the line right above its
``def`` (or above its first decorator) is a ``# complexity: <why>`` comment, so each one is a
decision a reader can see, not an accident.
"""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

from tests.conftest import REPO, installed_tool

LIMIT = 20
MARK = "# complexity:"


def over_the_limit(root: str = "mcp_matrix") -> list[tuple[Path, int, str]]:
    """(file, line of the ``def``, ruff's message) for every function over ``LIMIT``."""
    ruff = installed_tool("ruff")
    assert ruff, "ruff is a test dependency (pyproject.toml [test]); install the test extras"
    r = subprocess.run(
        [ruff, "check", "--no-cache", "--select", "C901", "--config",
         f"lint.mccabe.max-complexity={LIMIT}", "--output-format", "json", root],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    found = json.loads(r.stdout or "[]")
    return [(Path(f["filename"]), f["location"]["row"], f["message"]) for f in found]


def has_reason(path: Path, def_line: int) -> bool:
    """Whether the line above the function's ``def`` (or its first decorator) is a reason."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == def_line:
            top = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            above = source.splitlines()[top - 2] if top >= 2 else ""
            return above.strip().startswith(MARK) and bool(above.strip()[len(MARK) :].strip())
    raise AssertionError(f"{path}:{def_line}: ruff names a function the ast does not find")


def test_every_function_over_the_limit_says_why() -> None:
    silent = [
        f"{path.relative_to(REPO)}:{line}: {message}"
        for path, line, message in over_the_limit()
        if not has_reason(path, line)
    ]
    assert not silent, (
        f"over complexity {LIMIT} with no `{MARK} <why>` line above the def (split it, or say why):\n"
        + "\n".join(silent)
    )


def test_a_reason_is_read_above_the_decorators(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "# complexity: one branch per keyword\n@staticmethod\n@other\ndef f():\n    pass\n\n"
        "x = 1\ndef g():\n    pass\n\n# complexity:\ndef h():\n    pass\n",
        encoding="utf-8",
    )
    assert has_reason(path, 4)
    assert not has_reason(path, 8)
    assert not has_reason(path, 12)  # a mark with no reason is not a reason
