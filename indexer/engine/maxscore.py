"""Exact top-k BM25 by MaxScore: the rows and float32 scores of scoring every row and cutting, from
fewer postings.

A query's BM25 score of a row is a sum over the query's terms of one posting each (``weight ·
bm25(t, d)``, the weight 1 for a plain query, the relevance model's for feedback's expanded query).
Scoring every row (`openxiv.indexer.engine.sparse.SparseIndex.scores`) walks every posting of every
term; a topic query holds a word or two that half the corpus has, so most of that walk is spent on
rows that cannot enter the top ``k``. MaxScore (Turtle & Flood, 1995; the dynamic-pruning family
Lucene's ``MaxScoreBulkScorer`` belongs to) bounds each term's contribution by its largest posting
(``term_max``, one float per vocabulary term, written by the build) and keeps a heap of the ``k``
best rows so far. Once the heap's ``k``-th score passes the sum of the smallest bounds, those terms
are *non-essential*: a row holding none of the others cannot enter, so the walk goes row by row over
the essential terms' postings only and looks a row up in the non-essential ones (a galloping search
in their sorted rows) while its bound still reaches the heap.

Exact, to the bit and in tie order:

- a row that is scored gets the float32 sum of its contributions *in the query's term order*, each
  the same float32 product the exhaustive kernels make, so its score is the exhaustive score's bits;
- rows come in ascending order and a row enters a full heap only by beating its ``k``-th score
  strictly, which is the exhaustive cut's rule (ties by ascending row): a later row never displaces an
  equal earlier one, and a row whose bound is at most the ``k``-th score cannot enter;
- bounds are taken in float64 times ``1 + T·2⁻²⁰`` (T terms), above any rounding a float32 sum of T
  non-negative terms can add (at most about ``T·2⁻²⁴`` relative), so a skipped row could not have
  entered.

The tests compare the rows, their order and the score bits with the exhaustive cut on the dev
queries and on built ties (tests/indexer/engine/test_maxscore.py).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["mark_matches", "score_rows", "term_maxima", "top_k_pruned"]


def term_maxima(data: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Each term's largest posting (float32, 0 for a term without postings): the bound MaxScore takes."""
    n_terms = int(indptr.size) - 1
    out = np.zeros(max(n_terms, 0), dtype=np.float32)
    if n_terms <= 0 or int(indptr[-1]) == 0:
        return out
    ptr = np.asarray(indptr, dtype=np.int64)
    nonempty = np.flatnonzero(ptr[1:] > ptr[:-1])
    out[nonempty] = np.maximum.reduceat(np.asarray(data), ptr[:-1][nonempty])
    return out


@numba.njit(nogil=True)
def _seek(indices, p, e, d):  # pragma: no cover - compiled
    """The first position in ``p:e`` whose row is at least ``d`` (galloping, then bisection)."""
    if p >= e or indices[p] >= d:
        return p
    lo, step = p, 1
    hi = lo + 1
    while hi < e and indices[hi] < d:
        lo = hi
        step *= 2
        hi = lo + step
    if hi > e:
        hi = e
    lo += 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < d:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(nogil=True)
def _sift_down(hs, hr, size, i):  # pragma: no cover - compiled
    """Restore the heap below ``i``: the root is the worst entry (lowest score; on ties the highest row)."""
    while True:
        left = 2 * i + 1
        if left >= size:
            return
        w = left
        right = left + 1
        if right < size and (hs[right] < hs[w] or (hs[right] == hs[w] and hr[right] > hr[w])):
            w = right
        if hs[w] < hs[i] or (hs[w] == hs[i] and hr[w] > hr[i]):
            hs[i], hs[w] = hs[w], hs[i]
            hr[i], hr[w] = hr[w], hr[i]
            i = w
        else:
            return


@numba.njit(nogil=True)
def _sift_up(hs, hr, i):  # pragma: no cover - compiled
    while i > 0:
        parent = (i - 1) >> 1
        if hs[i] < hs[parent] or (hs[i] == hs[parent] and hr[i] > hr[parent]):
            hs[i], hs[parent] = hs[parent], hs[i]
            hr[i], hr[parent] = hr[parent], hr[i]
            i = parent
        else:
            return


