"""A profile's calibration status: its latest record's client version, date and agreement."""

from __future__ import annotations

from mcp_matrix.calibrate import probe, record
from mcp_matrix.calibrate.drift import agreement, judge_record
from mcp_matrix.profiles.model import Profile


def calibration_status(profile: Profile) -> dict | None:
    """``{"version", "date", "agree", "cells", "unjudged", "record"}`` for the newest record of
    ``profile``, or None (``unjudged``: probe sets with no model request and no word why)."""
    found = record.latest_record(profile.name)
    if found is None:
        return None
    path, doc = found
    judged = judge_record(profile, doc, probe.PROBE_SETS)
    agree, total = agreement(list(judged.cells))
    return {
        "version": doc.get("client_version"),
        "date": doc.get("date"),
        "agree": agree,
        "cells": total,
        "unjudged": len(judged.unjudged),
        "record": f"{path.parent.name}/{path.name}",
    }


def status_text(status: dict | None) -> str:
    """``2.1.332 2026-12-01 100%`` (``, 1 set unjudged`` after it when so) or ``-`` (not calibrated)."""
    if status is None:
        return "-"
    pct = f"{100 * status['agree'] / status['cells']:.0f}%" if status["cells"] else "n/a"
    unjudged = status.get("unjudged", 0)
    left = f", {unjudged} set{'s' if unjudged > 1 else ''} unjudged" if unjudged else ""
    return f"{status['version']} {status['date']} {pct}{left}"
