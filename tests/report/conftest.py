"""Fixtures for the writers: hand-built events, snapshot files, a bounded headless Chromium."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from tests.report import events as ev

HERE = Path(__file__).parent
SNAPSHOTS = HERE / "snapshots"
DATA = HERE / "data"
UPDATE = os.environ.get("UPDATE_SNAPSHOTS") == "1"
CHROMIUM_TIMEOUT = 90


def normalise(text: str) -> str:
    """Times, durations, ports and paths vary between runs; the report's shape does not."""
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?", "<time>", text)
    text = re.sub(
        r'("?(?:elapsed_ms|initialize_ms|tools_list_ms|total_ms)"?\s*:\s*)[\d.]+', r"\1<ms>", text
    )
    text = re.sub(r"(127\.0\.0\.1|localhost):\d+", r"\1:<port>", text)
    text = re.sub(r"/tmp/[^\s\"'<>]*", "<tmp>", text)
    return text.replace(str(Path.cwd()), "<cwd>")


def assert_snapshot(name: str, text: str) -> None:
    """Compare with tests/report/snapshots/NAME; UPDATE_SNAPSHOTS=1 rewrites it instead."""
    path = SNAPSHOTS / name
    text = normalise(text)
    if UPDATE:
        path.write_text(text, encoding="utf-8", newline="\n")
        return
    if not path.exists():
        pytest.fail(
            f"no snapshot {path}; run UPDATE_SNAPSHOTS=1 pytest tests/report to write it, then review it"
        )
    expected = path.read_text(encoding="utf-8")
    assert text == expected, (
        f"{name} differs from its snapshot; if the change is intended, run UPDATE_SNAPSHOTS=1"
    )


@pytest.fixture
def stable_version(monkeypatch):
    """The report names the mcp-matrix that wrote it; pin it so snapshots survive a release."""
    from mcp_matrix.report import model

    monkeypatch.setattr(model, "__version__", "0.0.0-test")


@pytest.fixture
def full_events() -> list[dict]:
    return ev.full_run()


@pytest.fixture
def results_file(tmp_path, full_events) -> Path:
    return ev.write_jsonl(full_events, tmp_path / "results.jsonl")


def render_terminal(events: list[dict], details: bool = True) -> str:
    from mcp_matrix.report.terminal import write_terminal

    buf = io.StringIO()
    console = Console(
        file=buf,
        width=120,
        color_system=None,
        force_terminal=False,
        highlight=False,
        soft_wrap=True,
    )
    write_terminal(events, console, details=details)
    return buf.getvalue()


def chromium() -> str:
    path = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if path is None:
        pytest.fail(
            "headless Chromium is needed for the HTML report tests and is not installed: "
            "apt-get install -y chromium (CI installs it in its set-up)"
        )
    return path


def dump_dom(html_file: Path, profile_dir: Path, fragment: str = "") -> str:
    """The DOM after the page's scripts ran, as headless Chromium serialises it."""
    cmd = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile_dir}",
        "--dump-dom",
        html_file.resolve().as_uri() + fragment,
    ]
    done = subprocess.run(
        cmd, check=False, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT
    )
    assert done.returncode == 0, f"chromium failed ({done.returncode}): {done.stderr[-2000:]}"
    return done.stdout
