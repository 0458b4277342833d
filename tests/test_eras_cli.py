"""The CLI across protocol eras: snapshots record which eras a server answers, and the run says
which clients cannot even start a session, and why (real servers, the real CLI)."""

from __future__ import annotations

import json

from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.run.results import read_events
from mcp_matrix.simulate.session import session_finding
from mcp_matrix.targets.snapshot import Snapshot, load_snapshot
from tests.conftest import installed_tool, read_json


def session_broken(results) -> dict[str, str]:
    """profile -> the session finding's message, for every client whose session never starts."""
    out = {}
    for e in read_events(results):
        if e.get("event") == "discovery" and e["verdict"] == "session-broken":
            last = e["findings"][-1]
            if last["behaviour"] == "handshake":
                out[e["profile"]] = last["message"]
    return out


def test_a_snapshot_of_a_modern_only_server_lists_its_tools_in_the_2026_era_and_records_the_refusals(
    cli, tmp_path
):
    out = tmp_path / "m.json"
    r = cli("snapshot", "--server", "memory --protocol modern-only", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = read_json(out)
    assert (doc["version"], doc["era"], doc["protocolVersion"]) == (2, "modern", "2026-07-28")
    assert len(doc["tools"]) == 7 and doc["error"] is None
    answers = doc["eras"]["handshake"]["answers"]
    assert {a["requested"] for a in answers} == {"2025-11-25", "2025-06-18"}
    assert all(a["error"]["code"] == -32022 for a in answers)
    modern = doc["eras"]["modern"]
    assert modern["supportedVersions"] == ["2026-07-28"] and modern["toolsTtlMs"] == 0


def test_a_snapshot_of_a_legacy_only_server_over_legacy_sse_records_that_it_does_not_discover(
    cli, tmp_path
):
    out = tmp_path / "l.json"
    r = cli(
        "snapshot",
        "--server",
        "memory --protocol legacy-only",
        "--server-transport",
        "sse",
        "-o",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    doc = read_json(out)
    assert (
        doc["era"] == "handshake" and doc["target"]["transport"] == "sse" and len(doc["tools"]) == 7
    )
    assert doc["eras"]["modern"]["error"]["code"] == -32601
    assert [a["protocolVersion"] for a in doc["eras"]["handshake"]["answers"]] == [
        "2025-11-25",
        "2025-06-18",
    ]


def test_a_version_1_snapshot_still_loads_and_judges_no_session(tmp_path):
    old = tmp_path / "v1.json"
    old.write_text(
        json.dumps(
            {
                "format": "mcp-matrix.snapshot",
                "version": 1,
                "tools": [{"page": 0, "tool": {"name": "t", "inputSchema": {"type": "object"}}}],
            }
        )
    )
    snap = load_snapshot(old)
    assert snap.eras is None
    profile = load_profiles()["claude-code-legacy"]
    assert session_finding(profile, snap) is None


def test_run_on_a_modern_only_server_names_every_handshake_only_client_and_its_fix(cli, tmp_path):
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--server",
        "memory --protocol modern-only",
        "--no-auto-cases",
        "--results",
        str(results),
        "--client",
        "claude-code-278",
        "--client",
        "claude-code-legacy",
        "--client",
        "gemini-cli",
        "--client",
        "python-sdk",
        "--client",
        "claude-code-stdio-negotiation",
        "--client",
        "claude-code",
        timeout=300,
    )
    assert r.returncode in (0, 1), r.stderr + r.stdout
    broken = session_broken(results)
    # 2.1.278 (claude-code-278) was recorded sending initialize only; 2.1.332 (claude-code) probes server/discover.
    assert set(broken) == {
        "claude-code-278",
        "claude-code-legacy",
        "gemini-cli",
        "claude-code-stdio-negotiation",
    }
    assert "2025-06-18" in broken["gemini-cli"] and "2026-07-28" in broken["gemini-cli"]
    assert "support both eras" in broken["gemini-cli"]
    assert "after a successful server/discover" in broken["claude-code-stdio-negotiation"]
    assert "the session never starts" in r.stdout and "blast radius: session" in r.stdout


def test_run_on_a_legacy_only_server_names_only_the_modern_only_client(cli, tmp_path):
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--server",
        "memory --protocol legacy-only",
        "--no-auto-cases",
        "--results",
        str(results),
        "--client",
        "python-sdk",
        "--client",
        "python-sdk-modern",
        "--client",
        "cursor",
        timeout=300,
    )
    assert r.returncode in (0, 1), r.stderr + r.stdout
    broken = session_broken(results)
    assert list(broken) == ["python-sdk-modern"]
    assert (
        "-32601" in broken["python-sdk-modern"]
        and "support both eras" in broken["python-sdk-modern"]
    )


def test_a_server_that_answers_another_version_loses_the_clients_that_do_not_accept_it():
    # Gemini CLI 0.61's bundled SDK asks for 2025-06-18 and does not know 2025-11-25.
    eras = {
        "handshake": {
            "answers": [
                {
                    "requested": "2025-06-18",
                    "protocolVersion": "2025-11-25",
                    "error": None,
                    "wireError": None,
                }
            ]
        },
        "modern": {"answered": False, "error": None},
    }
    snap = Snapshot({"tools": [], "eras": eras})
    profiles = load_profiles()
    finding = session_finding(profiles["gemini-cli"], snap)
    assert finding is not None and finding.code == "version-rejected"
    assert (
        "2025-06-18" in finding.message
        and "2025-11-25" in finding.message
        and "echo" in finding.message
    )
    assert session_finding(profiles["cursor"], snap) is None  # the TS SDK 1.x accepts 2025-11-25


def test_a_third_party_pypi_server_answers_both_eras(cli, tmp_path):
    exe = installed_tool("mcp-server-time")
    out = tmp_path / "t.json"
    r = cli("snapshot", "--stdio", f"{exe} --local-timezone UTC", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = read_json(out)
    assert doc["era"] == "handshake" and doc["eras"]["modern"]["supportedVersions"] == [
        "2026-07-28"
    ]
    assert doc["eras"]["modern"]["toolsCacheScope"] in ("private", "public")
