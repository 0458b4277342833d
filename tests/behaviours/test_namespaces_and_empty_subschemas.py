"""A client's namespace prefix is not a rename, and removing an empty subschema loses nothing.

Both were false alarms found by `fix` on a synthetic list: Amp's ``mcp__<server>__`` and Semantic
Kernel's ``<plugin>-`` made every tool ``degraded`` (so `fix` renamed a tool again and again), and
a client removing the ``items: {}`` that `fix` adds counted as a new loss (so the fix for Copilot's
broken session was refused).
"""

from __future__ import annotations

from mcp_matrix.behaviours.rewrite import losses
from tests.behaviours.conftest import discover

OBJ = {"type": "object", "properties": {"q": {"type": "string"}}}


def _tool(name: str) -> dict:
    return {"name": name, "description": "d", "inputSchema": OBJ}


def test_amp_prefixing_a_name_is_no_finding_and_a_cleaned_name_costs_nothing():
    view = discover("amp", [_tool("tag_notes"), _tool("get.env")], server="memory")
    cells = {t.tool: t for t in view.tools}
    assert cells["tag_notes"].verdict == "visible" and not cells["tag_notes"].findings
    assert cells["get.env"].verdict == "visible"
    (note,) = [f for f in cells["get.env"].findings if f.code == "name-sanitised"]
    assert note.materiality == "none"


def test_semantic_kernel_prefixing_a_name_is_no_finding():
    view = discover("semantic-kernel", [_tool("tag_notes")], server="memory")
    (cell,) = view.tools
    assert cell.verdict == "visible"
    assert not [f for f in cell.findings if f.code == "name-sanitised"]


def test_semantic_kernel_takes_the_plugin_name_a_user_writes_for_a_dashed_server():
    view = discover("semantic-kernel", [_tool("tag_notes")], server="mcp-time")
    (cell,) = view.tools
    assert cell.verdict == "visible"
    (note,) = [f for f in cell.findings if f.code == "name-sanitised"]
    assert "'mcp_time'" in note.message and note.materiality == "none"


def test_removing_an_empty_items_or_additional_properties_is_no_loss():
    before = {"type": "array", "items": {}, "additionalProperties": True}
    assert losses(before, {"type": "array"}) == []
    assert losses({"items": {"type": "string"}}, {}) == [("/items", "removed")]
    assert losses({"not": {}}, {}) == [("/not", "removed")]
