"""The metric registry: every metric is a small pure function with its formula in the docstring.

Set metrics take a predicted set ``P`` and a gold set ``G`` already reduced to comparable keys (see
`openxiv.evaluator.matching`); most callers pass the counts ``hits = |P∩G|``, ``n_pred = |P|`` and
``n_gold = |G|`` so that title alignment (which is not plain set intersection) fits the same formulas.

Empty-set conventions (AutoResearchBench's wide scorer for IoU/P/R; the same rule for F1 and accuracy):

=========  =========  ====  =========  ======  ====  ========
 \\|G\\|     \\|P\\|     IoU   precision  recall  F1    accuracy
=========  =========  ====  =========  ======  ====  ========
 0          0          1     1          1       1     1
 0          > 0        0     0          0       0     0
 > 0        0          0     0          0       0     0
=========  =========  ====  =========  ======  ====  ========

Ranked metrics take the ranked list of document keys (best first, duplicates already removed) and the
set of judged relevant keys. Gains are binary, the discount is log2(rank + 1), the ideal DCG is over all
judged relevant documents (capped at k), and average precision divides by the number of ALL judged
relevant documents, as trec_eval does. A query with no relevant documents scores 0 on every ranked metric.

Pass metrics take the per-pass scores of one item: ``best_of_k`` is the exact expectation of the max
over a uniformly random k-subset of the n passes, ``pass_at_k`` the unbiased estimator of "at least one
of k passes is correct", ``mean_at_k`` the mean over passes.

Array forms. A metric may also have ``array_fn`` (set with `vectorised`, beside its definition): the
same metric over numpy arrays, one value per element (set metrics: arrays of hits, |P|, |G|) or per
row (pass metrics: an ``(items, n)`` matrix of the items' n pass values). Each gives exactly the
floats of the scalar function, bit for bit (tests/evaluator/test_metrics.py), so scoring 10,000 items
at once prints the same digits as scoring them one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from math import comb
from typing import Any

import numpy as np

__all__ = [
    "METRICS",
    "Metric",
    "accuracy",
    "average_precision",
    "best_of_k",
    "f1",
    "get_metric",
    "iou",
    "mean_at_k",
    "mrr",
    "ndcg_at_k",
    "pass_at_k",
    "precision",
    "precision_at_k",
    "recall",
    "recall_at_k",
    "set_counts",
    "success_at_k",
]


@dataclass(frozen=True)
class Metric:
    name: str
    kind: str  # "set", "ranked" or "passes"
    fn: Callable[..., float]
    formula: str
    array_fn: Callable[..., np.ndarray] | None = None  # the same metric over arrays (module docstring)


METRICS: dict[str, Metric] = {}


def register(name: str, kind: str) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Register ``fn`` under ``name``; its docstring's first line is the formula shown in reports."""

    def deco(fn: Callable[..., float]) -> Callable[..., float]:
        if name in METRICS:
            raise ValueError(f"metric {name!r} registered twice")
        doc = (fn.__doc__ or "").strip().splitlines()
        METRICS[name] = Metric(name, kind, fn, doc[0] if doc else "")
        return fn

    return deco


def vectorised(name: str) -> Callable[[Callable[..., np.ndarray]], Callable[..., np.ndarray]]:
    """Attach ``fn`` as the array form of the registered metric ``name`` (same values, bit for bit)."""

    def deco(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        METRICS[name] = replace(get_metric(name), array_fn=fn)
        return fn

    return deco


def get_metric(name: str) -> Metric:
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(sorted(METRICS))}") from None


def set_counts(pred: Iterable[Any], gold: Iterable[Any]) -> tuple[int, int, int]:
    """``(hits, n_pred, n_gold)`` of two collections compared as sets."""
    p, g = set(pred), set(gold)
    return len(p & g), len(p), len(g)


# ---------------------------------------------------------------------------------------- set metrics


@register("iou", "set")
def iou(hits: int, n_pred: int, n_gold: int) -> float:
    """IoU = |P∩G| / |P∪G| = hits / (|P| + |G| - hits); 1 if both are empty."""
    if n_pred == 0 and n_gold == 0:
        return 1.0
    return hits / (n_pred + n_gold - hits)


def _ratio(num: np.ndarray, den: np.ndarray, when_zero: np.ndarray | float) -> np.ndarray:
    """``num / den`` (int arrays, divided in float64 as Python divides ints), ``when_zero`` where den = 0."""
    zero = den == 0
    return np.where(zero, when_zero, num / np.where(zero, 1, den))


