"""pytest plugin: the matrix as pytest items, and a fixture for a server's own tests.

    pytest --mcp-stdio "python -m my_server" [--mcp-client NAME ...] [--mcp-cases FILE] [--mcp-policy FILE]

turns every cell into a test with a readable id (``memory_reflect[claude-code]::alias-only``
for a call, ``memory_reflect[claude-code]`` for discovery) that fails exactly where the
release policy fails. Without an ``--mcp-*`` target the plugin adds no items, so installing
mcp-matrix never changes another project's test run. The ``mcp_matrix`` fixture runs the
matrix from a test: ``mcp_matrix.run(server="memory", clients=["claude-code"])``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("mcp-matrix", "MCP client compatibility matrix")
    g.addoption("--mcp-stdio", metavar="CMD", help="run the matrix against this stdio server")
    g.addoption("--mcp-http", metavar="URL", help="run the matrix against this Streamable HTTP server")
    g.addoption("--mcp-server", metavar="NAME", help="run the matrix against a bundled reference server")
    g.addoption("--mcp-client", action="append", default=[], metavar="NAME", help="only these profiles")
    g.addoption("--mcp-cases", metavar="FILE", help="cases YAML")
    g.addoption("--mcp-policy", metavar="FILE", help="release policy (YAML or pyproject.toml)")
    g.addoption("--mcp-baseline", metavar="SNAPSHOT", help="baseline snapshot for caching clients")
    g.addoption("--mcp-results", metavar="FILE", help="also write the results stream here")


@dataclass
class MatrixRun:
    """The events of one matrix run, with lookups for assertions."""

    events: list[dict]

    def cell(self, tool: str, client: str, case: str | None = None) -> dict:
        kind = "call" if case else "discovery"
        for e in self.events:
            if e.get("event") == kind and e.get("tool") == tool and e.get("profile") == client and (
                case is None or e.get("case") == case
            ):
                return e
        raise KeyError(f"no {kind} cell {tool}[{client}]" + (f"::{case}" if case else ""))

    def verdict(self, tool: str, client: str, case: str | None = None) -> str:
        return self.cell(tool, client, case)["verdict"]


class MatrixRunner:
    """What the ``mcp_matrix`` fixture gives a test: ``run(...)`` a matrix against a server."""

    def run(self, *, stdio: str | None = None, http: str | None = None, server: str | None = None,
            clients: list[str] | None = None, cases: str | Path | None = None, baseline: str | Path | None = None,
            allow_writes: bool = False, results: str | Path | None = None) -> MatrixRun:
        return MatrixRun(_run(stdio=stdio, http=http, server=server, clients=clients or [], cases=cases,
                              baseline=baseline, allow_writes=allow_writes, results=results))


@pytest.fixture
def mcp_matrix() -> MatrixRunner:
    """Run mcp-matrix against your server from a test and assert on its verdicts."""
    return MatrixRunner()


def _run(*, stdio=None, http=None, server=None, clients=(), cases=None, baseline=None, allow_writes=False,
         results=None) -> list[dict]:
    from matrix.cases import load_cases
    from matrix.commands.run import bundled_cases
    from matrix.profiles.loader import load_profiles, select_profiles
    from matrix.results import ResultsWriter
    from matrix.run import RunConfig, run_matrix
    from matrix.snapshot import load_snapshot
    from matrix.targets import Target

    if stdio:
        target = Target.stdio(stdio)
    elif http:
        target = Target.http(http)
    else:
        target = Target.bundled(server or "memory")
    profiles = [p for p in select_profiles(load_profiles(), list(clients)) if not p.abstract]
    cases_path = Path(cases) if cases else (bundled_cases(target.server) if target.kind == "server" else None)
    out = open(results, "w", encoding="utf-8") if results else None
    try:
        writer = ResultsWriter(out, secrets=target.secrets())
        run_matrix(RunConfig(target=target, profiles=profiles, cases=load_cases(cases_path) if cases_path else [],
                             baseline=load_snapshot(baseline) if baseline else None, allow_writes=allow_writes),
                   writer)
    finally:
        if out:
            out.close()
    return writer.events


class MatrixItem(pytest.Item):
    """One cell of the matrix: fails when the release policy fails it."""

    def __init__(self, *, cell: dict, failure: str | None, **kw: Any) -> None:
        super().__init__(**kw)
        self.cell = cell
        self.failure = failure
        self.user_properties.append(("verdict", cell.get("verdict")))

    def runtest(self) -> None:
        if self.failure:
            raise MatrixCellFailure(self.failure)

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


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    opt = config.getoption
    if not (opt("--mcp-stdio") or opt("--mcp-http") or opt("--mcp-server")):
        return
    from matrix.checklist import cell_key, evaluate, load_policy
    from matrix.errors import MatrixError

    try:
        policy = load_policy(opt("--mcp-policy"))
        events = _run(stdio=opt("--mcp-stdio"), http=opt("--mcp-http"), server=opt("--mcp-server"),
                      clients=opt("--mcp-client"), cases=opt("--mcp-cases"), baseline=opt("--mcp-baseline"),
                      results=opt("--mcp-results"))
    except MatrixError as exc:
        raise pytest.UsageError(f"mcp-matrix: {exc}") from None
    checklist = evaluate(events, policy)
    failing = {item.cell: f"{item.name}: {item.evidence}" for item in checklist if not item.passed and item.cell}
    for cell in (e for e in events if e.get("event") in ("discovery", "call")):
        items.append(MatrixItem.from_parent(session, name=cell_id(cell), cell=cell, failure=failing.get(cell_key(cell))))
    for item in checklist:
        if not item.passed and item.cell is None:  # run-level items: unfinished run, stale expected failures
            items.append(MatrixItem.from_parent(session, name=f"policy::{item.name}", cell={"verdict": "policy"},
                                                failure=item.evidence))
