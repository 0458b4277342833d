"""A profile's calibration status: its latest record's client version, date and agreement."""

from __future__ import annotations

from mcp_matrix.calibrate import probe, record
from mcp_matrix.calibrate.drift import agreement, record_drift
from mcp_matrix.profiles.model import Profile


def calibration_status(profile: Profile) -> dict | None:
    """``{"version", "date", "agree", "cells", "record"}`` for the newest record of ``profile``, or None."""
    found = record.latest_record(profile.name)
    if found is None:
        return None
    path, doc = found
    agree, total = agreement(record_drift(profile, doc, probe.PROBE_SETS))
    return {
        "version": doc.get("client_version"),
        "date": doc.get("date"),
        "agree": agree,
        "cells": total,
        "record": f"{path.parent.name}/{path.name}",
    }


def status_text(status: dict | None) -> str:
    """``2.1.332 2026-12-01 100%`` or ``-`` (not calibrated)."""
    if status is None:
        return "-"
    pct = f"{100 * status['agree'] / status['cells']:.0f}%" if status["cells"] else "n/a"
    return f"{status['version']} {status['date']} {pct}"
