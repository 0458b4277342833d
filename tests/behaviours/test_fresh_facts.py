"""Fresh client facts from issue 23 section 5, each modelled in its profile and pinned here."""

from __future__ import annotations

from tests.behaviours.conftest import discover


def tools(n: int) -> list[dict]:
    return [
        {"name": f"t{i}", "inputSchema": {"type": "object", "properties": {}}} for i in range(n)
    ]


def test_jetbrains_copilot_takes_128_tools():
    out = discover("jetbrains-copilot", tools(128))
    assert out.outcome == "ok"
    assert {t.verdict for t in out.tools} == {"visible"}


def test_jetbrains_copilot_fails_every_request_past_128_tools():
    out = discover("jetbrains-copilot", tools(129))
    assert out.outcome == "session-broken"
    assert out.whole  # no one tool is to blame: the count is
    assert any(f.code == "too-many-tools" and "128" in f.message for f in out.findings)


def test_cursor_filters_a_tool_whose_server_and_tool_names_add_up_to_60():
    """ComposioHQ/composio#2788: server 'g' + a 59-character tool is filtered; 59 in all is kept."""
    out = discover("cursor", [_named("x" * 59), _named("y" * 58)], server="g")
    assert out.by_tool()["x" * 59].verdict == "hidden"
    assert out.by_tool()["y" * 58].verdict == "visible"


def _named(name: str) -> dict:
    return {"name": name, "inputSchema": {"type": "object", "properties": {}}}


def test_cursor_filters_a_tool_whose_name_has_a_dot_and_keeps_dashes_and_underscores():
    """webstudio#5960, gripmock#875, dcc-mcp-core#663 (2026): a dotted name is filtered out."""
    out = discover("cursor", [_named("docs.find"), _named("docs-find"), _named("docs_find")])
    views = out.by_tool()
    assert views["docs.find"].verdict == "hidden"
    assert "docs.find" not in [t.model_name for t in out.tools if t.verdict != "hidden"]
    assert views["docs-find"].verdict == "visible"
    assert views["docs_find"].verdict == "visible"
