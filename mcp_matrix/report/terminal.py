"""Terminal writer: the problems to fix first (one line per root cause, worst first), then the
tools x clients grid with one-letter client codes, then, with ``details``, every cell.

Fits 100-120 columns at 20+ clients: clients are single-letter columns with a legend, prose is
wrapped with a hanging indent at the console width (at most 120), and nothing is cut to an
ellipsis. Everything from the server or a profile goes through mcp_matrix.core.text first.
"""

from __future__ import annotations

import re
import string
import sys
from collections.abc import Iterable, Iterator, Sequence

from rich.console import Console
from rich.text import Text

from mcp_matrix.core.events import CallCell, Event, ProfileError, RunStarted, Skipped, typed_events
from mcp_matrix.core.model import ClientView
from mcp_matrix.core.text import terminal_console
from mcp_matrix.core.verdicts import COLOUR, MEANING, SEVERITY, SYMBOL, rank
from mcp_matrix.report.counts import TRIAGE_LIMIT, is_large, write_counts
from mcp_matrix.report.grid import (
    ASSUMED_KEY,
    ASSUMED_MARK,
    Grid,
    Run,
    build_grid,
    calls_not_made,
    not_made_text,
    runs,
    session_blockers,
)
from mcp_matrix.report.terminal_text import clean, print_wrapped, printable, text_width
from mcp_matrix.report.terminal_triage import write_triage
from mcp_matrix.report.triage import build_triage

CODES = string.ascii_uppercase + string.ascii_lowercase + string.digits


def _start(events: list[Event]) -> RunStarted:
    return next((e for e in events if isinstance(e, RunStarted)), _NO_START)


_NO_START = RunStarted()


def header_line(events: list[Event]) -> str:
    start = _start(events)
    server = start.server or {}
    key = start.server_key or {}
    name = clean(key.get("name") or server.get("name") or "?")
    info = " ".join(clean(server.get(k, "")) for k in ("name", "version") if server.get(k))
    return f"{name}" + (f" ({info})" if info else "")


def server_key_sentence(events: list[Event]) -> str | None:
    key = _start(events).server_key
    if not key or not key.get("name"):
        return None
    name = clean(key["name"])
    if not key.get("assumed", True):
        return f"server name {name!r} (given with --name)"
    how = {
        "bundled": "the bundled server's name",
        "serverInfo.name": "from serverInfo.name",
        "command": "from the command",
    }.get(str(key.get("source")), "a default")
    return (
        f"server name assumed {name!r} ({how}): clients prefix tool names with the name in your "
        "config; pass --name KEY if yours differs"
    )


def _not_measured(events: list[Event]) -> dict[str, str]:
    """Profile -> why some of its cells were not measured (a profile-error, calls not made)."""
    out = {e.profile: "not measured: profile-error" for e in events if isinstance(e, ProfileError)}
    counts: dict[str, int] = {}
    for e in calls_not_made(events):
        counts[str(e.profile)] = counts.get(str(e.profile), 0) + 1
    for profile, n in counts.items():
        out.setdefault(profile, f"{n} call(s) not made")
    return out


def write_grid(events: list[Event], console: Console) -> None:
    grid = build_grid(events)
    unmeasured = _not_measured(events)
    codes = {p: CODES[i] if i < len(CODES) else "?" for i, p in enumerate(grid.profiles)}
    tool_w = max((len(printable(t)) for t in grid.tools), default=4)
    tool_w = max(tool_w, 4)
    console.print(
        Text("tool".ljust(tool_w) + " " + " ".join(codes[p] for p in grid.profiles), style="bold"),
        soft_wrap=True,
    )
    marked = False
    for tool in grid.tools:
        row = Text(printable(tool).ljust(tool_w) + " ")
        for j, p in enumerate(grid.profiles):
            v = grid.worst(tool, p)
            row.append(SYMBOL.get(v, "?") if v else " ", style=COLOUR.get(v, "") if v else "")
            if v and grid.assumed(tool, p):  # in the separator's place: the columns stay put
                marked = True
                row.append(ASSUMED_MARK)
            elif j < len(grid.profiles) - 1:
                row.append(" ")
        console.print(row, soft_wrap=True)
    line = "clients:"
    for p in grid.profiles:  # a code and its client never split across lines
        item = f"{codes[p]} {printable(p)}" + (f" ({unmeasured[p]})" if p in unmeasured else "")
        if len(line) + 2 + len(item) > text_width(console):
            console.print(line, soft_wrap=True, markup=False, style="dim")
            line = "        "
        line += "  " + item
    console.print(line, soft_wrap=True, markup=False, style="dim")
    used = {c.verdict for cs in grid.cells.values() for c in cs}
    key = Text()
    for v in SEVERITY:
        if v in used:
            if key:
                key.append("  ")
            key.append(SYMBOL[v], style=COLOUR.get(v, ""))
            key.append(f" {v}")
    if key:
        for wrapped in key.wrap(console, text_width(console)):
            console.print(wrapped, soft_wrap=True)
    if marked:
        print_wrapped(console, ASSUMED_KEY, 0, style="dim")
    if session_blockers(events):
        print_wrapped(
            console,
            f"{SYMBOL['session-broken']} marks the tool that breaks the session in that client: "
            "if the request is refused, every tool of the server fails there; the other cells "
            "show each tool as if it were accepted",
            0,
            style="dim",
        )


