"""Provider rules re-checked against their current sources (issue 23, section 4).

The Anthropic API takes tool definition names up to 128 characters (64 before 2025-06); a
``tool_reference`` block, which Claude Code's default ToolSearch mode sends, still stops at 64.
"""

from __future__ import annotations

from tests.behaviours.conftest import discover


def tool(name: str) -> dict:
    return {"name": name, "inputSchema": {"type": "object", "properties": {}}}


def test_an_anthropic_definition_name_of_100_characters_is_accepted():
    name = "t" * 100
    out = discover("langchain-anthropic", [tool(name), tool("ok")])
    assert out.outcome == "ok"
    assert out.by_tool()[name].verdict == "visible"


def test_an_anthropic_definition_name_over_128_characters_breaks_the_session():
    name = "t" * 129
    out = discover("vercel-ai-sdk-anthropic", [tool(name), tool("ok")])
    assert out.outcome == "session-broken"
    assert out.culprits == (name,)


def test_claude_code_278_still_breaks_the_session_on_a_name_over_64_the_tool_reference_limit():
    name = "t" * 60  # mcp__srv__ + 60 = 70 characters, over tool_reference's 64
    out = discover("claude-code-278", [tool(name), tool("ok")])
    assert out.outcome == "session-broken"
    assert out.culprits == (name,)


def test_claude_code_2_1_332_calls_a_name_over_64_and_leaves_out_one_over_128():
    """Observed 2026-12-02 with the API's limits enforced (clients/calibrations/claude-code/2.1.332.json:
    limit-long-name, very-long-name): an 81-character name is called, a 141-character one is left
    out of every request and the rest of the server stays."""
    mid, huge = "t" * 70, "u" * 129  # mcp__srv__ + 70 = 80; + 129 = 139
    out = discover("claude-code", [tool(mid), tool(huge), tool("ok")])
    verdicts = {t.tool: t.verdict for t in out.tools}
    assert out.outcome == "ok"
    assert verdicts[mid] != "hidden" and verdicts["ok"] != "hidden"
    assert verdicts[huge] == "hidden"


def test_legacy_claude_code_breaks_on_a_name_over_64_from_2_1_48_when_toolsearch_defers_every_tool():
    """2.1.48 - 2.1.143 (observed 2.1.100 with ToolSearch on, probe set limit-long-name)."""
    name = "t" * 60  # mcp__srv__ + 60 = 70 characters
    out = discover("claude-code-legacy", [tool(name), tool("ok")])
    assert out.outcome == "session-broken"
    assert out.culprits == (name,)


def test_claude_code_before_2_1_48_sends_definitions_so_only_the_128_limit_breaks_the_session():
    """2.0.x - 2.1.47 (cli.js@2.1.47: ToolSearch 'tst-auto', a small server not deferred)."""
    fits, over = "t" * 60, "u" * 120  # 70 and 130 characters with mcp__srv__
    assert discover("claude-code-legacy-early", [tool(fits), tool("ok")]).outcome == "ok"
    out = discover("claude-code-legacy-early", [tool(over), tool("ok")])
    assert out.outcome == "session-broken"
    assert out.culprits == (over,)
