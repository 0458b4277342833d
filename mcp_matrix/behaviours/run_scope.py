"""How far a rejected ``tools/list`` reaches: the server alone, or the user's whole agent run.

Why: a CLI that cannot use a server's list logs it and goes on with its other servers (observed:
Claude Code, Gemini CLI, opencode, Qwen Code, Continue CLI, Kilo CLI, each sending its model
request without the probe server's tools). A library raises the error out of the call that
builds the agent's tools (observed: the MCP Python and TypeScript SDKs' clients, OpenAI Agents,
pydantic-ai, LlamaIndex, smolagents, Semantic Kernel, ...: the driver got the exception and no
model request was made), so the program that built the agent fails, and every other server
attached to the same agent is lost with it unless the program catches the error. The list
gates (``ts-sdk-gate``, ``python-sdk-gate``, a library's own check) say *that* the list fails;
this entry, after the gate in a library's discovery, says the failure is the run's
(docs/design.md#verdicts). The model API's entries (``provider``) run after it
(``simulate.discovery.sending_order``) and never see a dropped server.
"""

from __future__ import annotations

from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.model import Finding, ListState, evolve
from mcp_matrix.core.verdicts import V

RUN_ABORTED = Finding(
    code="run-aborted",
    message=(
        "the library raises the error out of the call that loads the server's tools: the "
        "agent run fails, and every other server attached to it is lost with this one unless "
        "the program catches the error"
    ),
    lost=True,
    blast_radius="run",
)


@behaviour("list-failure-raises", "discovery")
def list_failure_raises(state: ListState) -> ListState:
    """A dropped server's list failure raised to the program ends its run (docs/clients/sdks.md)."""
    if state.outcome != V.SERVER_DROPPED.name or not state.findings:
        return state
    if state.findings[-1].code == RUN_ABORTED.code:
        return state
    return evolve(state, findings=state.findings + (RUN_ABORTED,))


def fold_run_scope(findings: tuple[Finding, ...]) -> Finding | None:
    """The finding that dropped the server, widened to the run when ``list-failure-raises``
    followed it: one finding per cell (blast radius ``run``), its evidence both entries'."""
    if not findings:
        return None
    last = findings[-1]
    if last.code != RUN_ABORTED.code or len(findings) < 2:
        return last
    cause = findings[-2]
    return evolve(
        cause,
        message=f"{cause.message}; {last.message}",
        blast_radius="run",
        evidence=tuple(cause.evidence) + tuple(last.evidence),
    )