def _err_console(console: Console) -> Console:
    """Where "could not measure" goes: stderr when the output is stdout (a run, ``report``), the
    output itself when it is a file (a report file keeps it)."""
    return terminal_console(stderr=True, soft_wrap=True) if console.file is sys.stdout else console


_FRAME = re.compile(r'^\s+File "[^"]*", line \d+')
# A traceback reading the environment (os.environ, os.getenv, a .env file), or saying so.
_READS_ENV = re.compile(r"(?i)environ|getenv|<frozen os>|dotenv|env var|\bnot set\b")
# An exception's text naming a variable (WEATHER_API_KEY) or what variables hold.
_NAMES_VARIABLE = re.compile(
    r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b"
    r"|(?i:api[ _-]?key|token|credential|secret|password|config|settings)"
)
# Exceptions a minimal environment can raise by itself: PYTHONPATH is not passed on (an import
# fails), nor XDG_CONFIG_HOME and its kind (a config file is not found).
_ENV_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "FileNotFoundError"})


def env_can_be_the_cause(stderr: Sequence[str]) -> bool:
    """Whether a stdio server's failure can come from the minimal environment it ran with: yes,
    unless its stderr shows a Python traceback whose exception no missing variable explains (a
    ``ZeroDivisionError`` in code that reads none): there the --env advice is beside the point."""
    starts = [i for i, line in enumerate(stderr) if line.startswith("Traceback (most recent")]
    frames = [i for i, line in enumerate(stderr) if _FRAME.match(line)]
    if not frames:
        return True  # no Python traceback: a message, a Node stack, nothing
    block = stderr[starts[-1] if starts else 0 :]
    if any(_READS_ENV.search(line) for line in block if not _FRAME.match(line)):
        return True  # the code and the message, not the file paths
    raised = [line for line in stderr[frames[-1] + 1 :] if line and not line[0].isspace()]
    name = raised[0].split(":", 1)[0].rsplit(".", 1)[-1].strip() if raised else ""
    return name in _ENV_EXCEPTIONS or any(_NAMES_VARIABLE.search(line) for line in raised)


def _could_not_measure(run: Run, err: Console) -> None:
    """Why a run could not measure the server, with the server's last stderr lines and hints."""
    finish = run.finish
    error = (finish.error if finish else None) or {}
    print_wrapped(err, clean(error.get("message", "")), 0, first="could not measure: ", style="red")
    tail = error.get("stderr_tail")
    for line in (tail if isinstance(tail, list) else [])[-10:]:
        err.print(Text("  stderr: " + clean(line), style="dim"), soft_wrap=True)
    target = (run.start or _NO_START).target or {}
    lines = [line for line in tail if isinstance(line, str)] if isinstance(tail, list) else []
    if (
        target.get("kind") == "stdio"
        and target.get("inherit_env") is False
        and error.get("kind") != "interrupted"  # Ctrl-C: the user's, not the environment's
        and env_can_be_the_cause(lines)
    ):
        print_wrapped(
            err,
            "the server ran with a minimal environment (PATH, HOME and a few more, plus --env); if it "
            "needs other variables (an API key, a config path), pass --env KEY=VALUE or --inherit-env",
            0,
            first="  hint: ",
        )
    if error.get("hint"):
        print_wrapped(err, clean(error["hint"]), 0, first="  hint: ")


def _extent(grid: Grid, views: Sequence[ClientView]) -> tuple[int, int]:
    """How many tools and clients there are: the events' (``grid``) and the views'."""
    tools = set(grid.tools)
    clients = dict.fromkeys(grid.profiles)
    for v in views:
        clients[v.profile] = None
        tools.update(t.tool for t in v.tools)
    return len(tools), len(clients)


