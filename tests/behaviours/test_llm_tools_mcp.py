"""llm with llm-tools-mcp (profile ``llm``): the tool reaches the model under its own name with its
schema as served, and the description gains the server line (llm-tools-mcp 0.4
register_tools.py; observed in clients/calibrations/llm/0.36.json)."""

from __future__ import annotations

from tests.behaviours.conftest import discover

OBJ = {"type": "object", "properties": {"q": {"type": "string"}}}


def test_llm_appends_the_server_line_to_each_description():
    tools = [
        {"name": "a", "description": "Reads.", "inputSchema": OBJ},
        {"name": "b", "inputSchema": OBJ},
    ]
    view = discover("llm", tools, server="files")
    got = [t.model_description for t in view.tools]
    assert got == ["Reads.\n[from MCP server: files]", "\n[from MCP server: files]"]


def test_llm_keeps_names_and_schemas_as_served():
    odd = {"anyOf": [{"type": "object"}], "properties": {"x": {"type": "string"}}}
    view = discover("llm", [{"name": "files_read-2", "inputSchema": odd}])
    tool = view.tools[0]
    assert (tool.verdict, tool.model_name, tool.model_schema) == ("visible", "files_read-2", odd)
