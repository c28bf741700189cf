"""The best ``k`` rows of a score vector over every paper (or passage), exact at the cut.

Every side cuts a score per row down to its ``k`` best: BM25 over the papers, the passages collapsed
to papers, the feedback list. A topic query matches nearly every paper (one common word does it),
so at millions of papers a cut that looks at every positive score (``flatnonzero``, then a
partition of millions of floats) costs more than the BM25 scoring that made them.

`top_k_rows` therefore guesses a threshold from a strided sample of the scores, collects the rows
scoring at least that in one compiled pass, and cuts those. The guess only saves work; the answer
does not depend on it. When at least ``k`` rows score at least the threshold, the ``k``-th best
score is at least the threshold too, so every row of the answer (and every row tied with the
``k``-th) is among the collected rows, which come in row order like ``flatnonzero``'s. When fewer
than ``k`` rows do, the guess was too high and the whole vector is cut as before. Small vectors are
always cut whole.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["SAMPLED_FROM", "top_k_rows"]

SAMPLED_FROM = 1 << 16
"""Vectors at least this long (and ``k`` small beside them) are cut through a sampled threshold."""
_SAMPLE = 1 << 14
"""About this many scores make the sample."""
_MARGIN = 3.0
"""The threshold is the sample's score at ``_MARGIN`` times the place the ``k``-th is expected at,
so the rows it collects are about ``_MARGIN · k``, and seldom fewer than ``k``."""


def top_k_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows with a positive score, best first, at most ``k``; ties by ascending row number.

    Exact at the cut: when several rows tie with the k-th score, the lowest rows are kept.
    """
    n = int(scores.shape[0])
    if k > 0 and n >= SAMPLED_FROM and k * 64 <= n:  # k small beside n: the sample can place its k-th
        found = _above_sampled(scores, k)
        if found is not None:
            return _cut(found, scores[found], k)
    cand = np.flatnonzero(scores > 0)
    return _cut(cand, scores[cand], k)


def _cut(cand: np.ndarray, vals: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` of candidate rows (ascending) with their scores, best first, ties by row."""
    if k <= 0 or cand.size == 0:
        return cand[:0], vals[:0]
    if cand.size > k:
        kth = np.partition(vals, cand.size - k)[cand.size - k]
        above = vals > kth
        ties = np.flatnonzero(vals == kth)[: k - int(above.sum())]
        keep = np.sort(np.concatenate([np.flatnonzero(above), ties]))
        cand, vals = cand[keep], vals[keep]
    order = np.lexsort((cand, -vals))
    return cand[order], vals[order]


def _above_sampled(scores: np.ndarray, k: int) -> np.ndarray | None:
    """The rows (ascending) scoring at least a threshold guessed from a sample and above 0, when
    there are at least ``k`` of them; ``None`` when the guess was too high (or nothing positive was
    sampled), so the caller cuts the whole vector."""
    n = int(scores.shape[0])
    stride = max(1, n // _SAMPLE)
    sample = np.asarray(scores[::stride])
    sample = sample[sample > 0]
    place = int(np.ceil(_MARGIN * k / stride)) + 1
    if sample.size <= place:
        return None
    threshold = np.partition(sample, sample.size - place)[sample.size - place]
    out = np.empty(max(6 * k, 1024), dtype=np.int64)
    count = _collect(scores, threshold, out)
    if count < k:
        return None
    if count > out.size:  # the guess was low: a second pass into room for every row it passes
        out = np.empty(count, dtype=np.int64)
        _collect(scores, threshold, out)
    return out[:count]


@numba.njit(nogil=True)
def _collect(scores, threshold, out):  # pragma: no cover - compiled
    """Writes the rows with ``threshold <= score`` and ``score > 0`` into ``out`` (as many as fit)
    in row order; returns how many rows pass."""
    count = 0
    room = out.shape[0]
    for i in range(scores.shape[0]):
        v = scores[i]
        if v >= threshold and v > 0:
            if count < room:
                out[count] = i
            count += 1
    return count
