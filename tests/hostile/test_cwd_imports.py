"""A bundled server never imports from the folder the user runs mcp-matrix in.

``python -m`` puts the current directory first on ``sys.path``: a ``typing_extensions.py`` or
``jsonschema.py`` lying in that folder (a checkout, a downloads folder) was executed by every
bundled server and by the warm template. Each hostile file here writes a marker when imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_matrix.targets.warm_start import WARM_ENV

HOSTILE = "from pathlib import Path\nPath(__file__).with_suffix('.ran').write_text('executed')\n"
SHADOWED = ("typing_extensions", "jsonschema", "pydantic", "anyio", "mcp")


def mcp_matrix() -> str:
    """The installed console script (``python -m mcp_matrix`` would itself import from the cwd)."""
    script = Path(sys.executable).with_name("mcp-matrix")
    assert script.is_file(), script
    return str(script)


@pytest.mark.parametrize(
    ("warm", "transport"),
    [("1", "stdio"), ("0", "stdio"), ("1", "http")],
    ids=["warm", "cold", "http"],
)
def test_a_bundled_server_never_runs_modules_from_the_users_folder(tmp_path, warm, transport):
    folder = tmp_path / "downloads"
    folder.mkdir()
    for name in SHADOWED:
        (folder / f"{name}.py").write_text(HOSTILE, encoding="utf-8")
    r = subprocess.run(
        [mcp_matrix(), "run", "--server", "memory", "--server-transport", transport]
        + ["--client", "claude-code", "--results", str(tmp_path / "r.jsonl")],
        cwd=folder,
        env={**os.environ, WARM_ENV: warm},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert '{"called":' in (tmp_path / "r.jsonl").read_text(), "the run made no call"
    assert sorted(p.name for p in folder.glob("*.ran")) == []
