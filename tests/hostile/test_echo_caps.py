"""What a server says about itself is echoed within a bound (issue 24).

A server announcing 100,000 protocol versions (1.5 MB) made every cell that names them carry
the whole list: results 144 MB, md 140 MB, html 71 MB, terminal 1.8 MB. The session now keeps
each such field to a bounded prefix that says how much there was (``mcp_matrix.wire.echo
.bounded``), keeping every protocol version mcp-matrix speaks wherever it stands in a list, so
no verdict changes.
"""

from __future__ import annotations

import pytest

from mcp_matrix.wire.echo import ECHO_ITEMS, ECHO_STRING, bounded, bounded_fields
from tests.hostile.conftest import FORMATS, assert_no_crash, matrix_run, tiny_server
from tests.hostile.test_early_response import ECHO

MANY = [f"2099-{i:06d}" for i in range(100_000)]  # 1.2 MB of versions nobody speaks
HUGE = "v" * 1_000_000
SERVERS = {
    # server/discover names 100,000 versions, 2026-07-28 last; 1 MB serverInfo and instructions
    "discover": {
        "server_info": {"name": "tiny", "version": HUGE, "title": HUGE},
        "discover": {
            "supportedVersions": [*MANY, "2026-07-28"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tiny", "version": HUGE},
            "instructions": HUGE,
        },
    },
    # initialize at 2025-06-18 refused with -32022 naming 100,000 versions: one cell per profile
    "refusal": {
        "refuse": ["2025-06-18"],
        "initialize_error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": [*MANY, "2025-11-25"], "requested": "2025-06-18"},
        },
    },
}


@pytest.mark.parametrize("server", SERVERS)
def test_a_server_announcing_100000_versions_leaves_every_output_small(tmp_path, server):
    config = {"tools": [ECHO], "call_text": "ok", **SERVERS[server]}
    run = matrix_run(tmp_path, "--stdio", tiny_server(tmp_path, config), timeout=300)
    assert_no_crash(run)
    assert run.finished["measured"] is True
    sizes = {name: (tmp_path / name).stat().st_size for name in [*FORMATS.values(), "r.jsonl"]}
    assert all(size < 1_000_000 for size in sizes.values()), sizes  # were 61-90 MB each
    assert len(run.stdout) < 100_000  # was 1.8 MB
    results = (tmp_path / "r.jsonl").read_text()
    assert "… (100,001 items in all)" in results  # the count survives the cut
    verdicts = {(e["profile"], e["tool"]): e["verdict"] for e in run.of("discovery")}
    if server == "discover":  # 2026-07-28 stood last: still found, so the modern client works
        assert verdicts[("python-sdk-modern", "echo")] == "visible"
        assert run.snapshot["serverInfo"]["version"].endswith("(1,000,000 characters in all)")
    else:  # the clients that ask for 2025-06-18 are refused, as before; the others are not
        assert verdicts[("claude-desktop", "echo")] == "session-broken"
        assert verdicts[("claude-code", "echo")] == "visible"


def test_bounded_keeps_what_is_within_its_bounds_and_says_how_much_there_was():
    small = {"name": "tiny", "version": "1.0", "icons": [{"src": "a.png"}], "n": 10**5000}
    assert bounded_fields(small) == small
    cut = bounded("x" * (ECHO_STRING + 1))
    assert cut == "x" * ECHO_STRING + f"… ({ECHO_STRING + 1:,} characters in all)"
    versions = bounded([*MANY, "2025-06-18", "not-a-version"], "supportedVersions")
    assert versions[:ECHO_ITEMS] == MANY[:ECHO_ITEMS]
    assert versions[ECHO_ITEMS:] == ["2025-06-18", "… (100,002 items in all)"]
    deep: object = "end"
    for _ in range(1000):
        deep = [deep]
    assert "nested deeper than" in str(bounded(deep))
