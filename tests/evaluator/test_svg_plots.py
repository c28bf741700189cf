"""The report's inline SVG plots: every item is counted once, in the bin numpy puts it in."""

from __future__ import annotations

import re

import numpy as np

from openxiv.evaluator.svg_plots import density_scatter, histogram


def _counts(svg: str) -> list[int]:
    return [int(c) for c in re.findall(r"<title>(?:\[[^)]*\): )?(\d+)(?: items)?</title>", svg)]


def test_histogram_bars_match_numpy() -> None:
    rng = np.random.default_rng(3)
    vals = rng.beta(2, 5, size=997)
    svg = histogram(vals, "iou (per item)", value_range=(0.0, 1.0))
    expected, _ = np.histogram(vals, bins=20, range=(0.0, 1.0))
    assert _counts(svg) == [int(c) for c in expected if c]
    assert svg.startswith('<svg class="plot"') and "iou (per item)" in svg


def test_density_scatter_counts_every_point_once() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.random(5000), rng.random(5000)
    x[:100] = 1.0  # the closed upper edge belongs to the last cell, as in numpy
    svg = density_scatter(x, y, "recall against precision", xlabel="recall", ylabel="precision")
    assert sum(_counts(svg)) == 5000


def test_titles_are_escaped() -> None:
    svg = histogram([0.1, 0.2], "<script>alert(1)</script>")
    assert "<script>" not in svg and "&lt;script&gt;" in svg
