"""The writer registry: every report format behind one entry point, ``write_report``.

``run --report``, ``report`` and the tests all write through here, so a new format is one
writer module plus one line in ``WRITERS``. A writer takes the typed events of
mcp_matrix.core.events (as ``mcp_matrix.run.results.read_typed`` and ``ResultsWriter.typed`` give them), a
text stream and the release-failing verdicts; the events are typed once, here.

``WRITERS`` names each writer (``module:function``) and ``writer`` imports it when a report
is written: every command's flags read ``FORMATS``, and importing this module must not import
jinja2 (html) or xml (junit) into a process that writes no such report.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_matrix.core.events import Event

Writer = Callable[..., None]  # (events, stream, failing, **options)

if TYPE_CHECKING:
    from mcp_matrix.gate.policy import Policy

WRITERS: dict[str, str] = {
    "md": "mcp_matrix.report.markdown:write_markdown",
    "json": "mcp_matrix.report.json_report:write_json",
    "junit": "mcp_matrix.report.junit:write_junit",
    "sarif": "mcp_matrix.report.sarif:write_sarif",
    "html": "mcp_matrix.report.html:write_html",
    "summary": "mcp_matrix.report.summary:write_summary",
    "github": "mcp_matrix.report.github:write_github",
}
FORMATS = ("terminal", *WRITERS)
# What a written file is conventionally called, for `run --report FMT` without a file name.
SUFFIX = {
    "terminal": ".txt",
    "md": ".md",
    "json": ".json",
    "junit": ".xml",
    "sarif": ".sarif",
    "html": ".html",
    "summary": ".md",
    "github": ".txt",
}
# Writers that also take the release policy (they state the gate's verdict, as `check` does).
GATED = ("summary", "github")


def writer(fmt: str) -> Writer:
    """The writer function of ``fmt`` (a key of ``WRITERS``), imported now."""
    module, _, function = WRITERS[fmt].partition(":")
    return getattr(importlib.import_module(module), function)


def write_report(
    events: Iterable[Event],
    fmt: str,
    stream_or_path: IO[str] | str | Path | None = None,
    failing: Iterable[str] | None = None,
    details: bool = True,
    verbose: bool = False,
    *,
    policy: Policy | None = None,
    sarif_source: str | Path | None = None,
) -> None:
    """Write ``events`` as ``fmt`` (one of FORMATS) to a text stream, a file path, or stdout (None).

    ``policy``: the release policy; its ``fail_on`` is the default ``failing``, and the summary
    and GitHub annotations state its gate. ``sarif_source``: the file that defines the tools,
    where SARIF results and GitHub annotations point (else a logical location, no file).

    Files are written as UTF-8; a character that cannot be encoded (a lone surrogate from a
    hostile server) is written as a backslash escape rather than failing the report.
    ``failing`` defaults to the release-failing verdicts (``mcp_matrix.report.grid.RELEASE_FAILING``).
    """
    from mcp_matrix.core.events import typed_events
    from mcp_matrix.report.grid import RELEASE_FAILING

    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    events = typed_events(events)  # as they are when typed; JSON events checked and typed once
    if failing is None:
        failing = policy.fail_on if policy is not None else RELEASE_FAILING
    failing = list(failing)
    options: dict = {}
    if fmt in GATED and policy is not None:
        options["policy"] = policy
    if fmt in ("sarif", "github") and sarif_source is not None:
        options["source"] = sarif_source
    if stream_or_path is None or isinstance(stream_or_path, (str, Path)):
        path = None if stream_or_path is None else Path(stream_or_path)
        if path is None:
            _write(
                events, fmt, sys.stdout, failing, details, True, verbose=verbose, options=options
            )
            return
        with path.open("w", encoding="utf-8", errors="backslashreplace", newline="\n") as handle:
            _write(events, fmt, handle, failing, details, to_terminal=False, options=options)
        return
    _write(events, fmt, stream_or_path, failing, details, to_terminal=False, options=options)


def _write(
    events: list[Event],
    fmt: str,
    stream: IO[str],
    failing: list[str],
    details: bool,
    to_terminal: bool,
    verbose: bool = True,
    options: dict | None = None,
) -> None:
    if fmt == "terminal":
        from mcp_matrix.core.text import terminal_console
        from mcp_matrix.report.terminal import write_terminal

        if to_terminal:
            console = terminal_console(soft_wrap=True)
        else:  # plain text for a file or a captured stream: no colour codes
            console = terminal_console(
                file=stream,
                soft_wrap=True,
                no_color=True,
                color_system=None,
                width=120,
                force_terminal=False,
            )
        write_terminal(
            events, console, details=details, verbose=details and verbose
        )  # a file: every cell
        return
    writer(fmt)(events, stream, failing, **(options or {}))
