"""``mcp-matrix calibrate``: run a real client on the probe sets (or a target) and print its drift.

The client runs headless against the fake model endpoint with the probe server behind the
recording tap (docs/calibration.md); what it did is compared, cell by cell, with what its
bundled profile predicts. Exit 0 when every cell agrees, 1 on drift, 3 when the client could
not be run or never asked its model.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from pathlib import Path

from matrix.calibrate import drift as drifts
from matrix.calibrate import harness, probe, record
from matrix.commands.common import add_target_options, target_from, timeouts_from
from matrix.errors import EXIT_FINDINGS, EXIT_UNMEASURABLE, InputError, MeasureError
from matrix.profiles.loader import load_profiles
from matrix.text import safe


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


def _probe_sets(args: argparse.Namespace) -> list[probe.ProbeSet]:
    target = target_from(args)
    if target is not None:
        if args.probe:
            raise InputError("give --probe or a target, not both", where="--probe")
        from matrix.snapshot import Snapshot, take_snapshot

        doc = take_snapshot(target, timeouts=timeouts_from(args))
        # one page assumed: a paginating target's page-based predictions are not compared exactly
        tools = tuple(
            t for _, t in Snapshot(doc, source="live").tools if isinstance(t, dict) and "name" in t
        )
        if not tools:
            raise MeasureError("the target listed no tools to calibrate with")
        args._target = target
        return [probe.ProbeSet("target", "the target's own tools (no scripted calls)", tools, ())]
    args._target = None
    return [probe.get_set(s) for s in (args.probe or list(probe.PROBE_SETS))]


def _server_for(args: argparse.Namespace, ps: probe.ProbeSet, folder: Path, transport: str):
    target = args._target
    if target is not None:
        if target.kind == "http":
            return harness.ServerSpec(url=target.url), None
        argv = list(target.command) if target.kind == "stdio" else target.server_argv()
        if target.env:
            argv = ["env", *(f"{k}={v}" for k, v in target.env.items()), *argv]
        return harness.ServerSpec(argv=tuple(argv)), None
    path = folder / f"{ps.id}.json"
    path.write_text(json.dumps(list(ps.tools)))
    argv = [sys.executable, "-m", "matrix_servers.probe", "--tools", str(path)]
    if ps.page_size:
        argv += ["--page-size", str(ps.page_size)]
    if transport == "http":
        proc, url = harness.start_http_server(argv + ["--transport", "http"])
        return harness.ServerSpec(url=url), proc
    return harness.ServerSpec(argv=tuple(argv)), None


def run(args: argparse.Namespace) -> int:
    recipe = harness.load_recipe(args.client)
    command = shlex.split(args.client_command) if args.client_command else None
    if args.client_command is not None and not command:
        raise InputError("--client-command is empty", where="--client-command")
    if args.timeout is not None and not (0 < args.timeout <= 3600):
        raise InputError("expected a number of seconds in (0, 3600]", where="--timeout")
    profiles = load_profiles()
    profile_name = args.profile or recipe.profile
    if profile_name not in profiles:
        raise InputError(f"no profile {profile_name!r} to compare with", where="--profile")
    profile = profiles[profile_name]
    sets = _probe_sets(args)
    transport = args.server_transport if args.server_transport == "http" else recipe.transport
    uses_url = any(
        "{server_url}" in t for t in (*recipe.files.values(), *recipe.env.values(), *recipe.run)
    )
    http_target = getattr(args, "_target", None) is not None and args._target.kind == "http"
    if (transport == "http" or http_target) and not uses_url:
        raise InputError(
            f"the {recipe.name} recipe configures a stdio server only (no {{server_url}} in it); "
            "give a stdio or bundled target",
            where="--server-transport" if not http_target else "--http",
        )
    observed: dict[str, dict] = {}
    version = recipe.version
    with tempfile.TemporaryDirectory(prefix="mcp-matrix-probes-") as tmp:
        for ps in sets:
            sys.stderr.write(f"calibrate: {recipe.client} on probe set {ps.id} ...\n")
            server, proc = _server_for(args, ps, Path(tmp), transport)
            try:
                result = harness.run_recipe(
                    recipe,
                    server,
                    ps.calls,
                    client_command=command,
                    timeout=args.timeout,
                    keep=args.keep,
                    tool_names=[t["name"] for t in ps.tools],
                )
            finally:
                if proc is not None:
                    harness.kill_group(proc)
            if args.keep:
                sys.stderr.write(f"calibrate: kept {result.workdir}\n")
            version = result.client_version or version
            obs = record.observe(result, ps)
            obs["server_name"] = recipe.server_name
            obs["probe_digest"] = probe.digest(ps)
            observed[ps.id] = obs
    rec = record.new_record(
        recipe.profile,
        recipe.client,
        version,
        Path(recipe.source).name,
        observed,
        command=shlex.join(command) if command else "",
    )
    if args.output:
        record.write_record(rec, args.output)
    cells = drifts.record_drift(profile, rec, {ps.id: ps for ps in sets})
    failed = [s for s, o in observed.items() if o["outcome"] == "no-model-request"]
    if args.json:
        sys.stdout.write(
            json.dumps(
                {"record": rec, "profile": profile.name, "drift": [c.to_json() for c in cells]},
                indent=1,
                ensure_ascii=False,
            )
            + "\n"
        )
    else:
        print_drift(rec, profile.name, cells, failed)
    if failed and len(failed) == len(observed):
        return EXIT_UNMEASURABLE
    return EXIT_FINDINGS if failed or any(not c.agree for c in cells) else 0


MAX_SHOWN = 12  # drifting cells printed per probe set


def clean(value: object, limit: int = 160) -> str:
    """Text safe for a terminal (matrix.text.safe: every control character, CSI/OSC, bidi shown as
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
        out(f"\n[{clean(set_id)}] {status}; handshake: {clean(hs, 120)}\n")
        if obs["outcome"] == "no-model-request":
            tail = obs.get("client_output_tail") or ""
            out(
                f"  the client never asked its model (exit {obs['run']['returncode']}, timed out: "
                f"{obs['run']['timed_out']}) {clean(tail, 300)}\n"
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
        + (f"; {len(failed)} probe set(s) not measured: {', '.join(failed)}" if failed else "")
        + "\n"
    )
