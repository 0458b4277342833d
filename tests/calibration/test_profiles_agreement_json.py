"""`mcp-matrix profiles --json` prints each profile's agreement with its latest calibration record.

The agreement tests/calibration/test_calibrated_profiles.py asserts was printed nowhere but as a
percentage in the `profiles` table: the JSON gives the cells agreeing and compared, the record
and the client version, counted by the same `record_drift`.
"""

from __future__ import annotations

import json

from mcp_matrix.calibrate import probe, record
from mcp_matrix.calibrate.drift import agreement, judge_record
from mcp_matrix.profiles.loader import load_profiles
from tests.conftest import run_cli_in_process


def listed() -> dict[str, dict]:
    done = run_cli_in_process("profiles", "--json")
    assert done.returncode == 0, done.stderr
    return {row["name"]: row for row in json.loads(done.stdout)}


def test_profiles_json_gives_each_calibrated_profiles_agreement_with_its_latest_record():
    rows = listed()
    profiles = load_profiles()
    calibrated = 0
    for name, row in rows.items():
        found = record.latest_record(name)
        if found is None:
            assert row["calibration"] is None, name
            continue
        path, doc = found
        judged = judge_record(profiles[name], doc, probe.PROBE_SETS)  # record_drift's cells
        agree, total = agreement(list(judged.cells))
        got = row["calibration"]
        assert got["record"] == f"clients/calibrations/{name}/{path.name}"
        assert got["client_version"] == doc["client_version"] and got["date"] == doc["date"]
        assert (got["cells_agreeing"], got["cells_compared"]) == (agree, total), name
        assert got["probe_sets_unjudged"] == len(judged.unjudged), name
        calibrated += 1
    assert calibrated >= 30  # 36 profiles have a record today
    assert rows["fast-agent-010"]["calibration"]["record"].endswith("fast-agent-010/0.10.48.json")
    assert rows["zed"]["calibration"] is None  # cannot be run here: no record
