"""Calibration: run real clients against a fake model endpoint and a recording tap, and
compare what they did with what their bundled profile predicts (docs/calibration.md)."""
