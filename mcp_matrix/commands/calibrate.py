"""``mcp-matrix calibrate``: run a real client on the probe sets (or a target) and print its drift.

The client runs headless against the fake model endpoint with the probe server behind the
recording tap (docs/calibration.md); what it did is compared, cell by cell, with what its
bundled profile predicts. Exit 0 when every cell agrees, 1 on drift, 3 when the client could
not be run or never asked its model.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shlex
import sys

from mcp_matrix.calibrate import drift as drifts
from mcp_matrix.calibrate import harness, probe, record, releases
from mcp_matrix.calibrate.calibration import calibrate, check_transport, probe_sets
from mcp_matrix.commands.common import add_target_options, target_from, timeouts_from
from mcp_matrix.core.errors import EXIT_FINDINGS, EXIT_UNMEASURABLE, InputError
from mcp_matrix.core.text import redact_value, safe
from mcp_matrix.profiles.loader import load_profiles


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate",
        help="run a real client on the probe tool lists and print its drift from the bundled profile",
        description="Install (once, cached) and run a real client headless against a local fake model "
        "endpoint and a recording tap in front of the probe server (or your target); print, cell by cell, "
        "what its bundled profile predicts against what the client did. Exit 0: no drift; 1: drift; "
        "3: the client could not be run.",
    )
    p.add_argument(
        "--client",
        required=True,
        metavar="NAME",
        help="a harness recipe: " + ", ".join(harness.recipe_names()) + " (or a recipe YAML path)",
    )
    p.add_argument(
        "--client-command",
        metavar="CMD",
        help="calibrate your own copy: the command that starts the client (replaces the pinned install)",
    )
    p.add_argument(
        "--probe",
        action="append",
        default=[],
        metavar="SET",
        help="probe set (repeatable; default: every set): " + ", ".join(probe.PROBE_SETS),
    )
    p.add_argument(
        "--latest",
        action="store_true",
        help="calibrate the newest release on the registry instead of the pinned one "
        "(exit 0 at once when the pinned release is the newest)",
    )
    p.add_argument("--profile", help="compare with this profile instead of the recipe's")
    p.add_argument("--timeout", type=float, help="seconds per client run (default: the recipe's)")
    p.add_argument(
        "--json", action="store_true", help="the record and the drift cells as JSON on stdout"
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write the calibration record here")
    p.add_argument(
        "--keep",
        action="store_true",
        help="keep each run's temporary HOME and logs (paths on stderr)",
    )
    add_target_options(p, positional=False)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    recipe = harness.load_recipe(args.client)
    command = shlex.split(args.client_command) if args.client_command else None
    if args.client_command is not None and not command:
        raise InputError("--client-command is empty", where="--client-command")
    if args.latest and command:
        raise InputError("give --latest or --client-command, not both", where="--latest")
    if args.timeout is not None and not (0 < args.timeout <= 3600):
        raise InputError("expected a number of seconds in (0, 3600]", where="--timeout")
    if args.name:  # the server's name in the client's config, as other commands take it
        if not re.fullmatch(r"[A-Za-z0-9_-]+", args.name):
            raise InputError("expected letters, digits, '_' or '-'", where="--name")
        recipe = dataclasses.replace(recipe, server_name=args.name)
    profiles = load_profiles()
    profile_name = args.profile or recipe.profile
    if profile_name not in profiles:
        raise InputError(f"no profile {profile_name!r} to compare with", where="--profile")
    target = target_from(args)
    if target is not None and args.probe:
        raise InputError("give --probe or a target, not both", where="--probe")
    transport = args.server_transport if args.server_transport == "http" else recipe.transport
    check_transport(recipe, transport, target)
    sets = probe_sets(target, args.probe, timeouts_from(args))
    if args.latest:
        newest = releases.newest_release(releases.client_package(recipe))
        if not releases.is_newer(newest, recipe):
            sys.stderr.write(
                f"calibrate: {safe(recipe.client)} {safe(recipe.version)} (pinned) is the newest "
                "release on the registry; nothing to calibrate\n"
            )
            return 0
        sys.stderr.write(
            f"calibrate: the newest release of {safe(recipe.client)} is {safe(newest.version)} "
            f"(pinned: {safe(recipe.version)}); calibrating it\n"
        )
        recipe = releases.at_release(recipe, newest)
    done = calibrate(
        recipe,
        profiles[profile_name],
        sets,
        target=target,
        transport=transport,
        command=command,
        timeout=args.timeout,
        keep=args.keep,
        on_step=_say_step,
    )
    rec = redact_value(done.record, target.secrets()) if target else done.record  # echoed secrets
    if args.output:
        record.write_record(rec, args.output)
    if args.json:
        doc = {
            "record": rec,
            "profile": profiles[profile_name].name,
            "drift": [c.to_json() for c in done.cells],
            "unjudged": list(done.failed),  # no model request, and the record cannot say why
        }
        sys.stdout.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    else:
        print_drift(rec, profile_name, list(done.cells), list(done.failed))
    if not done.measured:
        return EXIT_UNMEASURABLE
    return EXIT_FINDINGS if done.failed or any(not c.agree for c in done.cells) else 0


MAX_SHOWN = 12  # drifting cells printed per probe set


def _say_step(step: str) -> None:
    sys.stderr.write(f"calibrate: {step}\n")


def clean(value: object, limit: int = 160) -> str:
    """Text safe for a terminal (mcp_matrix.core.text.safe: every control character, CSI/OSC, bidi shown as
    an escape), JSON for non-strings, cut to ``limit``."""
    text = (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )
    text = safe(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def print_drift(rec: dict, profile: str, cells: list[drifts.Cell], failed: list[str]) -> None:
    out = sys.stdout.write
    agree, total = drifts.agreement(cells)
    out(
        f"{clean(rec['client'])} {clean(rec['client_version'])} against profile {clean(profile)} ({rec['date']})\n"
    )
    for set_id, obs in rec["probe_sets"].items():
        set_cells = [c for c in cells if c.probe_set == set_id]
        a, t = drifts.agreement(set_cells)
        tap = obs.get("tap", {})
        hs = " > ".join(tap.get("handshake") or []) or "no MCP traffic"
        status = f"{a}/{t} cells agree" + (f" ({obs['outcome']})" if obs["outcome"] != "ok" else "")
        if obs.get("calls_compared") is False:
            status += " (tools as listed, no model request: calls not compared)"
        out(f"\n[{clean(set_id)}] {status}; handshake: {clean(hs, 120)}\n")
        if obs["outcome"] == "no-model-request":
            tail = obs.get("client_output_tail") or ""
            judged = (
                "not judged"
                if set_id in failed
                else "it aborted: compared as every tool absent, every call not sent"
            )
            out(
                f"  the client never asked its model (exit {obs['run']['returncode']}, timed out: "
                f"{obs['run']['timed_out']}; {judged}) {clean(tail, 300)}\n"
            )
        wrong = [c for c in set_cells if not c.agree]
        for c in wrong[:MAX_SHOWN]:
            if not c.agree:
                out(
                    f"  DRIFT {clean(c.tool, 60)} {c.aspect}: predicted {clean(c.predicted)}\n"
                    f"        observed  {clean(c.observed)}\n"
                    + (f"        (profile: {clean(c.why, 120)})\n" if c.why else "")
                )
        if len(wrong) > MAX_SHOWN:
            out(f"  ... and {len(wrong) - MAX_SHOWN} more drifting cells (--json lists them all)\n")
    pct = f"{100 * agree / total:.1f}%" if total else "n/a"
    out(
        f"\nagreement: {pct} ({agree} of {total} cells)"
        + (f"; {len(failed)} probe set(s) not judged: {', '.join(failed)}" if failed else "")
        + "\n"
    )
