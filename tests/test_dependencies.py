"""Every runtime dependency pyproject.toml declares is imported by the code it installs (mcp_matrix/,
servers/): a declared, never-imported package is weight on every user's install (issue 22.12:
httpx-sse was declared and never imported; the mcp SDK brings it for the bundled servers)."""

from __future__ import annotations

import re

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from tests.conftest import REPO

# The import name of each distribution whose import name is not its own.
IMPORT_NAME = {"pyyaml": "yaml"}


def test_every_declared_dependency_is_imported():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    code = "\n".join(
        p.read_text(encoding="utf-8")
        for folder in ("mcp_matrix", "servers")
        for p in (REPO / folder).rglob("*.py")
    )
    unused = []
    for requirement in project["dependencies"]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()
        module = IMPORT_NAME.get(name, name.replace("-", "_"))
        if not re.search(rf"^\s*(?:import|from)\s+{re.escape(module)}\b", code, re.MULTILINE):
            unused.append(name)
    assert unused == []
