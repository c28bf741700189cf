"""Small inline SVG plots for the HTML report: per-item histograms and a binned precision/recall map.

The report used to draw these with matplotlib, which cost more CPU than scoring 10,000 items (import,
layout, PNG encoding). The report only needs bars and dots on fixed axes, so they are written here as SVG
with numpy doing the binning: the page stays self-contained (no image files, no CDN) and scales with the
browser's zoom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import numpy as np

__all__ = ["density_scatter", "histogram"]

_W, _H = 320, 200  # plot area in SVG user units
_L, _B, _T, _R = 44, 30, 22, 8  # margins: left (y labels), bottom (x labels), top (title), right
_FONT = 'font-family="sans-serif" font-size="10"'


def _frame(title: str, xlabel: str, ylabel: str, body: str, xticks: str, yticks: str) -> str:
    width, height = _L + _W + _R, _T + _H + _B
    return (
        f'<svg class="plot" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
        f'<text x="{_L + _W / 2}" y="14" text-anchor="middle" {_FONT} font-size="11">{escape(title)}</text>'
        f'<g transform="translate({_L},{_T})">'
        f'<rect width="{_W}" height="{_H}" fill="none" stroke="#999"/>{body}{xticks}{yticks}</g>'
        f'<text x="{_L + _W / 2}" y="{height - 2}" text-anchor="middle" {_FONT}>{escape(xlabel)}</text>'
        f'<text transform="translate(10,{_T + _H / 2}) rotate(-90)" text-anchor="middle" {_FONT}>'
        f"{escape(ylabel)}</text></svg>"
    )


def _nice(value: float) -> str:
    return f"{value:.3g}"


def _xticks(lo: float, hi: float) -> str:
    out = []
    for v in np.linspace(lo, hi, 5):
        x = (v - lo) / (hi - lo) * _W if hi > lo else 0.0
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_H}" y2="{_H + 4}" stroke="#999"/>'
            f'<text x="{x:.1f}" y="{_H + 14}" text-anchor="middle" {_FONT}>{_nice(float(v))}</text>'
        )
    return "".join(out)


def _count_axis(top: float) -> tuple[float, float]:
    """A count axis of whole, round steps (1, 2 or 5 x 10^k) reaching at least ``top``: (end, step)."""
    raw = max(top / 4, 1.0)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return step * math.ceil(top / step) if top > 0 else step, step


def _yticks(top: float, step: float | None = None) -> str:
    out = []
    values = np.arange(0.0, top + step / 2, step) if step else np.linspace(0.0, top, 5)
    for v in values:
        y = _H - (v / top * _H if top > 0 else 0.0)
        out.append(
            f'<line x1="-4" x2="0" y1="{y:.1f}" y2="{y:.1f}" stroke="#999"/>'
            f'<text x="-6" y="{y + 3:.1f}" text-anchor="end" {_FONT}>{int(v) if step else _nice(float(v))}</text>'
        )
    return "".join(out)


def histogram(
    values: Sequence[float] | np.ndarray,
    title: str,
    *,
    bins: int = 20,
    value_range: tuple[float, float] | None = None,
    ylabel: str = "items",
    color: str = "#3b6ea8",
) -> str:
    """An SVG histogram of ``values`` (counts per equal-width bin, as ``numpy.histogram``)."""
    v = np.asarray(values, dtype=np.float64)
    counts, edges = np.histogram(v, bins=bins, range=value_range)
    lo, hi = float(edges[0]), float(edges[-1])
    top, step = _count_axis(float(counts.max()) if counts.size else 0.0)
    bar_w = _W / bins
    bars = []
    for k, c in enumerate(counts):
        if c == 0:
            continue
        h = c / top * _H
        bars.append(
            f'<rect x="{k * bar_w:.1f}" y="{_H - h:.1f}" width="{max(bar_w - 1, 0.5):.1f}" height="{h:.1f}" '
            f'fill="{color}"><title>[{_nice(float(edges[k]))}, {_nice(float(edges[k + 1]))}): {int(c)}</title></rect>'
        )
    return _frame(title, "", ylabel, "".join(bars), _xticks(lo, hi), _yticks(top, step))


def density_scatter(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    title: str,
    *,
    xlabel: str,
    ylabel: str,
    cells: int = 40,
    color: str = "#b0453b",
) -> str:
    """Points of [0, 1]² binned into ``cells``² squares, shaded by how many items fall in each.

    Thousands of items share a handful of (recall, precision) values, so overplotted dots would hide
    where the mass is; a shaded cell shows it and keeps the SVG small at any item count.
    """
    xs = np.clip(np.asarray(x, dtype=np.float64), 0.0, 1.0)
    ys = np.clip(np.asarray(y, dtype=np.float64), 0.0, 1.0)
    counts, _, _ = np.histogram2d(xs, ys, bins=cells, range=((0.0, 1.0), (0.0, 1.0)))
    top = float(np.log1p(counts.max())) if counts.size and counts.max() > 0 else 1.0
    size = _W / cells
    sq = []
    for i, j in zip(*np.nonzero(counts), strict=True):
        c = counts[i, j]
        alpha = 0.15 + 0.85 * float(np.log1p(c)) / top
        sq.append(
            f'<rect x="{i * size:.1f}" y="{_H - (j + 1) * size * _H / _W:.1f}" width="{size:.1f}" '
            f'height="{size * _H / _W:.1f}" fill="{color}" fill-opacity="{alpha:.2f}">'
            f"<title>{int(c)} items</title></rect>"
        )
    return _frame(title, xlabel, ylabel, "".join(sq), _xticks(0.0, 1.0), _yticks(1.0))
