"""What the plugin plans once a test session: the target and options read, the cells collection
expects (a snapshot, no call), and the one run of the selected clients with the policy judged
over it (``mcp_matrix.api``, imported when first needed: installing mcp-matrix must not slow
another project's pytest start-up)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.plugin.shared import SharedWork


class MatrixCollectError(Exception):
    """The matrix could not be collected: the server could not be listed, or no such item."""


@dataclass(frozen=True)
class JudgedRun:
    """One process's reading of the run: its cells by key and what the policy says of them."""

    cells: dict[tuple, JSON]
    failing: dict[tuple, str]  # cell key -> the policy's failure and the fix
    skipped: dict[tuple, str]  # (profile or None, tool, case) -> why the call was not made
    unmeasured: dict[str, str]  # profile -> why it could not be measured
    run_level: tuple[str, ...]  # the policy's failures about the run as a whole
    error: str | None = None  # the run could not be made at all


class MatrixPlan:
    """What collection learnt (the cells to expect), the clients selected, and the run: made
    once per test session, read once per process."""

    def __init__(self, config: pytest.Config) -> None:
        from mcp_matrix import api
        from mcp_matrix.gate.policy import check_policy_clients, load_policy
        from mcp_matrix.targets.inputs import parse_pairs
        from mcp_matrix.targets.kinds import KINDS

        opt = config.getoption
        self.config = config
        self.target = api.target_of(
            {name: opt(kind.plugin_option) for name, kind in KINDS.items()},
            headers=parse_pairs(opt("--mcp-header"), ":", "--mcp-header"),
        )
        self.env = parse_pairs(opt("--mcp-env"), "=", "--mcp-env")
        self.profiles = api.profiles(opt("--mcp-client"))
        self.timeouts = api.Timeouts(
            initialize=opt("--mcp-timeout-initialize"),
            list=opt("--mcp-timeout-list"),
            call=opt("--mcp-timeout-call"),
        )
        self.policy = load_policy(opt("--mcp-policy"))
        if self.policy.required_clients:
            check_policy_clients(self.policy, [p.name for p in api.profiles()])
        # What the run's results stream masks (mcp_matrix.api.run: the target with its environment).
        self.secrets = replace(self.target, env={**self.target.env, **self.env}).secrets()
        workerinput = getattr(config, "workerinput", {})
        shared = workerinput.get("mcp_matrix_dir")
        self.shared = SharedWork(Path(shared) if shared else None)
        self.selected: tuple[str, ...] = ()  # the clients with a selected item
        self._judged: JudgedRun | None = None

    def masked(self, text: str) -> str:
        """``text`` with the target's secrets masked exactly as the results stream masks the
        names it holds, so a collected id names the cell the run makes."""
        from mcp_matrix.targets.kinds import scrub_json

        if not self.secrets:
            return text
        return json.loads(scrub_json(json.dumps(text, ensure_ascii=False), self.secrets))

    def cells(self) -> list[dict]:
        """A stub (event, profile, tool, case: masked) for every cell the run will emit, in a
        fixed order. Connects once a session; calls nothing."""
        value = self.shared.once("cells", self._plan_cells)
        if value.get("error"):
            raise MatrixCollectError(value["error"])
        return value["cells"]

    def _plan_cells(self) -> dict:
        from mcp_matrix import api
        from mcp_matrix.core.errors import MatrixError
        from mcp_matrix.run.cases import plan_cases

        opt = self.config.getoption
        try:
            snap = api.snapshot(self.target, timeouts=self.timeouts, env=self.env)
            failure = snap.error or snap.doc.get("listError")
            if failure:
                why = failure.get("message") if isinstance(failure, dict) else failure
                return {"error": self.masked(f"the server could not be listed: {why or failure}")}
            loaded, _ = api.cases_for(self.target, opt("--mcp-cases"))
            cases, _ = plan_cases([t for _, t in snap.tools], loaded, opt("--mcp-allow-writes"))
        except MatrixError as exc:
            return {"error": self.masked(str(exc))}
        shown = api.discover(snap, self.profiles)
        out = []
        for profile in self.profiles:
            out += [
                {"event": "discovery", "profile": profile.name, "tool": self.masked(c.tool)}
                for c in shown
                if c.profile == profile.name
            ]
            out += [
                {
                    "event": "call",
                    "profile": profile.name,
                    "tool": self.masked(c.tool),
                    "case": self.masked(c.name),
                }
                for c in cases
            ]
        return {"cells": out}

    def judged(self) -> JudgedRun:
        """The run of the selected clients (made once a session) and the policy evaluated once
        over all of its events."""
        if self._judged is None:
            self._judged = self._judge()
        return self._judged

    def _judge(self) -> JudgedRun:
        from mcp_matrix.run.results import read_typed

        clients = hashlib.sha256("\0".join(self.selected).encode()).hexdigest()[:12]
        value = self.shared.once(f"run-{clients}", self._run)  # one run per session
        if value.get("error"):
            return JudgedRun({}, {}, {}, {}, (), error=value["error"])
        events = value["events"] if "events" in value else read_typed(value["results"])
        return judge(events, self.policy)

    def _run(self) -> dict:
        from mcp_matrix import api
        from mcp_matrix.core.errors import MatrixError

        opt = self.config.getoption
        results = opt("--mcp-results")
        if results is None and self.shared.directory is not None:
            results = self.shared.directory / "results.jsonl"
        try:
            outcome = api.run(
                self.target,
                profiles=[p for p in self.profiles if p.name in self.selected],
                timeouts=self.timeouts,
                env=self.env,
                cases=opt("--mcp-cases"),
                baseline=opt("--mcp-baseline"),
                allow_writes=opt("--mcp-allow-writes"),
                results=results,
                timeout_run=opt("--mcp-timeout-run"),
            )
        except MatrixError as exc:
            return {"error": self.masked(f"the run could not be made: {exc}")}
        if self.shared.directory is None:
            return {"events": list(outcome.events)}  # this process only: no need to read a file
        return {"results": str(Path(results).absolute())}


def judge(events: list, policy: Any) -> JudgedRun:
    """The policy evaluated once over the whole run, read per cell."""
    from mcp_matrix.core.events import CallCell, DiscoveryCell, ProfileError, Skipped
    from mcp_matrix.gate.checklist import cell_key, evaluate
    from mcp_matrix.report.advice import advice_for

    checklist = evaluate(events, policy)
    cells: dict[tuple, Any] = {}
    for e in events:
        if isinstance(e, (DiscoveryCell, CallCell)):
            cells.setdefault(cell_key(e), e)
    failing = {}
    for item in checklist:
        if not item.passed and item.cell:
            cell = cells.get(item.cell)
            fix = advice_for(cell) if cell else None
            failing[item.cell] = f"{item.name}: {item.evidence}" + (f"\nfix: {fix}" if fix else "")
    return JudgedRun(
        cells=cells,
        failing=failing,
        skipped={(e.profile, e.tool, e.case): e.reason for e in events if isinstance(e, Skipped)},
        unmeasured={e.profile: e.error for e in events if isinstance(e, ProfileError)},
        run_level=tuple(
            f"{i.name}: {i.evidence}" for i in checklist if not i.passed and not i.cell
        ),
    )
