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
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # pytest's own types for repr_failure, not exported by the pytest package
    from _pytest._code.code import TerminalRepr, TracebackStyle


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
    ) -> Any:
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


# -- the matrix as items ---------------------------------------------------------------------

ROOT = "mcp-matrix"  # the first part of every matrix item's node id, and the items' collector
POLICY = "policy"  # the name of the item that judges the run as a whole


class _Shared:
    """Work done once a test session, whichever process asks first: in this process without
    pytest-xdist, else under a file lock in the directory the xdist controller made for the
    session, where every worker finds what the first one left (whatever the ``--dist`` mode)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._memory: dict[str, Any] = {}

    def once(self, name: str, build: Callable[[], Any]) -> Any:
        """``build()``'s value for ``name``, built now if no process has yet (JSON across workers)."""
        if self.directory is None:
            if name not in self._memory:
                self._memory[name] = build()
            return self._memory[name]
        done = self.directory / f"{name}.json"
        with open(self.directory / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not done.exists():
                value = build()
                part = done.with_suffix(".part")
                part.write_text(json.dumps(value), encoding="utf-8")
                part.replace(done)
        return json.loads(done.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class _Judged:
    """One process's reading of the run: its cells by key and what the policy says of them."""

    cells: dict[tuple, Any]
    failing: dict[tuple, str]  # cell key -> the policy's failure and the fix
    skipped: dict[tuple, str]  # (profile or None, tool, case) -> why the call was not made
    unmeasured: dict[str, str]  # profile -> why it could not be measured
    run_level: tuple[str, ...]  # the policy's failures about the run as a whole
    error: str | None = None  # the run could not be made at all


class _Plan:
    """What collection learnt (the cells to expect), the clients selected, and the run: made
    once per test session, read once per process."""

    def __init__(self, config: pytest.Config) -> None:
        from mcp_matrix import api
        from mcp_matrix.gate.checklist import check_policy_clients, load_policy
        from mcp_matrix.targets.kinds import KINDS, parse_pairs

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
        self.shared = _Shared(Path(shared) if shared else None)
        self.selected: tuple[str, ...] = ()  # the clients with a selected item
        self._judged: _Judged | None = None

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

    def judged(self) -> _Judged:
        """The run of the selected clients (made once a session) and the policy evaluated once
        over all of its events."""
        if self._judged is None:
            self._judged = self._judge()
        return self._judged

    def _judge(self) -> _Judged:
        from mcp_matrix.run.results import read_typed

        clients = hashlib.sha256("\0".join(self.selected).encode()).hexdigest()[:12]
        value = self.shared.once(f"run-{clients}", self._run)  # one run per session
        if value.get("error"):
            return _Judged({}, {}, {}, {}, (), error=value["error"])
        events = value["events"] if "events" in value else read_typed(value["results"])
        return _judge(events, self.policy)

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


def _judge(events: list, policy: Any) -> _Judged:
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
    return _Judged(
        cells=cells,
        failing=failing,
        skipped={(e.profile, e.tool, e.case): e.reason for e in events if isinstance(e, Skipped)},
        unmeasured={e.profile: e.error for e in events if isinstance(e, ProfileError)},
        run_level=tuple(
            f"{i.name}: {i.evidence}" for i in checklist if not i.passed and not i.cell
        ),
    )


_PLAN = pytest.StashKey["_Plan"]()
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
        config.stash[_PLAN] = _Plan(config)
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


def client_marker(profile: str) -> str:
    """The marker of one client's cells: ``mcp_client_`` + the profile name with ``_`` for ``-``."""
    return "mcp_client_" + "".join(ch if ch.isalnum() else "_" for ch in profile)


class MatrixCollector(pytest.Collector):
    """The matrix's items, under one node (``mcp-matrix``): so they count as collected, and their
    node ids can be given on the command line and rerun by ``--lf``."""

    def __init__(self, *, plan: _Plan, asked: list[str], **kw: Any) -> None:
        super().__init__(**kw)
        self.plan = plan
        self.asked = asked

    def collect(self) -> list[pytest.Item]:
        items: dict[str, MatrixItem] = {}
        for cell in [*self.plan.cells(), {"event": "run"}]:
            name = cell_id(cell)
            if name in items:  # a server that lists a name twice: the first stands for it
                continue
            items[name] = MatrixItem.from_parent(
                self, name=name, nodeid=f"{ROOT}::{name}", cell=cell, plan=self.plan
            )
        if not self.asked or ROOT in self.asked:
            return list(items.values())
        missing = [a for a in self.asked if a.split("::", 1)[1] not in items]
        if missing:
            from mcp_matrix.core.errors import did_you_mean

            raise MatrixCollectError(
                f"no such item: {safe_id(missing[0])}"
                f"{did_you_mean(missing[0], [f'{ROOT}::{n}' for n in items])}"
            )
        return [items[a.split("::", 1)[1]] for a in dict.fromkeys(self.asked)]

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, MatrixCollectError):
            return safe_text(f"mcp-matrix: {excinfo.value}")
        return super().repr_failure(excinfo)


class MatrixCollectError(Exception):
    """The matrix could not be collected: the server could not be listed, or no such item."""


class MatrixItem(pytest.Item):
    """One cell of the matrix: fails when the release policy fails it, with the fix."""

    def __init__(self, *, cell: dict, plan: _Plan, **kw: Any) -> None:
        super().__init__(**kw)
        self.cell = cell
        self.plan = plan
        names = {"client": cell.get("profile"), "tool": cell.get("tool"), "case": cell.get("case")}
        self.add_marker(pytest.mark.mcp_matrix(**{k: v for k, v in names.items() if v is not None}))
        if cell.get("profile"):
            self.add_marker(getattr(pytest.mark, client_marker(cell["profile"])))

    def runtest(self) -> None:
        judged = self.plan.judged()
        if judged.error:
            raise MatrixCellFailure(judged.error)
        if self.cell["event"] == "run":
            if judged.run_level:
                raise MatrixCellFailure("\n".join(judged.run_level))
            return
        profile, tool, case = self.cell["profile"], self.cell["tool"], self.cell.get("case")
        key = (self.cell["event"], profile, tool, case)
        if key not in judged.cells:
            why = judged.skipped.get((profile, tool, case)) or judged.skipped.get(
                (None, tool, case)
            )
            if why:
                pytest.skip(safe_text(why))
            if profile in judged.unmeasured:
                raise MatrixCellFailure(
                    f"{profile} could not be measured: {judged.unmeasured[profile]}"
                )
            raise MatrixCellFailure(
                f"{self.name}: the run made no such cell (the server's tool list changed "
                "between collection and the run?)"
            )
        if key in judged.failing:
            raise MatrixCellFailure(judged.failing[key])

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, MatrixCellFailure):
            return safe_text(str(excinfo.value))
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{ROOT}: {self.name}"


class MatrixCellFailure(Exception):
    """A cell the release policy fails."""


def cell_id(cell: dict) -> str:
    """An item's name: ``tool[client]`` (discovery), ``tool[client]::case`` (a call), ``policy``.

    The client in brackets selects exactly (``-k "[claude-code]"`` never matches
    ``claude-code-278``); names are masked already and shown escaped (``mcp_matrix.core.text.safe``)."""
    if cell.get("event") == "run":
        return POLICY
    base = f"{safe_id(cell['tool'])}[{cell['profile']}]"
    return f"{base}::{safe_id(cell['case'])}" if cell.get("event") == "call" else base


def safe_id(text: str) -> str:
    from mcp_matrix.core.text import safe

    return safe(text)


def safe_text(text: str) -> str:
    """A failure's or skip's text as a terminal shows but never obeys (a server's words in it)."""
    return "\n".join(safe_id(line) for line in text.split("\n"))


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
