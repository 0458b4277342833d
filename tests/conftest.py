"""Shared fixtures: real servers as subprocesses, the real CLI, bounded waits everywhere."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_matrix.targets.kinds import Target

REPO = Path(__file__).resolve().parent.parent


NEUTRAL_CWD = tempfile.gettempdir()
_BOUNDS = ("--timeout-initialize", "40", "--timeout-list", "30", "--timeout-call", "30")
LOADED_MACHINE_BOUNDS = {"run": _BOUNDS, "check": _BOUNDS, "snapshot": _BOUNDS, "discover": _BOUNDS}


def run_cli(
    *args: str, timeout: float = 120, input: str | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess (as a user would), bounded; ``env``: variables added to
    the CLI's own environment.

    It runs from a neutral directory so ``python -m mcp_matrix`` imports the *installed* package,
    not the checkout: in CI (a non-editable install) this proves the wheel carries its
    profiles, reference servers and templates.
    """
    if args and args[0] in LOADED_MACHINE_BOUNDS:
        # CI runs tests in parallel on 2 cores, where a Python server can take seconds to start;
        # generous bounds go first so a test that sets its own (later on the line) wins.
        args = (args[0], *LOADED_MACHINE_BOUNDS[args[0]], *args[1:])
    return subprocess.run(
        [sys.executable, "-m", "mcp_matrix", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
        cwd=NEUTRAL_CWD,
        env={**os.environ, **env} if env else None,
    )


def run_cli_in_process(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
    """``run_cli`` without the process: ``mcp_matrix.commands.cli.main`` in this process, its output captured.

    For a command whose process boundary is not the point (bad input refused before any server
    starts, a report of a file): it saves the interpreter start, imports and profile loading of a
    new process (about a second each on 2 cores). It runs from the same neutral directory and
    with the same bounds; an exception that escapes is a traceback on stderr and exit 1, as in a
    process. Servers it starts are still real processes.
    """
    import io
    import os
    import traceback

    from mcp_matrix.commands.cli import main

    if args and args[0] in LOADED_MACHINE_BOUNDS:
        args = (args[0], *LOADED_MACHINE_BOUNDS[args[0]], *args[1:])
    out, err = io.TextIOWrapper(io.BytesIO(), "utf-8"), io.TextIOWrapper(io.BytesIO(), "utf-8")
    saved = sys.stdin, sys.stdout, sys.stderr
    cwd = os.getcwd()
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(input or ""), out, err
    try:
        os.chdir(NEUTRAL_CWD)
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help, usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - a process would print it and exit 1
            traceback.print_exc()
            code = 1
    finally:
        os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = saved
    texts = []
    for stream in (out, err):
        stream.flush()
        texts.append(stream.buffer.getvalue().decode("utf-8", "replace"))
    return subprocess.CompletedProcess(["mcp-matrix", *args], code, *texts)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(params=["stdio", "http"])
def transport(request) -> str:
    return request.param


def installed_tool(name: str) -> str | None:
    """A console script of this environment (on PATH, or beside the running interpreter)."""
    import shutil

    beside = Path(sys.executable).parent / name
    return shutil.which(name) or (str(beside) if beside.exists() else None)


class SharedWork:
    """Real-server work that tests of several modules need with the same inputs, done once a run.

    A session fixture is built once per xdist worker; this is once per test run: the first test
    to ask for a key builds it, holding the key's file lock, in a directory every worker of the
    run sees; the others wait for the lock and read what it left. A build that fails leaves no
    mark, so the next test to ask builds it again (and fails on its own account).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def directory(self, key: str, build: Callable[[Path], None]) -> Path:
        """The directory ``build(directory)`` filled for ``key``, built now if no one has yet."""
        digest = hashlib.sha256(key.encode()).hexdigest()[:10]
        slug = re.sub(r"[^A-Za-z0-9]+", "-", key).strip("-")[:60] + "-" + digest
        done = self.root / slug / ".done"
        with open(self.root / f"{slug}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not done.exists():
                shutil.rmtree(done.parent, ignore_errors=True)
                done.parent.mkdir()
                build(done.parent)
                done.touch()
        return done.parent

    def snapshot_file(self, spec: str) -> Path:
        """A snapshot of a bundled server (stdio), taken once a run from a real subprocess."""

        def take(directory: Path) -> None:
            from mcp_matrix.targets.snapshot import take_snapshot, write_snapshot
            from mcp_matrix.wire.session import Timeouts

            # generous: servers start side by side on 2 loaded cores
            doc = take_snapshot(bundled(spec), timeouts=Timeouts(initialize=60, list=30, call=30))
            assert doc["error"] is None, (spec, doc["error"])
            write_snapshot(doc, directory / "snapshot.json")

        return self.directory(f"snapshot {spec}", take) / "snapshot.json"

    def snapshot(self, spec: str) -> dict:
        """The document of ``snapshot_file(spec)``: a copy of its own for each caller."""
        return read_json(self.snapshot_file(spec))

    def cli(
        self, *args: str, to: str, name: str, timeout: float = 300
    ) -> tuple[subprocess.CompletedProcess, Path]:
        """``mcp-matrix ARGS TO FILE`` through the real CLI, once a run (``to``: the option that
        names the file it writes, ``-o`` or ``--results``; ``name``: the file's): its answer
        (exit code, stdout, stderr) and the file."""

        def run(directory: Path) -> None:
            r = run_cli(*args, to, str(directory / name), timeout=timeout)
            answer = {"returncode": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
            (directory / "answer.json").write_text(json.dumps(answer))

        directory = self.directory(" ".join((*args, to)), run)
        answer = read_json(directory / "answer.json")
        return subprocess.CompletedProcess(["mcp-matrix", *args], **answer), directory / name

    def stale_clients_on_gateway_v2(self) -> tuple[subprocess.CompletedProcess, Path]:
        """Gateway v2 through stale-cache and stale-serialiser, both holding v1's tool list (the
        run's and the pytest plugin's tests compare against it)."""
        baseline = self.snapshot_file("gateway --version 1")
        return self.cli(
            "run",
            "--server",
            "gateway --version 2",
            "--baseline",
            str(baseline),
            "--client",
            "stale-cache",
            "--client",
            "stale-serialiser",
            to="--results",
            name="results.jsonl",
            timeout=180,
        )


@pytest.fixture(scope="session")
def shared_work(tmp_path_factory) -> SharedWork:
    base = tmp_path_factory.getbasetemp()
    # an xdist worker's base is popen-gwN under the run's own directory, which all workers share
    run_root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return SharedWork(run_root / "shared-work")


def bundled(spec: str, transport: str = "stdio") -> Target:
    return Target.bundled(spec, transport=transport)


def read_json(path: Path):
    return json.loads(Path(path).read_text())


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker more than the machine has cores.

    Measured on 2 cores (clean clone, idle, per-test CPU counting children): the suite used
    1,716 CPU-s of the 2,068 core-s its 1,034 s offered; the other 17% was tests waiting on the
    bounded hangs they check (a server that never answers, a deadline, a Ctrl-C). A third
    worker runs other tests meanwhile. Every test's bound is generous enough for the extra
    load (HELPERS: no outcome that depends on load). PYTEST_XDIST_AUTO_NUM_WORKERS still wins.
    """
    import os

    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


# The tests a whole run measured longest, in seconds (clean clone, 2 cores, 3 workers, load 7-10,
# 2026-12-02; `pytest` prints the slowest with each run: pyproject's --durations), less what
# 2026-12-03 cut (the CI-recipe tests then took 92 and 49 s alone at load 4-8: 150 and 80 here
# for a whole run's load; the many-tools fault mode and mypy, warm, left the list). Each worker
# starts with its share of them (longest_first), so none is left running alone at the end.
LONGEST = {
    "tests/test_ci_recipes.py::test_the_workflow_run_as_a_runner_runs_it_shards_merges_reports_and_gates": 150,
    "tests/test_ci_recipes.py::test_the_action_in_one_job_for_a_users_own_server_fails_the_job_on_a_lost_tool": 80,
    "tests/plugin/test_one_run_per_session.py::test_each_clients_calls_reach_the_server_once_whatever_the_worker_count": 73,
    "tests/calibration/test_live_agent_sdks_and_kilo.py::test_the_real_client_does_exactly_what_its_calibrated_profile_predicts[kilo-cli]": 60,
    "tests/test_pytest_plugin.py::test_every_cell_becomes_a_test_with_a_readable_id": 50,
    "tests/calibration/test_live_clients.py::test_the_real_client_does_exactly_what_its_calibrated_profile_predicts[cline-cli]": 45,
    "tests/calibration/test_library_profiles.py::test_the_installed_library_does_what_its_profile_predicts[llamaindex]": 45,
    "tests/test_run_cost.py::test_a_session_per_call_client_sends_each_distinct_call_once_to_a_server_that_starts_empty": 44,
    "tests/calibration/test_live_clients.py::test_the_real_client_does_exactly_what_its_calibrated_profile_predicts[qwen-code]": 43,
    "tests/evolution/test_replay.py::test_a_hundred_thousand_calls_replay_offline_in_bounded_memory": 40,
    "tests/test_pytest_plugin.py::test_cells_fail_exactly_where_the_policy_fails_and_match_the_cli": 36,
    "tests/plugin/test_ids.py::test_a_failed_item_reruns_alone_by_lf_and_by_its_node_id": 35,
}


def longest_first(ids: list[str], seconds: dict[str, float], workers: int) -> list[int]:
    """The order (indices into ``ids``) that starts the long tests first on every worker.

    ``--dist worksteal`` gives each worker one contiguous run of the collection (the first
    ``n // workers`` items, then ``rest // (workers - 1)`` of the rest, ...) and a worker that
    runs dry steals from the end of another's run, never its start. So each long test goes to the
    start of the run whose long tests add up to least so far (longest first), and the other tests
    keep their order around them.
    """
    sizes, left = [], len(ids)
    for i in range(workers):
        sizes.append(left // (workers - i))
        left -= sizes[-1]
    runs: list[list[int]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    long = sorted(
        (i for i, name in enumerate(ids) if name in seconds), key=lambda i: -seconds[ids[i]]
    )
    for i in long:
        run = load.index(min(load))
        runs[run].append(i)
        load[run] += seconds[ids[i]]
    rest = iter(i for i, name in enumerate(ids) if name not in seconds)
    order = []
    for run, size in zip(runs, sizes):
        order += run + [i for _, i in zip(range(size - len(run)), rest)]
    return order + list(rest)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    """Under xdist (each worker collects the same items and orders them alike; pyproject's
    addopts choose worksteal), the longest tests first: see ``longest_first``."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        order = longest_first([item.nodeid for item in items], LONGEST, workers)
        items[:] = [items[i] for i in order]
