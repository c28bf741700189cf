"""Moved to `openxiv.evaluator.demo` (the whole evaluation loop, driven through the CLI); this shim
keeps old imports working."""

from openxiv.evaluator.demo import CALIBRATION_QUERIES, DEMO_QUERIES, _openxiv, _step, demo

__all__ = ["CALIBRATION_QUERIES", "DEMO_QUERIES", "_openxiv", "_step", "demo"]
