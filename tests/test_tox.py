"""tox: one environment per bundled client profile under the label ``matrix``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from mcp_matrix.profiles.loader import load_profiles

REPO = Path(__file__).resolve().parent.parent


def test_the_matrix_label_lists_one_environment_per_bundled_profile():
    tox = shutil.which("tox") or str(Path(sys.executable).parent / "tox")
    r = subprocess.run(
        [tox, "l", "-m", "matrix"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    envs = sorted(
        line.split()[0] for line in r.stdout.splitlines() if line.strip() and "->" in line
    )
    assert envs == sorted(p.name for p in load_profiles().values() if not p.abstract)
