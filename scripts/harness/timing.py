"""Timing helpers: the one percentile function every benchmark uses, and peak memory."""

from __future__ import annotations

import statistics
import threading
from collections.abc import Iterable

import psutil


def percentile(values: Iterable[float], p: float) -> float:
    """The ``p``-th percentile (0-100) of ``values``, linearly interpolated between the two nearest
    ranks (numpy's default, ``np.percentile``); NaN when there are none."""
    data = sorted(values)
    if not data:
        return float("nan")
    k = (len(data) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (k - lo)


def pcts(ms: list[float]) -> dict[str, float]:
    """p50, p95 and mean of ``ms``."""
    return {"p50": percentile(ms, 50), "p95": percentile(ms, 95), "mean": statistics.fmean(ms)}


class PeakRSS:
    """Peak resident memory of this process while the block runs (sampled every 0.2 s), bytes."""

    def __init__(self) -> None:
        self.proc = psutil.Process()
        self.peak = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakRSS:
        self.peak = self.proc.memory_info().rss
        self._t.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)