WINDOW = 8192
"""Rows per window: the essential terms' postings of a window are summed into a buffer this long
(32 KiB of float32, in the core's cache), as a pass over every row would, before any row is looked up."""


@numba.njit(nogil=True)
def _heap_offer(hs, hr, size, k, s, d):  # pragma: no cover - compiled
    """Offer row ``d`` (rows come ascending) with score ``s`` to the heap of ``size``; the new size."""
    if size < k:
        hs[size] = s
        hr[size] = d
        _sift_up(hs, hr, size)
        return size + 1
    if s > hs[0]:  # strictly: an equal score of a later row loses the tie
        hs[0] = s
        hr[0] = d
        _sift_down(hs, hr, size, 0)
    return size


@numba.njit(nogil=True)
def _plan(indptr, lists, weights, term_max):  # pragma: no cover - compiled
    """Each term's postings (``pos``, ``end``), the terms by ascending bound (``order``), the bound
    of the ``m`` smallest together with the rounding slack (``prefix[m]``), and the slack factor."""
    n = lists.size
    pos = np.empty(n, np.int64)
    end = np.empty(n, np.int64)
    ub = np.empty(n, np.float64)
    for i in range(n):
        t = lists[i]
        pos[i] = indptr[t]
        end[i] = indptr[t + 1]
        ub[i] = np.float64(weights[i] * term_max[t])  # the float32 product bounds every posting's
    order = np.argsort(ub)
    slack = 1.0 + n * 2.0**-20
    prefix = np.zeros(n + 1, np.float64)
    for m in range(n):
        prefix[m + 1] = prefix[m] + ub[order[m]]
    for m in range(n + 1):
        prefix[m] *= slack
    return pos, end, order, prefix, slack


@numba.njit(nogil=True)
def _walk(data, indices, weights, order, pos, end, cur, n_ne, lo, hi, acc):  # pragma: no cover
    """The essential terms' postings of rows ``lo:hi`` summed into ``acc`` (a bound, in any order);
    ``cur`` keeps where each term's window starts, for the exact scores."""
    for m in range(n_ne, order.size):
        i = order[m]
        p, e, w = pos[i], end[i], weights[i]
        cur[i] = p
        while p < e and indices[p] < hi:
            acc[indices[p] - lo] += w * data[p]
            p += 1
        pos[i] = p


@numba.njit(nogil=True)
def _probe(
    data, indices, weights, order, pos, end, contrib, prefix, n_ne, d, bound, slack, theta, full
):  # pragma: no cover
    """Row ``d`` looked up in the non-essential terms, largest bound first (their weights into
    ``contrib``); false as soon as its bound falls to ``theta`` with the heap ``full``."""
    for m in range(n_ne - 1, -1, -1):
        i = order[m]
        p = _seek(indices, pos[i], end[i], d)
        pos[i] = p
        if p < end[i] and indices[p] == d:
            c = weights[i] * data[p]
            contrib[i] = c
            bound += c * slack
        if full and bound + prefix[m] <= theta:
            return False
    return True


@numba.njit(nogil=True)
def _exact(data, indices, weights, essential, cur, pos, contrib, d):  # pragma: no cover - compiled
    """Row ``d``'s score: the float32 sum in the query's term order, the exhaustive kernel's bits."""
    s = np.float32(0.0)
    for i in range(essential.size):
        if essential[i]:
            p = _seek(indices, cur[i], pos[i], d)
            cur[i] = p
            if p < pos[i] and indices[p] == d:
                s = np.float32(s + weights[i] * data[p])
        else:
            s = np.float32(s + contrib[i])
    return s


