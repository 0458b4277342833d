"""A server that lists one name twice: the cell a call reaches is the copy the client keeps."""

from __future__ import annotations

from mcp_matrix.core.model import ClientView, ToolView


def _view(*verdicts: str) -> ClientView:
    tools = tuple(
        ToolView(tool="echo", index=i, verdict=v, model_name="echo", model_schema={})
        for i, v in enumerate(verdicts)
    )
    return ClientView(profile="p", outcome="ok", tools=tools)


def test_a_client_keeping_the_first_copy_calls_the_first():
    assert _view("visible", "hidden").by_tool()["echo"].index == 0


def test_a_client_keeping_the_last_copy_calls_the_last():
    assert _view("hidden", "visible").by_tool()["echo"].index == 1


def test_when_no_copy_is_shown_the_first_speaks_for_the_name():
    assert _view("hidden", "hidden").by_tool()["echo"].index == 0
