"""``mcp-matrix diff OLD NEW``: what a release changes for every client and every frozen caller.

Each side is a snapshot file, or a live target written as ``server:NAME ARGS`` (a bundled
reference server), ``stdio:CMD`` or an ``http://`` / ``https://`` URL. Output: the terminal
(default), ``--format md`` or ``--format json`` (``format: mcp-matrix.diff``, docs/evolution.md).

Exit codes: 0 nothing at or above ``--fail-on``; 1 changes at or above it; 2 an input error
(a missing file, not a snapshot, a bad target); 3 a live side could not be measured.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.text import Text

from matrix.commands.common import add_profile_options, profiles_from
from matrix.errors import EXIT_FINDINGS, EXIT_OK, InputError, MeasureError
from matrix.evolution import FAIL_ON, SEVERITIES, Change, Diff, diff_snapshots
from matrix.evolution.model import POPULATION_LABEL
from matrix.report.markdown import md
from matrix.snapshot import Snapshot, load_snapshot, take_snapshot
from matrix.targets import Target
from matrix.text import markup, terminal_console
from matrix.verdicts import COLOUR
from matrix.wire.session import Timeouts

SIDE_HELP = "a snapshot .json file, server:NAME [ARGS] (bundled), stdio:CMD, or an http(s):// URL"
SEVERITY_STYLE = {"breaking": "bold red", "risky": "yellow", "safe": "green"}
EFFECT_STYLE = {
    "permanent-loss": "bold red",
    "diverges": "magenta",
    "silent-loss": "bold magenta",
    "silent-change": "magenta",
    "blocked": "red",
    "recovers": "cyan",
    "unaffected": "green",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "diff",
        help="what changes between two versions of a server, per client and per frozen caller",
        description="Compare two snapshots (or live servers) and classify every change as breaking, risky\n"
        "or safe, with its effect in each client profile and on each population of frozen callers\n"
        "(live conversations, queued retries, transcript replays), and what to do instead.",
        epilog="OLD and NEW are each " + SIDE_HELP + ". Examples:\n"
        "  mcp-matrix diff v1.json v2.json\n"
        '  mcp-matrix diff baseline.json "stdio:node build/server.js" --fail-on risky\n'
        '  mcp-matrix diff "server:billing --version 1" "server:billing --version 3" --format md\n'
        "Exit codes: 0 nothing at or above --fail-on, 1 changes at or above it, 2 input error, "
        "3 a live side could not be measured.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("old", metavar="OLD", help="the released version: " + SIDE_HELP)
    p.add_argument("new", metavar="NEW", help="the version about to be released: " + SIDE_HELP)
    add_profile_options(p)
    p.add_argument(
        "--format",
        "-f",
        choices=("terminal", "md", "json"),
        default="terminal",
        help="terminal (default), md (Markdown) or json (format mcp-matrix.diff)",
    )
    p.add_argument(
        "-o", "--output", metavar="FILE", help="write the report here (UTF-8) instead of stdout"
    )
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="breaking",
        help="exit 1 when a change is at least this severe: breaking (default), risky, any, none",
    )
    p.add_argument(
        "--name",
        default="",
        help="the server's name in the client config (prefixes mcp__NAME__tool); "
        "default: the new side's",
    )
    o = p.add_argument_group("live sides")
    o.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="K:V",
        help="HTTP header for URL sides (repeatable)",
    )
    o.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="K=V",
        help="environment for stdio sides (repeatable)",
    )
    o.add_argument("--cwd", help="working directory for stdio sides")
    o.add_argument(
        "--inherit-env", action="store_true", help="pass this whole environment to stdio sides"
    )
    o.add_argument(
        "--server-transport",
        choices=("stdio", "http"),
        default="stdio",
        help="how to run bundled server: sides (default stdio)",
    )
    d = Timeouts()
    o.add_argument(
        "--timeout-initialize",
        type=float,
        default=d.initialize,
        metavar="S",
        help=f"seconds, default {d.initialize}",
    )
    o.add_argument(
        "--timeout-list", type=float, default=d.list, metavar="S", help=f"seconds, default {d.list}"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    profiles = profiles_from(args)
    old = side(args.old, "OLD", args)
    new = side(args.new, "NEW", args)
    result = diff_snapshots(old, new, profiles, server=args.name or None)
    write(result, args.format, args.fail_on, args.output)
    return EXIT_FINDINGS if result.failing(args.fail_on) else EXIT_OK


# -- the two sides --------------------------------------------------------------------------------


def target_of(arg: str, args: argparse.Namespace) -> Target | None:
    """The live target a side names, or None for a snapshot file."""
    env = _pairs(args.env, "=", "--env")
    if arg.startswith("server:"):
        return Target.bundled(
            arg[len("server:") :].strip(), transport=args.server_transport, env=env, name=args.name
        )
    if arg.startswith("stdio:"):
        return Target.stdio(
            arg[len("stdio:") :].strip(),
            env=env,
            cwd=args.cwd,
            inherit_env=args.inherit_env,
            name=args.name,
        )
    if re.match(r"^https?://", arg):
        return Target.http(arg, headers=_pairs(args.header, ":", "--header"), name=args.name)
    return None


def side(arg: str, which: str, args: argparse.Namespace) -> Snapshot:
    """Read or take one side; an input problem names the side (OLD or NEW)."""
    try:
        target = target_of(arg, args)
    except InputError as exc:
        raise InputError(exc.message, where=f"{which} {arg!r}") from None
    if target is None:
        if not Path(arg).is_file():
            raise InputError(
                f"no such snapshot file; {which} must be {SIDE_HELP}", where=f"{which} {arg}"
            )
        try:
            snap = load_snapshot(arg)
        except InputError as exc:
            raise InputError(exc.message, where=f"{which} {exc.where}") from None
        if snap.error:
            message = (
                snap.error.get("message", "") if isinstance(snap.error, dict) else str(snap.error)
            )
            raise InputError(
                f"this snapshot records a failed measurement ({message}); take it again",
                where=f"{which} {arg}",
            )
        return snap
    sys.stderr.write(f"mcp-matrix: taking the {which} snapshot: {arg}\n")
    timeouts = Timeouts(initialize=args.timeout_initialize, list=args.timeout_list)
    doc = take_snapshot(target, timeouts=timeouts)
    if doc.get("error"):
        err = doc["error"]
        raise MeasureError(
            f"the {which} side could not be measured ({arg}): {err.get('kind', 'error')}: "
            f"{err.get('message', '')}"
        )
    return Snapshot(doc, source="live")


def _pairs(items: list[str], sep: str, flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        if sep not in item:
            raise InputError(f"expected KEY{sep}VALUE, got {item!r}", where=flag)
        key, value = item.split(sep, 1)
        out[key.strip()] = value.strip() if sep == ":" else value
    return out


# -- writers --------------------------------------------------------------------------------------


def write(result: Diff, fmt: str, fail_on: str, output: str | None) -> None:
    if output:
        with open(output, "w", encoding="utf-8") as stream:
            _write(result, fmt, fail_on, stream, to_terminal=False)
    else:
        _write(result, fmt, fail_on, sys.stdout, to_terminal=True)


def _write(result: Diff, fmt: str, fail_on: str, stream: IO[str], to_terminal: bool) -> None:
    if fmt == "json":
        stream.write(json.dumps(result.to_json(fail_on), indent=2, ensure_ascii=False) + "\n")
    elif fmt == "md":
        stream.write(render_markdown(result, fail_on))
    else:
        console = terminal_console(
            file=stream,
            soft_wrap=not to_terminal,
            force_terminal=None if to_terminal else False,
        )
        render_terminal(result, fail_on, console)


def _grouped(change: Change) -> list[tuple[str, str, list[str]]]:
    """Client effects grouped by (effect, message): one line per distinct outcome."""
    groups: dict[tuple[str, str], list[str]] = {}
    for e in change.clients:
        groups.setdefault((e.effect, e.message), []).append(e.profile)
    return [(effect, message, names) for (effect, message), names in groups.items()]


def _summary(result: Diff, fail_on: str) -> tuple[str, bool]:
    counts = result.counts()
    text = ", ".join(f"{counts[s]} {s}" for s in SEVERITIES)
    return text, bool(result.failing(fail_on))


def _plain(effect: str) -> str:
    return (
        effect.replace("-", " ")
        if effect in ("permanent-loss", "silent-loss", "silent-change")
        else effect
    )


def _shows_detail(change: Change) -> bool:
    return (
        change.severity != "safe"
        or bool(change.advice)
        or any(p.effect != "unaffected" for p in change.populations)
    )


def render_terminal(result: Diff, fail_on: str, console: Console) -> None:
    """Plain words first: which change, which callers and clients break, and what to do instead."""

    def line(text: str, indent: int = 0, hang: int = 0) -> None:
        # Wrapped by hand with a hanging indent and no trailing spaces (clean when piped).
        parts = Text.from_markup(text).wrap(console, max(20, console.width - indent - hang))
        for i, part in enumerate(parts):
            part.rstrip()
            console.print(Text(" " * (indent + (hang if i else 0))) + part, soft_wrap=True)

    counts, failed = _summary(result, fail_on)
    line(f"[bold]mcp-matrix diff[/]  {markup(result.old.label)}  ->  {markup(result.new.label)}")
    caching = (
        f"; {len(result.caching)} keep a cached tool list ({', '.join(result.caching)})"
        if result.caching
        else ""
    )
    line(f"{len(result.profiles)} client profiles{markup(caching)}")
    for name, lives in result.stale_for.items():
        line(f"  a stale schema lives in {markup(name)} {markup(lives)}")
    if not result.changes:
        line("[green]No changes: the two tool lists are the same.[/]")
    for change in result.changes:
        console.print()
        style = SEVERITY_STYLE[change.severity]
        line(
            f"[{style}]{change.severity.upper()}[/]  [bold]{markup(change.tool)}[/]: {markup(change.message)}"
            f"  [dim]{change.kind}[/]"
        )
        if not _shows_detail(change):
            for effect, message, names in _grouped(change):
                line(
                    f"[{COLOUR.get(effect, '')}]{markup(effect)}[/] in {markup(', '.join(names))}: {markup(message)}",
                    4,
                )
            continue
        if change.reasons:
            line(f"[dim]why {change.severity}:[/] {markup('; '.join(change.reasons))}", 2)
        if any(p.effect != "unaffected" for p in change.populations):
            line("[bold]frozen callers[/]", 2)
            for p in change.populations:
                st = EFFECT_STYLE.get(p.effect, "")
                line(
                    f"{POPULATION_LABEL[p.population]}: [{st}]{_plain(p.effect)}[/]. {markup(p.message)}",
                    4,
                )
        if change.clients:
            line("[bold]clients[/]", 2)
            for effect, message, names in _grouped(change):
                line(
                    f"[{COLOUR.get(effect, '')}]{markup(effect)}[/] in {markup(', '.join(names))}: {markup(message)}",
                    4,
                )
        if change.advice:
            line("[bold]do instead[/]", 2)
            for piece in change.advice:
                line(f"- {markup(piece)}", 4, hang=2)
    console.print()
    verdict = "[bold red]FAIL[/]" if failed else "[green]OK[/]"
    line(f"{counts}.  --fail-on {fail_on}: {verdict}")


def render_markdown(result: Diff, fail_on: str) -> str:
    counts, failed = _summary(result, fail_on)
    out = ["# mcp-matrix diff", ""]
    out.append(f"- **Old:** {md(result.old.label)}")
    out.append(f"- **New:** {md(result.new.label)}")
    out.append(
        f"- **Clients:** {len(result.profiles)} profiles"
        + (
            f"; keeping a cached tool list: {md(', '.join(result.caching))}"
            if result.caching
            else ""
        )
    )
    out.append(f"- **Result:** {counts}; `--fail-on {fail_on}`: **{'FAIL' if failed else 'OK'}**")
    out.append("")
    if not result.changes:
        out += ["No changes: the two tool lists are the same.", ""]
        return "\n".join(out)
    out += ["| severity | tool | change | kind |", "|---|---|---|---|"]
    for c in result.changes:
        out.append(f"| {c.severity} | {md(c.tool, name=True)} | {md(c.message)} | `{c.kind}` |")
    out.append("")
    for c in result.changes:
        if not _shows_detail(c) and not c.clients:
            continue
        out += [f"## {c.severity.capitalize()}: {md(c.tool, name=True)}: {md(c.message)}", ""]
        out += [f"Kind: `{c.kind}`" + (f"; where: {md(c.pointer)}" if c.pointer else ""), ""]
        if c.reasons:
            out += [f"Why {c.severity}: {md('; '.join(c.reasons))}", ""]
        if any(p.effect != "unaffected" for p in c.populations):
            out += ["| frozen callers | effect | what happens |", "|---|---|---|"]
            for p in c.populations:
                out.append(
                    f"| {POPULATION_LABEL[p.population]} | {_plain(p.effect)} | {md(p.message)} |"
                )
            out.append("")
        if c.clients:
            out += ["| effect | clients | what happens |", "|---|---|---|"]
            for effect, message, names in _grouped(c):
                out.append(f"| {md(effect)} | {md(', '.join(names))} | {md(message)} |")
            out.append("")
        if c.advice:
            out += ["**Do instead**", ""] + [f"- {md(a)}" for a in c.advice] + [""]
    return "\n".join(out)
