"""Google ADK 2.x: tool descriptions fenced as untrusted data before they reach the model.

``McpTool.process_llm_request`` (google-adk 2.13.0, ``tools/mcp_tool/mcp_tool.py``) swaps each
MCP tool's declaration for a fenced one: the description is wrapped in
``<<<BEGIN_UNTRUSTED_TOOL_DESCRIPTION>>>`` / ``<<<END_UNTRUSTED_TOOL_DESCRIPTION>>>`` lines,
and so is every ``description`` string inside the parameter schema
(``flows/llm_flows/context/_fencing.py``: ``fence_tool_description``,
``fence_schema_descriptions``); value positions (``default``, ``enum``, ``examples``,
``example``, ``const``) are left alone, and the markers themselves are elided from any text
that carries them. The model still reads every word; it reads them as quoted data.
"""

from __future__ import annotations

from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding, ListState, evolve

BEGIN = "<<<BEGIN_UNTRUSTED_TOOL_DESCRIPTION>>>"
END = "<<<END_UNTRUSTED_TOOL_DESCRIPTION>>>"
ELIDED = "<<<ELIDED_MARKER>>>"
_MARKERS = (BEGIN, END, "<<<BEGIN_SYSTEM_INSTRUCTION>>>", "<<<END_SYSTEM_INSTRUCTION>>>")
VALUE_POSITIONS = frozenset({"default", "enum", "examples", "example", "const"})
SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)


def elide(text: str) -> str:
    if "<<<" not in text:  # the usual case: every enum value of a long enum passes here
        return text
    for marker in _MARKERS:
        text = text.replace(marker, ELIDED)
    return text


def fence(description: JSON) -> JSON:
    """ADK's fence for one description; an empty (or absent) one is left as it is."""
    if not isinstance(description, str) or not description:
        return description
    return f"{BEGIN}\n{elide(description)}\n{END}"


def fence_schema(node: JSON, in_value: bool = False, depth: int = 0) -> JSON:
    """Every schema-position ``description`` fenced; markers elided from other strings."""
    if depth > 200:  # the SDK recurses without a bound; beyond this a real schema is gone already
        return node
    if isinstance(node, list):
        return [fence_schema(x, in_value, depth + 1) for x in node]
    if not isinstance(node, dict):
        return elide(node) if isinstance(node, str) else node
    out: dict = {}
    for key, value in node.items():
        k = elide(key) if isinstance(key, str) else key
        if not in_value and key == "description":
            out[k] = (
                fence(value) if isinstance(value, str) else fence_schema(value, False, depth + 1)
            )
        elif not in_value and key in VALUE_POSITIONS:
            out[k] = fence_schema(value, True, depth + 1)
        elif not in_value and key in SCHEMA_MAPS and isinstance(value, dict):
            out[k] = {
                (elide(n) if isinstance(n, str) else n): fence_schema(s, False, depth + 1)
                for n, s in value.items()
            }
        elif isinstance(value, (dict, list)):
            out[k] = fence_schema(value, in_value, depth + 1)
        else:
            out[k] = elide(value) if isinstance(value, str) else value
    return out


@behaviour("adk-fence-descriptions", "discovery")
def adk_fence_descriptions(state: ListState) -> ListState:
    """Google ADK 2.x wraps tool and parameter descriptions in untrusted-data markers.

    Newer than the source read at 1cc66964, which covered the schema path only
    (docs/clients/google.md#google-adk); see the module docstring.
    """
    tools = []
    for tool in state.tools:
        if tool.hidden:
            tools.append(tool)
            continue
        description = fence(tool.description)
        schema = fence_schema(tool.schema)
        if description == tool.description and schema == tool.schema:
            tools.append(tool)
            continue
        tools.append(
            tool.with_finding(
                Finding(
                    code="description-fenced",
                    message=(
                        "the description (and each parameter description) reaches the model "
                        f"between {BEGIN} and {END} lines, as data the system prompt tells "
                        "the model not to follow"
                    ),
                    pointer="/description",
                ),
                description=description,
                schema=schema,
            )
        )
    return evolve(state, tools=tuple(tools))
