"""``mcp-matrix profiles``: list the client profiles, or show one with its resolved behaviours and evidence."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date, datetime, timezone

from rich.console import Console
from rich.table import Table

from mcp_matrix.behaviours import registry
from mcp_matrix.commands.common import add_profile_options
from mcp_matrix.core.text import markup, terminal_console
from mcp_matrix.profiles.loader import load_profiles, profile_summary, select_profiles


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "profiles",
        help="list client profiles, or show one (profiles show NAME)",
        description="List the bundled (and --profiles-dir) client profiles with the client, the versions "
        "they model, their weakest evidence and when it was checked (the oldest and newest `checked` date, and the oldest's age in days); `profiles show NAME` prints one profile's resolved "
        "behaviours per phase with their params and evidence; `profiles behaviours` lists the registry.",
    )
    p.add_argument("action", nargs="?", choices=("list", "show", "behaviours"), default="list")
    p.add_argument("name", nargs="?", help="the profile to show")
    add_profile_options(p, client_help=None)
    p.add_argument("--all", action="store_true", help="also list abstract bases")
    p.add_argument("--json", action="store_true", help="machine output on stdout")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.action == "behaviours":
        return list_behaviours(args)
    profiles = load_profiles(extra_dirs=args.profiles_dir)
    if args.action == "show":
        if not args.name:
            from mcp_matrix.core.errors import InputError

            raise InputError("profiles show needs a profile NAME", where="profiles show")
        chosen = profiles.get(args.name) or select_profiles(profiles, [args.name])[0]
        summary = profile_summary(chosen)
        if args.json:
            sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        else:
            show(summary, terminal_console())
        return 0
    rows = sorted(
        (p for p in profiles.values() if args.all or not p.abstract), key=lambda p: p.name
    )
    if args.json:
        sys.stdout.write(
            json.dumps(
                [
                    {
                        "name": p.name,
                        "client": p.client,
                        "versions": p.versions,
                        "abstract": p.abstract,
                        "extends": list(p.extends),
                        "weakest_evidence": p.weakest_evidence,
                        **evidence_age(p),
                        "calibration": calibration_json(calibration_column(p)),
                    }
                    for p in rows
                ],
                indent=2,
            )
            + "\n"
        )
        return 0
    table = Table()
    for col in (
        "profile",
        "client",
        "versions",
        "extends",
        "weakest evidence",
        "evidence checked",
        "calibrated",
    ):
        table.add_column(col)
    for p in rows:
        table.add_row(
            markup(p.name) + (" (abstract)" if p.abstract else ""),
            markup(p.client),
            markup(p.versions),
            markup(", ".join(p.extends)),
            p.weakest_evidence or "-",
            age_text(evidence_age(p)),
            markup(calibration_text(p)),
        )
    terminal_console().print(table)
    return 0


def evidence_age(profile, today: date | None = None) -> dict:
    """The oldest and newest ``checked`` date of the profile's evidence and the oldest's age in days."""
    span = profile.checked_range
    if span is None:
        return {"checked_oldest": None, "checked_newest": None, "age_days": None}
    oldest = date.fromisoformat(span[0])
    age = ((today or datetime.now(timezone.utc).date()) - oldest).days
    return {"checked_oldest": span[0], "checked_newest": span[1], "age_days": age}


def age_text(age: dict) -> str:
    """``2026-11-30 .. 2026-12-02 (2 d)``, one date when all agree, ``-`` when nothing is dated."""
    if age["checked_oldest"] is None:
        return "-"
    span = age["checked_oldest"]
    if age["checked_newest"] != span:
        span += f" .. {age['checked_newest']}"
    return f"{span} ({age['age_days']} d)"


def calibration_column(profile) -> dict | None:
    """The profile's latest calibration (version, date, agreement), for the calibrated column."""
    from mcp_matrix.calibrate.status import calibration_status

    return calibration_status(profile)


def calibration_json(status: dict | None) -> dict | None:
    """The latest record's agreement as ``profiles --json`` gives it (None: not calibrated): the
    cells the profile predicts as the client did, of those compared, by ``record_drift`` as
    tests/calibration/test_calibrated_profiles.py judges them."""
    if status is None:
        return None
    return {
        "record": f"clients/calibrations/{status['record']}",
        "client_version": status["version"],
        "date": status["date"],
        "cells_agreeing": status["agree"],
        "cells_compared": status["cells"],
        "probe_sets_unjudged": status["unjudged"],  # no model request and no word why
    }


def calibration_text(profile) -> str:
    from mcp_matrix.calibrate.status import status_text

    return status_text(calibration_column(profile))


def show(summary: dict, console: Console) -> None:
    console.print(
        f"[bold]{markup(summary['name'])}[/]: {markup(summary['client'])} {markup(summary['versions'])}"
    )
    console.print(markup(summary["models"]))
    if summary.get("extends"):
        console.print(f"extends: {markup(', '.join(summary['extends']))}")
    if summary.get("identity"):
        ident = summary["identity"]
        console.print(
            f"identity: {markup(json.dumps(ident['clientInfo']))} protocol {markup(ident['protocolVersion'])}"
        )
    hs = summary.get("handshake")
    if hs:
        extra = [k for k in ("initialize_after_discover", "honours_ttl", "listens") if hs.get(k)]
        console.print(
            f"handshake: {markup(hs['fallback'])}; accepts {markup(', '.join(hs['accepts']) or '-')}"
            + (f"; {markup(', '.join(extra))}" if extra else "")
            + f" (evidence: {markup(str(hs['weakest_evidence']))})"
        )
    console.print(f"weakest evidence: {summary.get('weakest_evidence') or '-'}")
    for phase in ("discovery", "cache", "call", "result"):
        uses = summary.get(phase) or []
        if not uses:
            continue
        console.print(f"\n[bold]{phase}[/]")
        for u in uses:
            params = json.dumps(u["with"], ensure_ascii=False) if u["with"] else ""
            freq = " [yellow](sometimes)[/]" if u["frequency"] == "sometimes" else ""
            if u.get("provider"):  # sending_order: the API judges what the client built
                freq += " [magenta](model API: applied after the client's own)[/]"
            console.print(f"  [cyan]{markup(u['use'])}[/] {markup(params)}{freq}")
            for e in u["evidence"]:
                console.print(
                    f"    {e['level']}"
                    + (f" (checked {markup(e['checked'])})" if e.get("checked") else "")
                    + f": {markup(e['source'])}"
                    + (f" [dim]— {markup(e['note'])}[/]" if e.get("note") else "")
                )


def list_behaviours(args: argparse.Namespace) -> int:
    specs = sorted(registry.load_all().values(), key=lambda s: (s.phase, s.name))
    if args.json:
        sys.stdout.write(
            json.dumps(
                [
                    {"name": s.name, "phase": s.phase, "summary": s.summary, "params": s.params}
                    for s in specs
                ],
                indent=2,
            )
            + "\n"
        )
        return 0
    table = Table()
    for col in ("behaviour", "phase", "params", "what it does"):
        table.add_column(col)
    for s in specs:
        table.add_row(s.name, s.phase, markup(", ".join(s.params)), markup(s.summary))
    terminal_console().print(table)
    return 0
