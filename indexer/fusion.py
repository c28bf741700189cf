"""Fusion of ranked candidate lists into one list of papers (pure functions over numpy arrays).

Every side is a list of paper rows, best first, with its scores. Rows are paper row numbers, which
follow arxiv_id order, so "ties by ascending row" is "ties by ascending arxiv_id".

- Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009), with per-side weights:
  ``score(d) = Σ_s w_s / (k + rank_s(d))``, ``rank`` 1-based, sides where ``d`` is absent add 0.
- Weighted min-max: ``score(d) = Σ_s w_s · (x_s(d) − min_s) / (max_s − min_s)`` over each side's
  candidate list (a side whose scores are all equal contributes ``w_s`` to each of its candidates).
- Weighted z-score (CombSUM over standardised scores, Montague & Aslam, CIKM 2001):
  ``score(d) = Σ_s w_s · (x_s(d) − μ_s) / σ_s`` with the mean and standard deviation of each side's
  candidate list; a paper absent from a side gets that side's lowest value. A side whose best hit
  stands far out of its own distribution (an exact sentence matched by BM25) outweighs a side
  whose scores are flat (the dense side on the same query), which min-max scaling cannot see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from openxiv.indexer.backend import FUSION_METHODS

__all__ = [
    "FUSION_METHODS",
    "Side",
    "fuse",
    "merge_max",
    "rrf",
    "sort_desc",
    "weighted_minmax",
    "weighted_zscore",
]


@dataclass(frozen=True)
class Side:
    name: str
    rows: np.ndarray
    """Paper rows, best first, each at most once."""
    scores: np.ndarray
    weight: float = 1.0


def sort_desc(rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order by descending score, ties by ascending row."""
    order = np.lexsort((rows, -scores))
    return rows[order], scores[order]


def _accumulate(rows: list[np.ndarray], contrib: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    all_rows = np.concatenate(rows).astype(np.int64)
    all_contrib = np.concatenate(contrib).astype(np.float64)
    uniq, inv = np.unique(all_rows, return_inverse=True)
    total = np.bincount(inv, weights=all_contrib, minlength=uniq.size)
    return sort_desc(uniq, total)


def merge_max(name: str, sides: Sequence[Side], weight: float = 1.0) -> Side:
    """Sides on one score scale (BM25 of paper text and of passages; cosines of one model) as one
    side: a paper scores its best unit, ``score(d) = max_s x_s(d)``. Fusing them by rank instead
    would count a paper with full text twice and a paper without it once."""
    if len(sides) == 1:
        return Side(name, sides[0].rows.astype(np.int64), sides[0].scores.astype(np.float64), weight)
    rows = np.concatenate([s.rows for s in sides]).astype(np.int64)
    scores = np.concatenate([s.scores for s in sides]).astype(np.float64)
    rows, scores = sort_desc(rows, scores)
    _, first = np.unique(rows, return_index=True)
    first = np.sort(first)
    return Side(name, rows[first], scores[first], weight)


def rrf(sides: Sequence[Side], k: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Reciprocal rank fusion of the sides (weights per side)."""
    rows, contrib = [], []
    for s in sides:
        rows.append(s.rows)
        contrib.append(s.weight / (k + np.arange(1, s.rows.size + 1, dtype=np.float64)))
    return _accumulate(rows, contrib)


def weighted_minmax(sides: Sequence[Side]) -> tuple[np.ndarray, np.ndarray]:
    """Sum of weighted min-max normalised scores."""
    rows, contrib = [], []
    for s in sides:
        if s.rows.size == 0:
            continue
        x = s.scores.astype(np.float64)
        lo, hi = float(x.min()), float(x.max())
        norm = (x - lo) / (hi - lo) if hi > lo else np.ones_like(x)
        rows.append(s.rows)
        contrib.append(s.weight * norm)
    return _accumulate(rows, contrib)


def weighted_zscore(sides: Sequence[Side]) -> tuple[np.ndarray, np.ndarray]:
    """Sum of weighted z-scores; a paper missing from a side scores that side's minimum z."""
    present = [s for s in sides if s.rows.size]
    if not present:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    all_rows = np.unique(np.concatenate([s.rows for s in present]).astype(np.int64))
    total = np.zeros(all_rows.size, np.float64)
    for s in present:
        x = s.scores.astype(np.float64)
        sd = float(x.std())
        z = (x - float(x.mean())) / sd if sd > 0 else np.zeros_like(x)
        floor = float(z.min())
        contrib = np.full(all_rows.size, s.weight * floor)
        contrib[np.searchsorted(all_rows, s.rows.astype(np.int64))] = s.weight * z
        total += contrib
    return sort_desc(all_rows, total)


def fuse(sides: Sequence[Side], method: str, rrf_k: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """One fused list; a single side keeps its own scores and order."""
    if len(sides) == 1:
        return sort_desc(sides[0].rows.astype(np.int64), sides[0].scores.astype(np.float64))
    if method == "rrf":
        return rrf(sides, rrf_k)
    if method == "weighted":
        return weighted_minmax(sides)
    if method == "zscore":
        return weighted_zscore(sides)
    raise ValueError(f"unknown fusion {method!r}: expected one of {', '.join(FUSION_METHODS)}")
