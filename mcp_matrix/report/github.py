"""GitHub Actions annotations: one ``::error`` workflow command per failed release-gate item and
one ``::warning`` per other root cause, so a pull request shows what fails without opening a report.

The gate is the checklist's (``mcp_matrix.gate.checklist.evaluate``), as in the job summary. GitHub shows
at most 10 errors and 10 warnings per step, so each list stops at 9 with one "N more" line.
Everything is escaped by the workflow-command rules (``%``, CR and LF in the message; also ``:``
and ``,`` in a property), so a server's tool name can never start a command of its own: every
line this writer prints starts with ``::error`` or ``::warning``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import IO

from mcp_matrix.core.events import Event, typed_events
from mcp_matrix.gate.checklist import evaluate
from mcp_matrix.gate.policy import Policy
from mcp_matrix.report.cause_words import cause_title, cause_where, problems
from mcp_matrix.report.grid import RELEASE_FAILING
from mcp_matrix.report.sarif import Source
from mcp_matrix.report.triage import build_triage

SHOWN = 9  # GitHub displays 10 annotations of a kind per step: 9 and the "N more" line
MAX_MESSAGE = 2000  # characters of one message before escaping


def escape_data(text: str) -> str:
    """A workflow command's message (the toolkit's escapeData); other control characters (a
    bell, an escape sequence from a server) are shown as escapes, never sent to the log."""
    text = "".join(ch if ch.isprintable() or ch in "\r\n" else repr(ch)[1:-1] for ch in text)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (the toolkit's escapeProperty)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(
    kind: str, title: str, message: str, where: tuple[str, int | None] | None = None
) -> str:
    """One workflow command line: ``::kind file=...,line=...,title=...::message``."""
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    properties = []
    if where is not None:
        properties.append(f"file={escape_property(where[0])}")
        if where[1]:
            properties.append(f"line={where[1]}")
    properties.append(f"title={escape_property(title[:200])}")
    return f"::{kind} {','.join(properties)}::{escape_data(message)}\n"


def write_github(
    events: Iterable[Event],
    stream: IO[str],
    failing: Iterable[str] = RELEASE_FAILING,
    policy: Policy | None = None,
    source: str | Path | None = None,
) -> None:
    """The annotations for ``events`` under ``policy`` (default: the default policy failing on
    ``failing``), as workflow commands on ``stream``; with ``source`` (the file that defines the
    tools, as for SARIF) each one about a tool named in it is placed on that line."""
    events = typed_events(events)
    policy = policy or Policy(fail_on=tuple(failing))
    tools = Source(source) if source else None

    def where(tool: str | None) -> tuple[str, int | None] | None:
        """The tool's line in the source: a file-level annotation would sit on the wrong file."""
        if tools is None or not tool:
            return None
        line = tools.line(tool)
        return (tools.uri, line) if line else None

    failed = [i for i in evaluate(events, policy) if not i.passed]
    for item in failed[:SHOWN]:
        tool = item.cell[2] if item.cell else None
        stream.write(command("error", f"mcp-matrix gate: {item.name}", item.evidence, where(tool)))
    if len(failed) > SHOWN:
        stream.write(
            command(
                "error",
                "mcp-matrix gate",
                f"{len(failed) - SHOWN} more failed gate items: see the job summary and checklist.md",
            )
        )
    gating = {item.cell for item in failed if item.cell}
    others = [
        c
        for c in problems(build_triage(events))
        if c.verdict not in policy.fail_on and not (c.seen & gating)
    ]
    for c in others[:SHOWN]:
        message = f"{cause_title(c)} ({cause_where(c)})" + (f" Fix: {c.fix}" if c.fix else "")
        stream.write(command("warning", f"mcp-matrix: {c.verdict}", message, where(c.tool)))
    if len(others) > SHOWN:
        stream.write(
            command(
                "warning",
                "mcp-matrix",
                f"{len(others) - SHOWN} more problems: see the job summary and matrix.md",
            )
        )


__all__ = ["command", "escape_data", "escape_property", "write_github"]
