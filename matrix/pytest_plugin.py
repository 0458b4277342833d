"""pytest plugin: the matrix as pytest items, and a fixture for a server's own tests.

    pytest --mcp-stdio "python -m my_server" [--mcp-client NAME ...] [--mcp-cases FILE] [--mcp-policy FILE]

turns every cell into a test with a readable id (``memory_reflect[claude-code]::alias-only``
for a call, ``memory_reflect[claude-code]`` for discovery) that fails exactly where the
release policy fails, and says the fix. Without an ``--mcp-*`` target the plugin adds no
items, so installing mcp-matrix never changes another project's test run.

Collecting only takes the server's snapshot (initialize + tools/list) and plans the cases:
no tool is called, so ``--co`` is quick and every pytest-xdist worker collects the same items
in the same order. A client's calls are made when its first item runs, once per process:
``-k claude-code`` (or ``-m mcp_client_claude_code``) runs one client's matrix only; items of
one client share an ``xdist_group``, so ``-n 2 --dist loadgroup`` runs each client once.

The ``mcp_matrix`` fixture runs the matrix from a test: ``mcp_matrix.run(server="memory",
clients=["claude-code"])`` gives a ``matrix.api.RunOutcome`` (typed cells). Both go through
``matrix.api``, with the timeouts and the server's environment passed on every call.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("mcp-matrix", "MCP client compatibility matrix")
    g.addoption("--mcp-stdio", metavar="CMD", help="run the matrix against this stdio server")
    g.addoption(
        "--mcp-http", metavar="URL", help="run the matrix against this Streamable HTTP server"
    )
    g.addoption(
        "--mcp-server", metavar="NAME", help="run the matrix against a bundled reference server"
    )
    g.addoption(
        "--mcp-client", action="append", default=[], metavar="NAME", help="only these profiles"
    )
    g.addoption("--mcp-cases", metavar="FILE", help="cases YAML")
    g.addoption("--mcp-policy", metavar="FILE", help="release policy (YAML or pyproject.toml)")
    g.addoption("--mcp-baseline", metavar="SNAPSHOT", help="baseline snapshot for caching clients")
    g.addoption(
        "--mcp-results",
        metavar="FILE",
        help="also write each client's results stream here "
        "(FILE's stem + -CLIENT + suffix: one file per client, as `mcp-matrix merge` joins them)",
    )
    g.addoption(
        "--mcp-env",
        action="append",
        default=[],
        metavar="K=V",
        help="environment for a stdio server",
    )
    g.addoption("--mcp-header", action="append", default=[], metavar="K:V", help="HTTP header")
    g.addoption(
        "--mcp-allow-writes", action="store_true", help="also call unlisted tools that may write"
    )
    for wait, default in (("initialize", 10.0), ("list", 10.0), ("call", 30.0)):
        g.addoption(
            f"--mcp-timeout-{wait}",
            type=float,
            default=default,
            metavar="SECONDS",
            help=f"bound on {wait} (default {default:g} s)",
        )
    g.addoption(
        "--mcp-timeout-run",
        type=float,
        default=None,
        metavar="SECONDS",
        help="bound on each client's whole run; calls not made are skipped items with the reason",
    )


class MatrixRunner:
    """What the ``mcp_matrix`` fixture gives a test: ``run(...)`` a matrix against a server."""

    def run(
        self,
        *,
        stdio: str | None = None,
        http: str | None = None,
        server: str | None = None,
        clients: list[str] | None = None,
        cases: str | Path | None = None,
        baseline: str | Path | None = None,
        allow_writes: bool = False,
        results: str | Path | None = None,
        env: dict | None = None,
        headers: dict | None = None,
        timeouts: Any = None,
        timeout_run: float | None = None,
    ) -> Any:
        """A ``matrix.api.RunOutcome``: ``.verdict(tool, client, case)``, ``.cell(...)``, ``.cells``."""
        from matrix import api

        target = api.target(stdio=stdio, http=http, server=server, headers=headers)
        return api.run(
            target,
            profiles=api.profiles(clients or []),
            timeouts=timeouts or api.Timeouts(),
            env=env,
            cases=cases,
            baseline=baseline,
            allow_writes=allow_writes,
            results=results,
            timeout_run=timeout_run,
        )


@pytest.fixture
def mcp_matrix() -> MatrixRunner:
    """Run mcp-matrix against your server from a test and assert on its verdicts."""
    return MatrixRunner()


# -- the matrix as items ---------------------------------------------------------------------


class _Plan:
    """What collection learnt (the snapshot, the cells to expect) and each client's run, made once
    per process when its first item runs."""

    def __init__(self, config: pytest.Config) -> None:
        from matrix import api
        from matrix.targets import parse_pairs

        opt = config.getoption
        self.config = config
        self.target = api.target(
            stdio=opt("--mcp-stdio"),
            http=opt("--mcp-http"),
            server=opt("--mcp-server"),
            headers=parse_pairs(opt("--mcp-header"), ":", "--mcp-header"),
        )
        self.env = parse_pairs(opt("--mcp-env"), "=", "--mcp-env")
        self.profiles = api.profiles(opt("--mcp-client"))
        self.timeouts = api.Timeouts(
            initialize=opt("--mcp-timeout-initialize"),
            list=opt("--mcp-timeout-list"),
            call=opt("--mcp-timeout-call"),
        )
        self._runs: dict[str, dict] = {}
        self._lock = threading.Lock()

    def cells(self) -> tuple[list[tuple[str, dict]], str | None]:
        """(profile, cell stub) for every cell a run will emit, in a fixed order, and why the
        server could not be listed (or None). Connects once; calls nothing."""
        from matrix import api
        from matrix.cases import plan_cases

        snap = api.snapshot(self.target, timeouts=self.timeouts, env=self.env)
        failure = snap.error or snap.doc.get("listError")
        if failure:
            return [], str(failure.get("message") or failure)
        opt = self.config.getoption
        loaded, _ = api.cases_for(self.target, opt("--mcp-cases"))
        cases, _ = plan_cases([t for _, t in snap.tools], loaded, opt("--mcp-allow-writes"))
        shown = api.discover(snap, self.profiles)
        out = []
        for profile in self.profiles:
            out += [
                (profile.name, {"event": "discovery", "profile": profile.name, "tool": c.tool})
                for c in shown
                if c.profile == profile.name
            ]
            out += [
                (
                    profile.name,
                    {"event": "call", "profile": profile.name, "tool": c.tool, "case": c.name},
                )
                for c in cases
            ]
        return out, None

    def outcome(self, profile: str) -> dict:
        """The client's run: its events by cell key, the policy's failures, and the skipped calls."""
        from matrix import api
        from matrix.advice import advice_for
        from matrix.checklist import cell_key, evaluate, load_policy
        from matrix.events import CallCell, DiscoveryCell, Skipped

        with self._lock:
            if profile in self._runs:
                return self._runs[profile]
            opt = self.config.getoption
            results = opt("--mcp-results")
            if results:
                p = Path(results)
                results = p.with_name(f"{p.stem}-{profile}{p.suffix}")
            events = api.run(
                self.target,
                profiles=[p for p in self.profiles if p.name == profile],
                timeouts=self.timeouts,
                env=self.env,
                cases=opt("--mcp-cases"),
                baseline=opt("--mcp-baseline"),
                allow_writes=opt("--mcp-allow-writes"),
                results=results,
                timeout_run=opt("--mcp-timeout-run"),
            ).events
            checklist = evaluate(events, load_policy(opt("--mcp-policy")))
            cells = {}
            for e in events:
                if isinstance(e, (DiscoveryCell, CallCell)):
                    cells.setdefault(cell_key(e), e)
            failing = {}
            for item in checklist:
                if not item.passed and item.cell:
                    cell = cells.get(item.cell)
                    fix = advice_for(cell) if cell else None
                    failing[item.cell] = f"{item.name}: {item.evidence}" + (
                        f"\nfix: {fix}" if fix else ""
                    )
            skipped = {
                ("call", profile, e.tool, e.case): e.reason
                for e in events
                if isinstance(e, Skipped) and e.profile == profile
            }
            run_level = [
                f"{i.name}: {i.evidence}" for i in checklist if not i.passed and i.cell is None
            ]
            self._runs[profile] = {
                "cells": cells,
                "failing": failing,
                "skipped": skipped,
                "run_level": run_level,
            }
            return self._runs[profile]


_PLAN = pytest.StashKey["_Plan"]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "mcp_matrix: a cell of the mcp-matrix (added by --mcp-* options)"
    )
    opt = config.getoption
    if not (opt("--mcp-stdio") or opt("--mcp-http") or opt("--mcp-server")):
        return
    from matrix.errors import MatrixError

    try:
        config.stash[_PLAN] = _Plan(config)
    except MatrixError as exc:
        raise pytest.UsageError(f"mcp-matrix: {exc}") from None
    for p in config.stash[_PLAN].profiles:
        config.addinivalue_line(
            "markers", f"{client_marker(p.name)}: cells of the {p.name} profile"
        )


def client_marker(profile: str) -> str:
    """The marker of one client's cells: ``mcp_client_`` + the profile name with ``_`` for ``-``."""
    return "mcp_client_" + "".join(ch if ch.isalnum() else "_" for ch in profile)