def write_terminal(
    events: Iterable[Event],
    console: Console,
    details: bool = True,
    verbose: bool = False,
    triage: bool = True,
    err: Console | None = None,
    views: Sequence[ClientView] = (),
) -> None:
    """``details``: the triage list with fixes and evidence; ``verbose``: also every cell.
    ``err``: where what could not be measured is said (default: stderr when ``console`` writes
    to stdout, else ``console``). Every run of a merged stream is read.

    ``views``: the discovery cells as the views they come from, instead of as events
    (``discover``): the counts and the triage read them as they are, and they are typed one by
    one only where every cell is printed (the grid of a small server, ``verbose``). At 5,000
    tools x 52 profiles typing the 260,000 cells cost more than the whole ``--json`` document."""
    events = typed_events(events)
    grid = build_grid(events)
    tools, clients = _extent(grid, views)
    if views and (verbose or not is_large(tools)):
        from mcp_matrix.run.discovery import discovery_cells  # the caller has it imported

        events, views = [*events, *discovery_cells(views)], ()
        grid = build_grid(events)
    err = err or _err_console(console)
    all_runs = runs(events)
    status = ""
    if any(r.finish and r.finish.interrupted for r in all_runs):
        status = " · interrupted"
    elif any(r.start and not r.finish for r in all_runs):
        status = " · unfinished run"
    console.print(
        Text(
            f"{header_line(events)} · {tools} tools · {clients} clients{status}",
            style="bold",
        ),
        soft_wrap=True,
    )
    sentence = server_key_sentence(events)
    if sentence:
        print_wrapped(console, sentence, 0, style="dim")
    failed_runs = [r for r in all_runs if r.finish and not r.finish.measured]
    for run in failed_runs:
        _could_not_measure(run, err)
    errors = [e for e in events if isinstance(e, ProfileError)]
    for e in errors:
        print_wrapped(
            err,
            f"profile {printable(e.profile)}: {clean(e.error[:300])} (its calls are missing; "
            "its column shows discovery only)",
            0,
            first="could not measure: ",
            style="red",
        )
    missing = calls_not_made(events)
    if missing:
        print_wrapped(
            err, clean(not_made_text(missing)), 0, first="could not measure: ", style="red"
        )
    console.print()
    if failed_runs and len(failed_runs) == len(all_runs) and not tools:
        return  # nothing was measured: no grid of empty cells
    unmeasured = bool(failed_runs or errors or missing or status)
    if triage and details:
        large = is_large(tools) and not verbose
        write_triage(
            build_triage(events, views),
            console,
            verbose=verbose,
            limit=TRIAGE_LIMIT if large else None,
            unmeasured=unmeasured,
        )
        console.print()
    if is_large(tools):  # counts per client: the triage list above says what to fix
        cells = [c for cs in grid.cells.values() for c in cs]
        pairs = [(c.profile, c.verdict) for c in cells]
        pairs += [(v.profile, t.verdict) for v in views for t in v.tools]
        assumed = {(c.profile, c.verdict) for c in cells if c.weakest_evidence == "assumed"}
        assumed |= {
            (v.profile, t.verdict)
            for v in views
            for t in v.tools
            if t.weakest_evidence == "assumed"
        }
        write_counts(pairs, console, tools, assumed=assumed)
    else:
        write_grid(events, console)
    if verbose:
        console.print()
        write_cells(events, console)
    if missing:
        console.print(
            Text(
                f"{len(missing)} call(s) not made: not measured, so not passed (could not measure, "
                "above)" + ("" if verbose else "; --verbose lists them"),
                style="yellow",
            ),
            soft_wrap=True,
        )
    skipped = [e for e in events if isinstance(e, Skipped) and not e.profile]
    if skipped:
        console.print(
            Text(
                f"{len(skipped)} call(s) not made (safety policy or no case)"
                + ("" if verbose else "; --verbose lists them"),
                style="dim",
            ),
            soft_wrap=True,
        )
    if not verbose and details:
        console.print(
            Text(
                "every cell with its reason: --verbose (or a report: --report md:FILE)", style="dim"
            ),
            soft_wrap=True,
        )


# Cell lines per print: a rich print costs more than the line it prints (the console's size and
# whether it is a terminal, asked again each time), and one Text of a 5,000-tool run's every cell
# would hold all their spans at once.
CELLS_A_PRINT = 500


def write_cells(events: list[Event], console: Console) -> None:
    """Every cell that is not fine, with its reason and evidence (``--verbose``), up to
    ``CELLS_A_PRINT`` lines a print: the same text as a print a line."""
    batch: list[Text] = []
    for line in _cell_lines(events):
        batch.append(line)
        if len(batch) == CELLS_A_PRINT:
            console.print(Text("\n").join(batch), soft_wrap=True)
            batch = []
    if batch:
        console.print(Text("\n").join(batch), soft_wrap=True)


def _cell_lines(events: list[Event]) -> Iterator[Text]:
    grid = build_grid(events)
    for c in sorted(grid.findings(), key=lambda c: (rank(c.verdict), c.profile, c.tool)):
        label = printable(c.tool)
        if isinstance(c, CallCell):
            label += f"::{printable(c.case)}" if c.case else ""
            reason = c.reason
        else:
            reason = "; ".join(
                f.message + (f" [{f.materiality}]" if f.materiality else "")
                for f in c.findings[-3:]
            )
        line = Text.assemble(
            (f"{c.verdict:>17}", COLOUR.get(c.verdict, "white")),
            " ",
            (printable(c.profile), "bold"),
            f" {label}: {clean(reason)}",
        )
        if c.weakest_evidence:
            line.append(f" (evidence: {c.weakest_evidence})", "dim")
        yield line
    for e in (e for e in events if isinstance(e, Skipped)):
        who = f"{printable(e.profile)} " if e.profile else ""
        case = f"::{printable(e.case)}" if e.case else ""
        yield Text(
            f"{'skipped':>17} {who}{printable(e.tool)}{case}: {clean(e.reason)}", style="dim"
        )


__all__ = ["MEANING", "write_cells", "write_grid", "write_terminal", "write_triage"]
