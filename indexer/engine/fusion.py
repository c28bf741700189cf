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

from openxiv.corpus.settings.modes import FUSION_METHODS

__all__ = [
    "FUSION_METHODS",
    "Side",
    "fuse",
    "fuse_with_extra",
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


def top_sorted(rows: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` of `sort_desc` (``rows`` distinct) without sorting the rest: every row
    scoring at least the k-th best (ties included) is sorted, then cut."""
    if k <= 0:
        return rows[:0], scores[:0]
    if rows.size > k:
        kth = np.partition(scores, scores.size - k)[scores.size - k]
        keep = scores >= kth
        rows, scores = rows[keep], scores[keep]
    r, s = sort_desc(rows, scores)
    return r[:k], s[:k]


def _accumulate(
    rows: list[np.ndarray], contrib: list[np.ndarray], plain_head: int | None = None
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray] | None]:
    """Fused list of all the contributions and, with ``plain_head``, the first ``plain_head`` of the
    list fused from all but the last one, from the same `np.unique` pass: `np.bincount` adds each
    row's contributions in input order, so a prefix of the input sums exactly as it would alone."""
    if not rows:
        empty = np.zeros(0, np.int64), np.zeros(0, np.float64)
        return empty, (empty if plain_head is not None else None)
    all_rows = np.concatenate(rows).astype(np.int64)
    all_contrib = np.concatenate(contrib).astype(np.float64)
    uniq, inv = np.unique(all_rows, return_inverse=True)
    total = np.bincount(inv, weights=all_contrib, minlength=uniq.size)
    if plain_head is None:
        return sort_desc(uniq, total), None
    n = all_rows.size - rows[-1].size
    plain = np.bincount(inv[:n], weights=all_contrib[:n], minlength=uniq.size)
    present = np.bincount(inv[:n], minlength=uniq.size) > 0
    return sort_desc(uniq, total), top_sorted(uniq[present], plain[present], plain_head)


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


def _rrf_contrib(s: Side, k: int) -> np.ndarray:
    return s.weight / (k + np.arange(1, s.rows.size + 1, dtype=np.float64))


def rrf(sides: Sequence[Side], k: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Reciprocal rank fusion of the sides (weights per side)."""
    return _accumulate([s.rows for s in sides], [_rrf_contrib(s, k) for s in sides])[0]


def _minmax_contrib(s: Side) -> np.ndarray:
    x = s.scores.astype(np.float64)
    lo, hi = float(x.min()), float(x.max())
    norm = (x - lo) / (hi - lo) if hi > lo else np.ones_like(x)
    return s.weight * norm


def weighted_minmax(sides: Sequence[Side]) -> tuple[np.ndarray, np.ndarray]:
    """Sum of weighted min-max normalised scores."""
    present = [s for s in sides if s.rows.size]
    return _accumulate([s.rows for s in present], [_minmax_contrib(s) for s in present])[0]


def _zscore_totals(present: Sequence[Side], all_rows: np.ndarray) -> list[np.ndarray]:
    """The running total over ``all_rows`` after each side of ``present``, in order."""
    total = np.zeros(all_rows.size, np.float64)
    out = []
    for s in present:
        x = s.scores.astype(np.float64)
        sd = float(x.std())
        z = (x - float(x.mean())) / sd if sd > 0 else np.zeros_like(x)
        floor = float(z.min())
        contrib = np.full(all_rows.size, s.weight * floor)
        contrib[np.searchsorted(all_rows, s.rows.astype(np.int64))] = s.weight * z
        total = total + contrib
        out.append(total)
    return out


def weighted_zscore(sides: Sequence[Side]) -> tuple[np.ndarray, np.ndarray]:
    """Sum of weighted z-scores; a paper missing from a side scores that side's minimum z."""
    present = [s for s in sides if s.rows.size]
    if not present:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    all_rows = np.unique(np.concatenate([s.rows for s in present]).astype(np.int64))
    return sort_desc(all_rows, _zscore_totals(present, all_rows)[-1])


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


def fuse_with_extra(
    sides: Sequence[Side], extra: Side, method: str, rrf_k: int, head: int
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``fuse([*sides, extra])`` and the first ``head`` rows (and scores) of ``fuse(sides)``, equal
    to the last float to what the two calls give, from one pass over the candidates: the list with
    pseudo-relevance feedback and the head that a confident query keeps from the one without
    (`openxiv.indexer.engine.prf.keep_head`). Every method adds a paper's contributions side by side in the
    order given, so the sum without ``extra`` is a running total the sum with it passes through."""
    if len(sides) < 2:  # a single side is not fused (its own scores): nothing to share
        fed = fuse([*sides, extra], method, rrf_k)
        plain = fuse(sides, method, rrf_k) if sides else (np.zeros(0, np.int64), np.zeros(0, np.float64))
        return fed, (plain[0][:head], plain[1][:head])
    if method == "zscore":
        present = [s for s in sides if s.rows.size]
        if not present:
            return weighted_zscore([extra]), (np.zeros(0, np.int64), np.zeros(0, np.float64))
        every = [*present, extra] if extra.rows.size else present
        all_rows = np.unique(np.concatenate([s.rows for s in every]).astype(np.int64))
        totals = _zscore_totals(every, all_rows)
        plain_total = totals[len(present) - 1]
        known = np.isin(all_rows, np.concatenate([s.rows for s in present]))
        return sort_desc(all_rows, totals[-1]), top_sorted(all_rows[known], plain_total[known], head)
    if method in ("rrf", "weighted"):
        used = list(sides) if method == "rrf" else [s for s in sides if s.rows.size]
        contrib = _rrf_contrib if method == "rrf" else (lambda s, _k: _minmax_contrib(s))
        if method == "weighted" and not extra.rows.size:
            plain = _accumulate([s.rows for s in used], [contrib(s, rrf_k) for s in used])[0]
            return plain, (plain[0][:head], plain[1][:head])
        every = [*used, extra]
        fed, plain_head = _accumulate([s.rows for s in every], [contrib(s, rrf_k) for s in every], head)
        assert plain_head is not None
        return fed, plain_head
    raise ValueError(f"unknown fusion {method!r}: expected one of {', '.join(FUSION_METHODS)}")
