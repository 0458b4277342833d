"""pytest plugin: the matrix as pytest items, and a fixture for a server's own tests.

    pytest --mcp-stdio "python -m my_server" [--mcp-client NAME ...] [--mcp-cases FILE] [--mcp-policy FILE]

turns every cell into a test (``mcp-matrix::memory_reflect[claude-code]::alias-only`` for a call,
``mcp-matrix::memory_reflect[claude-code]`` for discovery, ``mcp-matrix::policy`` for the run as a
whole) that fails exactly where the release policy fails, and says the fix. Without an
``--mcp-*`` target the plugin adds no items, so installing mcp-matrix never changes another
project's test run. docs/pytest-plugin.md is the user's guide.

Collecting only takes the server's snapshot (initialize + tools/list) and plans the cases: no tool
is called, so ``--co`` is quick. The matrix itself is one ``mcp_matrix.api.run`` of every client that
has a selected item, made when the first item runs, once per test session: under pytest-xdist
(any ``--dist`` mode) the first worker to need it runs it holding a file lock in a directory the
controller made for the session, and the others wait for it and read its results file; the
cells to collect are shared the same way, so every worker collects the same items. The policy is
evaluated over that one run's events, as ``mcp-matrix check`` does.

The ``mcp_matrix`` fixture runs the matrix from a test: ``mcp_matrix.run(server="memory",
clients=["claude-code"])`` gives a ``mcp_matrix.api.RunOutcome`` (typed cells). Both go through
``mcp_matrix.api``, with the timeouts and the server's environment passed on every call.

This module holds the options, the fixture and the hooks; the plan, its shared work and the
items are ``mcp_matrix.plugin``'s.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from mcp_matrix.plugin.items import ROOT, MatrixCollector, MatrixItem, client_marker
from mcp_matrix.plugin.plan import MatrixPlan


def pytest_addoption(parser: pytest.Parser) -> None:
    from mcp_matrix.targets.kinds import KINDS

    g = parser.getgroup("mcp-matrix", "MCP client compatibility matrix")
    for kind in KINDS.values():  # --mcp-stdio, --mcp-http, --mcp-sse, --mcp-server
        g.addoption(
            kind.plugin_option, metavar=kind.metavar, help=f"run the matrix against {kind.what}"
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
        help="also write the run's results stream here (every selected client's cells)",
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
        help="bound on the whole run; calls not made are skipped items with the reason",
    )


class MatrixRunner:
    """What the ``mcp_matrix`` fixture gives a test: ``run(...)`` a matrix against a server."""

    def run(
        self,
        *,
        stdio: str | None = None,
        http: str | None = None,
        sse: str | None = None,
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
        **other_kinds: str | None,
    ) -> object:
        """A ``mcp_matrix.api.RunOutcome``: ``.verdict(tool, client, case)``, ``.cell(...)``, ``.cells``.

        The target: ``stdio``, ``http``, ``sse``, ``server`` or another kind of
        ``mcp_matrix.targets.kinds.KINDS`` by its name (``mcp_matrix.api.target``)."""
        from mcp_matrix import api

        values = {"stdio": stdio, "http": http, "sse": sse, "server": server, **other_kinds}
        target = api.target_of(values, headers=headers)
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


_PLAN = pytest.StashKey[MatrixPlan]()
_SHARED_DIR = pytest.StashKey[Path]()
_ASKED = pytest.StashKey[list]()  # the matrix node ids given on the command line


def _has_target(config: pytest.Config) -> bool:
    from mcp_matrix.targets.kinds import KINDS

    return any(config.getoption(kind.plugin_option) for kind in KINDS.values())


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mcp_matrix(client, tool, case): a cell of the mcp-matrix (added by --mcp-* options); "
        "-m \"mcp_matrix(client='claude-code')\" selects one client's cells exactly",
    )
    if not _has_target(config):
        return
    from mcp_matrix.core.errors import MatrixError

    try:
        config.stash[_PLAN] = MatrixPlan(config)
    except MatrixError as exc:
        raise pytest.UsageError(f"mcp-matrix: {exc}") from None
    for p in config.stash[_PLAN].profiles:
        config.addinivalue_line(
            "markers", f"{client_marker(p.name)}: cells of the {p.name} profile"
        )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's controller: one directory for the session's shared work, for every worker."""
    config = node.config
    if _PLAN not in config.stash:
        return
    if _SHARED_DIR not in config.stash:
        config.stash[_SHARED_DIR] = Path(tempfile.mkdtemp(prefix="mcp-matrix-"))
    node.workerinput["mcp_matrix_dir"] = str(config.stash[_SHARED_DIR])


def pytest_unconfigure(config: pytest.Config) -> None:
    directory = config.stash.get(_SHARED_DIR, None)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """Matrix node ids given as arguments (``mcp-matrix::tool[client]``, or ``mcp-matrix`` for all
    of it) name no file: take them out of what pytest collects from disk, to select items by."""
    config = session.config
    if _PLAN not in config.stash:
        return
    asked = [a for a in config.args if a == ROOT or a.startswith(f"{ROOT}::")]
    config.stash[_ASKED] = asked
    if asked:
        config.args[:] = [a for a in config.args if a not in asked]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    plan = config.stash.get(_PLAN, None)
    if plan is None:
        return
    collector = MatrixCollector.from_parent(
        session, name=ROOT, nodeid=ROOT, plan=plan, asked=config.stash.get(_ASKED, [])
    )
    items.extend(session.genitems(collector))  # reported as collected, counted as such


def pytest_collection_finish(session: pytest.Session) -> None:
    """The clients the run will measure: those with a selected item; all of them when the policy
    item, which judges the whole session, is selected."""
    plan = session.config.stash.get(_PLAN, None)
    if plan is None:
        return
    mine = [i for i in session.items if isinstance(i, MatrixItem)]
    wanted = {i.cell.get("profile") for i in mine}
    if any(i.cell["event"] == "run" for i in mine):
        wanted |= {p.name for p in plan.profiles}
    plan.selected = tuple(p.name for p in plan.profiles if p.name in wanted)
