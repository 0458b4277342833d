"""Discovery behaviours that add to what the model sees: parameters the client itself injects.

Gemini CLI 0.61.0 (observed, clients/calibrations/gemini-cli/0.61.0.json) adds a boolean
``wait_for_previous`` property to every tool's root ``properties`` (its scheduler's own
parameter, taken off before the call). A server property of the same name would be shadowed.
"""

from __future__ import annotations

from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding, ListState, evolve

WAIT_FOR_PREVIOUS = {
    "type": "boolean",
    "description": "Set to true to wait for all previously requested tools in this turn to complete before starting. "
    "Set to false (or omit) to run in parallel. Use true when this tool depends on the output of previous tools.",
}


@behaviour(
    "add-property",
    "discovery",
    params={
        "name": {
            "type": "string",
            "default": "wait_for_previous",
            "description": "the property the client adds",
        },
        "schema": {
            "type": "object",
            "default": WAIT_FOR_PREVIOUS,
            "description": "its schema, as the model sees it",
        },
    },
)
def add_property(
    state: ListState, name: str = "wait_for_previous", schema: JSON = WAIT_FOR_PREVIOUS
) -> ListState:
    """The client adds its own property to every object root (Gemini CLI 0.61.0 ``wait_for_previous``).

    Observed (clients/calibrations/gemini-cli/0.61.0.json); the source read at 5411f113 predates it
    (docs/clients/google.md#gemini-cli). A server property of that name is
    replaced (the client's wins), reported as a loss.
    """
    tools = []
    changed = False
    for t in state.tools:
        root = t.schema
        if t.hidden or not isinstance(root, dict) or root.get("type") != "object":
            tools.append(t)
            continue
        props = given if isinstance(given := root.get("properties"), dict) else {}
        new = {**root, "properties": {**props, name: schema}}
        if name in props:
            finding = Finding(
                "property-shadowed",
                f"the client's own {name!r} replaces the server's property of that name",
                f"/inputSchema/properties/{name}",
                lost=True,
            )
            tools.append(t.with_finding(finding, schema=new))
        else:
            tools.append(evolve(t, schema=new))
        changed = True
    return evolve(state, tools=tuple(tools)) if changed else state


@behaviour("omit-empty-parameters", "discovery")
def omit_empty_parameters(state: ListState) -> ListState:
    """A root ``{type: object, properties: {}}`` is sent with no parameters at all (Qwen Code 0.24.4).

    Observed (clients/calibrations/qwen-code/0.24.4.json; Qwen Code is a Gemini CLI fork, docs/clients/google.md#gemini-cli):
    the OpenAI request's function has no ``parameters`` key; ``{type: object}`` alone is sent as
    it is. Nothing is lost: the tool takes no arguments either way.
    """
    tools = []
    changed = False
    for t in state.tools:
        s = t.schema
        if (
            not t.hidden
            and isinstance(s, dict)
            and s.get("properties") == {}
            and set(s) <= {"type", "properties"}
            and s.get("type") == "object"
        ):
            tools.append(evolve(t, schema=None))
            changed = True
        else:
            tools.append(t)
    return evolve(state, tools=tuple(tools)) if changed else state