@numba.njit(nogil=True)
def _maxscore(
    data, indptr, indices, lists, weights, term_max, mask, use_mask, k, n_docs, hs, hr
):  # pragma: no cover
    """The heap (``hs`` scores, ``hr`` rows) of the best ``k`` rows; returns its size. See the module
    docstring for the rule; ``mask``: only rows where it is true score (when ``use_mask``).

    Window by window: the essential terms' postings in the window are summed into ``acc`` (`_walk`);
    a row whose sum plus the non-essential terms' bound passes the heap's ``k``-th score is looked
    up in the non-essential terms (`_probe`) and, if it may still enter, scored exactly (`_exact`)."""
    n = lists.size
    pos, end, order, prefix, slack = _plan(indptr, lists, weights, term_max)
    cur = np.empty(n, np.int64)
    essential = np.ones(n, np.bool_)
    contrib = np.zeros(n, np.float32)
    acc = np.zeros(WINDOW, np.float32)
    size, theta, n_ne = 0, 0.0, 0  # order[:n_ne] are the non-essential terms
    for lo in range(0, n_docs, WINDOW):
        while size == k and n_ne < n and prefix[n_ne + 1] <= theta:
            essential[order[n_ne]] = False
            n_ne += 1
        if n_ne == n:  # every term together cannot reach the k-th score
            break
        hi = min(lo + WINDOW, n_docs)
        _walk(data, indices, weights, order, pos, end, cur, n_ne, lo, hi, acc)
        for r in range(hi - lo):
            a = acc[r]
            if a == 0:
                continue
            acc[r] = 0
            d = lo + r
            if use_mask and not mask[d]:
                continue
            bound = a * slack
            if size == k and bound + prefix[n_ne] <= theta:
                continue
            if _probe(
                data,
                indices,
                weights,
                order,
                pos,
                end,
                contrib,
                prefix,
                n_ne,
                d,
                bound,
                slack,
                theta,
                size == k,
            ):
                s = _exact(data, indices, weights, essential, cur, pos, contrib, d)
                size = _heap_offer(hs, hr, size, k, s, d)
                if size == k:
                    theta = np.float64(hs[0])
            for m in range(n_ne):
                contrib[order[m]] = 0
    return size


def top_k_pruned(
    data: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    term_max: np.ndarray,
    n_docs: int,
    token_ids: np.ndarray,
    k: int,
    weights: np.ndarray | None = None,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``top_k_rows(scores, k)`` for the scores ``Σ_i weights[i] · bm25(token_ids[i], d)`` (weights 1
    when ``None``; a repeated token counts each time), 0 outside ``mask``: rows (int64) best first,
    ties by ascending row, and their float32 scores, from the postings MaxScore cannot skip."""
    lists = np.asarray(token_ids, dtype=np.int64)
    if k <= 0 or lists.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    w = np.ones(lists.size, np.float32) if weights is None else np.asarray(weights, dtype=np.float32)
    use_mask = mask is not None
    m = np.asarray(mask, dtype=np.bool_) if mask is not None else np.zeros(1, np.bool_)
    hs = np.empty(k, np.float32)
    hr = np.empty(k, np.int64)
    size = _maxscore(data, indptr, indices, lists, w, term_max, m, use_mask, k, n_docs, hs, hr)
    hs, hr = hs[:size], hr[:size]
    order = np.lexsort((hr, -hs))
    return hr[order], hs[order]


@numba.njit(nogil=True)
def _mark(indptr, indices, lists, out):  # pragma: no cover - compiled
    for t in lists:
        for j in range(indptr[t], indptr[t + 1]):
            out[indices[j]] = True


def mark_matches(indptr: np.ndarray, indices: np.ndarray, n_docs: int, token_ids: np.ndarray) -> np.ndarray:
    """The rows holding at least one of the tokens (a pass over their rows, no score)."""
    out = np.zeros(n_docs, dtype=np.bool_)
    if token_ids.size and n_docs:
        _mark(indptr, indices, np.asarray(token_ids, dtype=np.int64), out)
    return out


@numba.njit(nogil=True)
def _score_rows(data, indptr, indices, lists, weights, rows, out):  # pragma: no cover - compiled
    for r in range(rows.size):
        d = rows[r]
        s = np.float32(0.0)
        for i in range(lists.size):
            t = lists[i]
            p = _seek(indices, indptr[t], indptr[t + 1], d)
            if p < indptr[t + 1] and indices[p] == d:
                s = np.float32(s + weights[i] * data[p])
        out[r] = s


def score_rows(
    data: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    token_ids: np.ndarray,
    rows: np.ndarray,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """The exhaustive float32 scores of ``rows`` alone (a search in each term's rows per row)."""
    lists = np.asarray(token_ids, dtype=np.int64)
    r = np.asarray(rows, dtype=np.int64)
    out = np.zeros(r.size, np.float32)
    if lists.size and r.size:
        w = np.ones(lists.size, np.float32) if weights is None else np.asarray(weights, dtype=np.float32)
        _score_rows(data, indptr, indices, lists, w, r, out)
    return out