class MatrixItem(pytest.Item):
    """One cell of the matrix: fails when the release policy fails it, with the fix."""

    def __init__(self, *, cell: dict, plan: _Plan, **kw: Any) -> None:
        super().__init__(**kw)
        self.cell = cell
        self.plan = plan
        profile = cell["profile"]
        self.add_marker(pytest.mark.mcp_matrix)
        self.add_marker(getattr(pytest.mark, client_marker(profile)))
        self.add_marker(pytest.mark.xdist_group(name=f"mcp-{profile}"))
        self.extra_keyword_matches.add(profile)

    def runtest(self) -> None:
        outcome = self.plan.outcome(self.cell["profile"])
        stub = self.cell  # what collection knew of the cell: the key of the cell the run makes
        key = (stub.get("event"), stub["profile"], stub.get("tool"), stub.get("case"))
        if self.cell.get("event") == "run":
            if outcome["run_level"]:
                raise MatrixCellFailure("\n".join(outcome["run_level"]))
            return
        event = outcome["cells"].get(key)
        if event is None:
            why = outcome["skipped"].get(key)
            if why:
                pytest.skip(why)
            raise MatrixCellFailure(
                f"{self.name}: the run made no such cell (the server's tool list changed "
                "between collection and the run?)"
            )
        self.user_properties.append(("verdict", event.verdict))
        if key in outcome["failing"]:
            raise MatrixCellFailure(outcome["failing"][key])

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str:
        if isinstance(excinfo.value, MatrixCellFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"mcp-matrix: {self.name}"


class MatrixCellFailure(Exception):
    """A cell the release policy fails."""


def cell_id(cell: dict) -> str:
    base = f"{cell.get('tool')}[{cell.get('profile')}]"
    return f"{base}::{cell['case']}" if cell.get("event") == "call" else base


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    plan = config.stash.get(_PLAN, None)
    if plan is None:
        return
    from matrix.errors import MatrixError

    try:
        cells, failure = plan.cells()
    except MatrixError as exc:
        raise pytest.UsageError(f"mcp-matrix: {exc}") from None
    if failure:
        raise pytest.UsageError(f"mcp-matrix: the server could not be listed: {failure}")
    seen: set[str] = set()
    for _, cell in cells:
        name = cell_id(cell)
        if name in seen:  # a server that lists a name twice: the first stands for it, as in a run
            continue
        seen.add(name)
        items.append(MatrixItem.from_parent(session, name=name, cell=cell, plan=plan))
    for (
        profile
    ) in plan.profiles:  # run-level policy items: an unfinished run, a stale expected failure
        items.append(
            MatrixItem.from_parent(
                session,
                name=f"policy[{profile.name}]",
                cell={"event": "run", "profile": profile.name},
                plan=plan,
            )
        )
