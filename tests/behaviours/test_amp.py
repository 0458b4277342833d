"""Amp (profile ``amp``): the names ``amp tools list --json`` printed on 2026-12-02 (Amp
0.0.1790142911-g7618fb, hand-written tool lists served by the probe server as ``srv`` and
``my-srv.x``), against ``amp_name``, and what the profile makes of tools that meet on one name."""

from __future__ import annotations

import pytest

from mcp_matrix.behaviours.amp import amp_name
from tests.behaviours.conftest import discover

LISTED = [  # (server, tool as served, name Amp listed)
    ("srv", "x__y", "mcp__srv__x_y"),
    ("srv", "_x_", "mcp__srv__x"),
    ("srv", "a..b", "mcp__srv__a_b"),
    ("srv", "Ünïcode", "mcp__srv__n_code"),
    ("srv", "ab", "mcp__srv__ab"),
    ("srv", "a b-c.d", "mcp__srv__a_b_c_d"),
    ("srv", "-lead", "mcp__srv__lead"),
    ("srv", "trail-", "mcp__srv__trail"),
    ("srv", "日本", "mcp__srv__tool"),
    ("srv", "Mixed_Case", "mcp__srv__Mixed_Case"),
    ("srv", "a1.b2", "mcp__srv__a1_b2"),
    ("srv", "foo_", "mcp__srv__foo"),
    ("srv", "caf_é", "mcp__srv__caf"),
    ("srv", "x" * 52, "mcp__srv__" + "x" * 52),
    ("srv", "y" * 53, "mcp__srv__" + "y" * 53),
    ("srv", "a" * 54, "a" * 54),
    ("srv", "z" * 60, "z" * 60),
    ("srv", "w" * 64, "w" * 64),
    ("srv", "v" * 70, "v" * 64),
    ("my-srv.x", "tool", "mcp__my_srv_x__tool"),
    ("my-srv.x", "UPPER", "mcp__my_srv_x__UPPER"),
    ("my-srv.x", "x-1", "mcp__my_srv_x__x_1"),
    ("my-srv.x", "b" * 55, "b" * 55),
    ("my-srv.x", "c" * 80, "c" * 64),
]


@pytest.mark.parametrize(("server", "tool", "listed"), LISTED)
def test_the_name_is_the_one_amp_listed(server, tool, listed):
    assert amp_name(server, tool) == listed


OBJ = {"type": "object", "properties": {"q": {"type": "string"}}}


def test_of_tools_that_meet_on_one_name_only_the_last_listed_is_kept():
    """Listed 2026-12-02: of 'a-é-b' and 'a..b' (both a_b), and 'é' and '日本' (both tool), only
    the later one of each pair was in amp tools list."""
    tools = [
        {"name": n, "description": n, "inputSchema": OBJ} for n in ("a-é-b", "a..b", "é", "日本")
    ]
    view = discover("amp", tools, server="srv")
    shown = {t.tool: t.verdict for t in view.tools}
    assert shown["a..b"] != "hidden" and shown["日本"] != "hidden"
    assert shown["a-é-b"] == "hidden" and shown["é"] == "hidden"
