"""The weekly `calibrate --latest` job covers every harness recipe, or names why not.

A recipe left out of .github/workflows/calibrate-latest.yml never hears of its client's newer
releases, silently. Each recipe is in the job's matrix or in EXCLUDED with its reason, and each
recipe in the matrix gets an interpreter its client supports (fast-agent 0.10: Python >= 3.13).
Static: the workflow read as YAML, the recipes as calibrate reads them; nothing installed.
"""

from __future__ import annotations

import yaml
from packaging.specifiers import SpecifierSet

from mcp_matrix.calibrate.harness import load_recipe, recipe_names
from mcp_matrix.calibrate.releases import client_package
from tests.conftest import REPO

LATEST = REPO / ".github" / "workflows" / "calibrate-latest.yml"
DEFAULT_PYTHON = "3.12"  # the job's own actions/setup-python step, which mcp-matrix runs on

# Recipes left out of the weekly job, each with why. Every one pins an older release of a client
# whose newest release another recipe in the job already calibrates (same package): run with
# --latest it would calibrate that same newest release against a profile whose version range
# ends before it, a drift by construction.
EXCLUDED = {
    "claude-code-278": "Claude Code's 2.1.278 era; claude-code covers the newest release",
    "claude-code-278-deferred": "the 2.1.278 era with ToolSearch; claude-code-deferred covers it",
    "claude-code-legacy": "Claude Code before 2.1.144; claude-code covers the newest release",
    "claude-code-legacy-deferred": "the legacy era with ToolSearch; claude-code-deferred covers it",
    "claude-code-legacy-early": "Claude Code 2.1.47; claude-code covers the newest release",
    "fast-agent": "fast-agent's 0.2 line; fast-agent-010 covers the newest release",
}


def job() -> dict:
    return yaml.safe_load(LATEST.read_text(encoding="utf-8"))["jobs"]["calibrate"]


def matrix_clients() -> list[str]:
    return list(job()["strategy"]["matrix"]["client"])


def test_every_harness_recipe_is_in_the_weekly_job_or_excluded_with_a_reason():
    clients = matrix_clients()
    assert len(clients) == len(set(clients)), "a recipe is listed twice"
    assert not set(clients) & set(EXCLUDED), "a recipe is both run and excluded"
    missing = set(recipe_names()) - set(clients) - set(EXCLUDED)
    assert not missing, f"recipes neither in calibrate-latest.yml nor in EXCLUDED: {missing}"
    assert set(EXCLUDED) <= set(recipe_names()), "EXCLUDED names a recipe that does not exist"


def test_each_excluded_recipe_is_an_older_pin_of_a_client_the_job_calibrates():
    packages = {client_package(load_recipe(name)) for name in matrix_clients()}
    for name, reason in EXCLUDED.items():
        assert reason, name
        assert client_package(load_recipe(name)) in packages, (
            f"{name}: no recipe in the weekly job calibrates its package's newest release"
        )
    opening = LATEST.read_text(encoding="utf-8").split("\nname:", 1)[0]
    for name in EXCLUDED:  # the workflow says which recipes it leaves out
        assert name in opening, f"calibrate-latest.yml's opening comment does not name {name}"


def test_each_recipe_in_the_weekly_job_gets_a_python_its_client_supports():
    steps = job()["steps"]
    setups = [s for s in steps if s.get("uses", "").startswith("actions/setup-python@")]
    assert [s["with"]["python-version"] for s in setups] == ["${{ matrix.python }}", "3.12"]
    assert setups[0].get("if") == "matrix.python"
    extra = {e["client"]: str(e["python"]) for e in job()["strategy"]["matrix"].get("include", [])}
    for name in matrix_clients():
        spec = load_recipe(name).python
        if not spec:
            continue
        available = [DEFAULT_PYTHON, *([extra[name]] if name in extra else [])]
        assert any(SpecifierSet(spec).contains(f"{v}.0") for v in available), (
            f"{name} needs Python {spec}; the job gives it {available}"
        )
    assert "fast-agent-010" in extra  # the one recipe today whose client needs a newer Python
