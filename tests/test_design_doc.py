"""docs/design.md states the verdict table as mcp_matrix/core/verdicts.py has it.

The table between the ``verdicts:begin`` and ``verdicts:end`` markers is generated from
``VERDICTS``; ``UPDATE_SNAPSHOTS=1`` rewrites it (then review the diff).
"""

from __future__ import annotations

import os
import re

from mcp_matrix.core.verdicts import VERDICTS
from tests.conftest import REPO

DESIGN = REPO / "docs" / "design.md"
BLOCK = re.compile(r"(<!-- verdicts:begin[^\n]*-->\n)(.*?)(<!-- verdicts:end -->)", re.DOTALL)


def verdict_table() -> str:
    """The table as docs/design.md should show it: worst first, one row per verdict."""
    rows = [
        "| verdict | phase | symbol | meaning | fails a release by default |",
        "|---|---|---|---|---|",
    ]
    for v in VERDICTS:
        gate = "yes" if v.fails_release else "no"
        rows.append(f"| `{v.name}` | {v.phase} | {v.symbol} | {v.meaning} | {gate} |")
    return "\n".join(rows) + "\n"


def test_design_doc_verdict_table_is_the_one_in_verdicts_py():
    text = DESIGN.read_text(encoding="utf-8")
    m = BLOCK.search(text)
    assert m, f"{DESIGN.relative_to(REPO)} has no verdicts:begin / verdicts:end block"
    expected = verdict_table()
    if os.environ.get("UPDATE_SNAPSHOTS") and m.group(2) != expected:
        DESIGN.write_text(text[: m.start(2)] + expected + text[m.end(2) :], encoding="utf-8")
        return
    assert m.group(2) == expected, (
        "docs/design.md's verdict table differs from mcp_matrix/core/verdicts.py; "
        "rewrite it with UPDATE_SNAPSHOTS=1 pytest tests/test_design_doc.py"
    )


def test_design_doc_names_every_verdict_and_each_vocabulary_word():
    text = DESIGN.read_text(encoding="utf-8")
    for v in VERDICTS:
        assert f"`{v.name}`" in text, v.name
    for word in (
        "Target",
        "Snapshot",
        "Profile",
        "Behaviour",
        "Evidence",
        "Client view",
        "Case",
        "Cell",
        "Verdict",
        "Finding",
        "Root cause",
        "Gate",
    ):
        assert f"- **{word}**" in text, f"the vocabulary does not define {word}"