@vectorised("iou")
def iou_array(hits: np.ndarray, n_pred: np.ndarray, n_gold: np.ndarray) -> np.ndarray:
    """`iou` of each element (|P∪G| = 0 only when both are empty)."""
    return _ratio(hits, n_pred + n_gold - hits, 1.0)


@register("precision", "set")
def precision(hits: int, n_pred: int, n_gold: int) -> float:
    """precision = |P∩G| / |P|; 1 if both are empty, 0 if only P is empty."""
    if n_pred == 0:
        return 1.0 if n_gold == 0 else 0.0
    return hits / n_pred


@vectorised("precision")
def precision_array(hits: np.ndarray, n_pred: np.ndarray, n_gold: np.ndarray) -> np.ndarray:
    """`precision` of each element."""
    return _ratio(hits, n_pred, np.where(n_gold == 0, 1.0, 0.0))


@register("recall", "set")
def recall(hits: int, n_pred: int, n_gold: int) -> float:
    """recall = |P∩G| / |G|; 1 if both are empty, 0 if only G is empty."""
    if n_gold == 0:
        return 1.0 if n_pred == 0 else 0.0
    return hits / n_gold


@vectorised("recall")
def recall_array(hits: np.ndarray, n_pred: np.ndarray, n_gold: np.ndarray) -> np.ndarray:
    """`recall` of each element."""
    return _ratio(hits, n_gold, np.where(n_pred == 0, 1.0, 0.0))


@register("f1", "set")
def f1(hits: int, n_pred: int, n_gold: int) -> float:
    """F1 = 2·P·R / (P + R) = 2·hits / (|P| + |G|); 1 if both are empty, 0 if P + R = 0."""
    if n_pred == 0 and n_gold == 0:
        return 1.0
    return 2.0 * hits / (n_pred + n_gold)


@vectorised("f1")
def f1_array(hits: np.ndarray, n_pred: np.ndarray, n_gold: np.ndarray) -> np.ndarray:
    """`f1` of each element (|P| + |G| = 0 only when both are empty)."""
    return _ratio(2.0 * hits, n_pred + n_gold, 1.0)


@register("accuracy", "set")
def accuracy(hits: int, n_pred: int, n_gold: int) -> float:
    """accuracy = 1[P = G] = 1[hits = |P| = |G|] (exact set match; 1 if both are empty)."""
    return 1.0 if hits == n_pred == n_gold else 0.0


@vectorised("accuracy")
def accuracy_array(hits: np.ndarray, n_pred: np.ndarray, n_gold: np.ndarray) -> np.ndarray:
    """`accuracy` of each element."""
    return np.where((hits == n_pred) & (n_pred == n_gold), 1.0, 0.0)


# ------------------------------------------------------------------------------------- ranked metrics


def _hits(ranked: Sequence[str], relevant: set[str], k: int | None) -> np.ndarray:
    top = ranked if k is None else ranked[:k]
    return np.fromiter((d in relevant for d in top), dtype=bool, count=len(top))


@register("recall@k", "ranked")
def recall_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """R@k = |top_k ∩ Rel| / |Rel|; 0 if Rel is empty."""
    if not relevant:
        return 0.0
    return float(_hits(ranked, relevant, k).sum()) / len(relevant)


@register("precision@k", "ranked")
def precision_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """P@k = |top_k ∩ Rel| / k (a run shorter than k still divides by k, as trec_eval P_k)."""
    if not relevant or k <= 0:
        return 0.0
    return float(_hits(ranked, relevant, k).sum()) / k


@register("ndcg@k", "ranked")
def ndcg_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """nDCG@k = Σ_{r≤k} rel_r / log2(r+1) / Σ_{r≤min(k,|Rel|)} 1 / log2(r+1), binary rel_r."""
    if not relevant:
        return 0.0
    h = _hits(ranked, relevant, k)
    disc = 1.0 / np.log2(np.arange(2, max(k, len(h)) + 2))
    dcg = float(disc[: len(h)][h].sum())
    idcg = float(disc[: min(k, len(relevant))].sum())
    return dcg / idcg


@register("mrr", "ranked")
def mrr(ranked: Sequence[str], relevant: set[str], k: int | None = None) -> float:
    """RR(@k) = 1 / rank of the first relevant document within the top k (all if k is None); else 0."""
    h = _hits(ranked, relevant, k)
    first = np.flatnonzero(h)
    return 1.0 / float(first[0] + 1) if first.size else 0.0


