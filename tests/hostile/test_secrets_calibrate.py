"""``calibrate -o`` writes a record of what a client and a server did: a secret on the target's
command line that the client's output (or the server's echo) carries is masked there too, as in
every other output (tests/hostile/test_secrets_echo.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import run_cli
from tests.hostile.test_secrets_echo import ECHO_SERVER, KEY_FLAG, forms

# A client that prints its MCP config (the server's command line, secret included) and fails:
# a failed run's output tail is kept in the record.
LOUD_CLIENT = (
    "import sys\n"
    "config = sys.argv[sys.argv.index('--mcp-config') + 1]\n"
    "sys.stderr.write(open(config).read())\n"
    "sys.exit(1)\n"
)


def test_a_calibration_record_written_to_a_file_masks_the_targets_secrets(tmp_path):
    client = tmp_path / "loud.py"
    client.write_text(LOUD_CLIENT)
    out = tmp_path / "record.json"
    r = run_cli(
        "calibrate",
        "--client", "claude-code",
        "--client-command", f"{sys.executable} {client}",
        "--stdio", f"{sys.executable} {ECHO_SERVER} --key {KEY_FLAG}",
        "-o", str(out),
        timeout=300,
    )  # fmt: skip
    assert r.returncode == 3, r.stderr[-3000:]  # the client never asked its model
    text = Path(out).read_text(encoding="utf-8")
    assert "--key" in text, "the client's output (the server's command) is in the record"
    assert not [f for f in forms(KEY_FLAG) if f in text + r.stdout + r.stderr]
