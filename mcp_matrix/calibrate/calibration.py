"""One calibration (``mcp-matrix calibrate``): a real client on the probe sets, its drift.

For each probe set (or the target's own tools) the client runs headless against the fake
model endpoint with the probe server behind the recording tap (``harness.run_recipe``); what
it did becomes a calibration record (``record``) compared, cell by cell, with what its profile
predicts (``drift``). Nothing here prints; ``on_step`` hears each probe set as it starts (and
each work folder kept).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_matrix.calibrate import drift as drifts
from mcp_matrix.calibrate import harness, probe, record
from mcp_matrix.core.errors import InputError, MeasureError
from mcp_matrix.profiles.model import Profile
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.snapshot import Snapshot, take_snapshot
from mcp_matrix.wire.session import Timeouts


@dataclass(frozen=True)
class Calibration:
    """A record of what the client did, its drift cells, and the probe sets it could not judge."""

    record: dict
    cells: tuple[drifts.Cell, ...]
    failed: tuple[str, ...]  # no model request, and the record cannot say why (unjudged)

    @property
    def measured(self) -> bool:
        """False when no probe set could be judged (no model request anywhere, no abort shown)."""
        return not self.failed or len(self.failed) < len(self.record.get("probe_sets") or {})


def probe_sets(
    target: Target | None, names: Sequence[str], timeouts: Timeouts
) -> list[probe.ProbeSet]:
    """The named probe sets (every one when none is named), or the target's own tools."""
    if target is None:
        return [probe.get_set(s) for s in (names or list(probe.PROBE_SETS))]
    doc = take_snapshot(target, timeouts=timeouts)
    # one page assumed: a paginating target's page-based predictions are not compared exactly
    tools = tuple(
        t for _, t in Snapshot(doc, source="live").tools if isinstance(t, dict) and "name" in t
    )
    if not tools:
        raise MeasureError("the target listed no tools to calibrate with")
    return [probe.ProbeSet("target", "the target's own tools (no scripted calls)", tools, ())]


def check_transport(recipe: harness.Recipe, transport: str, target: Target | None) -> None:
    """A recipe that configures a stdio server only cannot be given an HTTP one; no recipe
    configures a legacy HTTP+SSE server (a client is given a command or a Streamable HTTP URL)."""
    if target is not None and target.kind not in ("stdio", "http", "server"):
        raise InputError(
            f"calibrate points a client at a stdio command or a Streamable HTTP URL; "
            f"a target of kind {target.kind!r} cannot be calibrated against",
            where=f"--{target.kind}",
        )
    uses_url = any(
        "{server_url}" in t for t in (*recipe.files.values(), *recipe.env.values(), *recipe.run)
    )
    http_target = target is not None and target.kind == "http"
    if (transport == "http" or http_target) and not uses_url:
        raise InputError(
            f"the {recipe.name} recipe configures a stdio server only (no {{server_url}} in it); "
            "give a stdio or bundled target",
            where="--server-transport" if not http_target else "--http",
        )


def server_for(
    target: Target | None, ps: probe.ProbeSet, folder: Path, transport: str
) -> tuple[harness.ServerSpec, subprocess.Popen | None]:
    """The server the client is pointed at: the target, or the probe server with this set's tools."""
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


def calibrate(
    recipe: harness.Recipe,
    profile: Profile,
    sets: Sequence[probe.ProbeSet],
    *,
    target: Target | None = None,
    transport: str = "stdio",
    command: Sequence[str] | None = None,
    timeout: float | None = None,
    keep: bool = False,
    on_step: Callable[[str], None] | None = None,
) -> Calibration:
    """Run the client of ``recipe`` on every probe set and compare what it did with ``profile``."""
    observed: dict[str, dict] = {}
    version = recipe.version
    with tempfile.TemporaryDirectory(prefix="mcp-matrix-probes-") as tmp:
        for ps in sets:
            if on_step:
                on_step(f"{recipe.client} on probe set {ps.id} ...")
            server, proc = server_for(target, ps, Path(tmp), transport)
            try:
                result = harness.run_recipe(
                    recipe,
                    server,
                    ps.calls,
                    client_command=list(command) if command else None,
                    timeout=timeout,
                    keep=keep,
                    server_tools=ps.tools,
                    provider_limits=ps.provider_limits,
                )
            finally:
                if proc is not None:
                    harness.kill_group(proc)
            if keep and on_step:
                on_step(f"kept {result.workdir}")
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
    judged = drifts.judge_record(profile, rec, {ps.id: ps for ps in sets})
    return Calibration(rec, judged.cells, judged.unjudged)


__all__ = ["Calibration", "calibrate", "check_transport", "probe_sets", "server_for"]