@register("map", "ranked")
def average_precision(ranked: Sequence[str], relevant: set[str], k: int | None = None) -> float:
    """AP = Σ_{r: rel_r} P@r / |Rel| over the (top-k) ranking, |Rel| = ALL judged relevant; 0 if none."""
    if not relevant:
        return 0.0
    h = _hits(ranked, relevant, k)
    if not h.any():
        return 0.0
    ranks = np.flatnonzero(h) + 1
    return float((np.arange(1, ranks.size + 1) / ranks).sum()) / len(relevant)


@register("success@k", "ranked")
def success_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """S@k = 1 if any relevant document is in the top k, else 0."""
    return 1.0 if _hits(ranked, relevant, k).any() else 0.0


# --------------------------------------------------------------------------------------- pass metrics


@register("best_of_k", "passes")
def best_of_k(values: Sequence[float], k: int) -> float:
    """E[max of a random k-subset] = Σ_i v_(i) · C(i-1, k-1) / C(n, k), v ascending, i = 1..n.

    Exact (no sampling); requires 1 <= k <= n. E.g. v = [0.1, 0.5, 0.2, 0.0]: k=1 -> 0.2, k=2 -> 1/3,
    k=4 -> 0.5.
    """
    n = len(values)
    if not 1 <= k <= n:
        raise ValueError(f"best_of_k needs 1 <= k <= n (k={k}, n={n})")
    v = np.sort(np.asarray(values, dtype=np.float64))
    return float(v @ _best_of_k_weights(n, k))


@lru_cache(maxsize=256)
def _best_of_k_weights(n: int, k: int) -> np.ndarray:
    """C(i-1, k-1) / C(n, k) for i = 1..n: the chance that the i-th smallest of n is a k-subset's max."""
    w = np.array([comb(i - 1, k - 1) for i in range(1, n + 1)], dtype=np.float64) / comb(n, k)
    w.flags.writeable = False
    return w


@vectorised("best_of_k")
def best_of_k_rows(values: np.ndarray, k: int) -> np.ndarray:
    """`best_of_k` of each row of an ``(items, n)`` matrix.

    Rows are sorted together, and each row is then dotted with the weights as a 1-D vector, as
    `best_of_k` does: one matrix-vector product sums in another order and differs in the last bit.
    """
    m, n = values.shape
    if not 1 <= k <= n:
        raise ValueError(f"best_of_k needs 1 <= k <= n (k={k}, n={n})")
    rows = np.sort(values, axis=1)
    w = _best_of_k_weights(n, k)
    return np.fromiter((row @ w for row in rows), dtype=np.float64, count=m)


@register("pass@k", "passes")
def pass_at_k(correct: Sequence[float], k: int) -> float:
    """pass@k = 1 - C(n - c, k) / C(n, k), c = passes scoring 1 (unbiased; = any-pass when k = n)."""
    n = len(correct)
    if not 1 <= k <= n:
        raise ValueError(f"pass_at_k needs 1 <= k <= n (k={k}, n={n})")
    c = sum(1 for x in correct if x >= 1.0)
    return 1.0 - comb(n - c, k) / comb(n, k)


@vectorised("pass@k")
def pass_at_k_rows(correct: np.ndarray, k: int) -> np.ndarray:
    """`pass_at_k` of each row of an ``(items, n)`` matrix: its value for every c = 0..n, looked up."""
    n = correct.shape[1]
    by_c = np.array([pass_at_k([1.0] * c + [0.0] * (n - c), k) for c in range(n + 1)])
    return by_c[np.count_nonzero(correct >= 1.0, axis=1)]


@register("mean@k", "passes")
def mean_at_k(values: Sequence[float]) -> float:
    """mean@k = Σ_j v_j / n over the n passes of the item; 0 if there are none."""
    total = 0.0
    for v in values:  # left to right, as sum() of floats did before Python 3.12 (and mean_at_k_rows does)
        total += v
    return total / len(values) if len(values) else 0.0


@vectorised("mean@k")
def mean_at_k_rows(values: np.ndarray) -> np.ndarray:
    """`mean_at_k` of each row of an ``(items, n)`` matrix, summed left to right as the scalar does."""
    m, n = values.shape
    if n == 0:
        return np.zeros(m)
    total = np.zeros(m)
    for j in range(n):
        total = total + values[:, j]
    return total / n
