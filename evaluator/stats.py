"""Seeded statistics over per-item score vectors: bootstrap CIs, paired tests, Holm, breakdowns.

Everything is deterministic for a given ``seed`` (numpy ``default_rng``) and vectorised: one matrix of
bootstrap resample counts is drawn per item set and shared by every metric defined on that set, so the
means of all resamples are a single matrix product.

* `bootstrap_ci`: percentile bootstrap, CI = (q_{α/2}, q_{1-α/2}) of the B resampled means.
* `randomization_test`: paired sign-flip test of H0 "A and B are exchangeable per item";
  statistic |mean(d)|, d = a - b; p = (#{|mean(s·d)| >= |mean(d)|} + 1) / (B + 1) with random signs s.
  When 2**n <= B every sign vector is enumerated instead and p = #{...} / 2**n (exact).
* `paired_bootstrap_test`: resample items, CI of mean(d); two-sided p from the bootstrap distribution
  shifted to the null, p = (#{|mean*(d) - mean(d)| >= |mean(d)|} + 1) / (B + 1).
* `holm`: Holm step-down adjusted p-values, p_(i) -> max_{j<=i} min(1, (m - j + 1) p_(j)).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from openxiv.evaluator.report import Aggregate, Comparison, ComparisonRow

__all__ = [
    "aggregate_rows",
    "bootstrap_ci",
    "bootstrap_means",
    "breakdown",
    "compare_rows",
    "holm",
    "paired_bootstrap_test",
    "randomization_test",
    "win_tie_loss",
]

DEFAULT_RESAMPLES = 1000
_TIE = 1e-12


# Four: a report draws one matrix for all items and one per breakdown group (deep, wide), and a
# second submission scored for --compare reuses them all, as does the paired test on all items.
@lru_cache(maxsize=4)
def _resample_weights(n: int, n_boot: int, seed: int) -> np.ndarray:
    """``(n_boot, n)`` float matrix: how often each item is drawn in each resample (rows sum to n)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    # Counted row by row into the float matrix: one bincount of all n_boot * n draws over n_boot * n
    # bins misses the cache and faults in three matrix-sized temporaries (BENCHMARKS.md, «Evaluator»);
    # the counts are the same.
    w = np.empty((n_boot, n), dtype=np.float64)
    for r in range(n_boot):
        w[r] = np.bincount(idx[r], minlength=n)
    w.flags.writeable = False  # cached and shared: every metric on n items with this seed reuses it
    return w


def bootstrap_means(values: np.ndarray, n_boot: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Means of ``n_boot`` bootstrap resamples; ``values`` is ``(n,)`` or ``(n, m)`` (m metrics at once)."""
    v = np.asarray(values, dtype=np.float64)
    n = v.shape[0]
    if n == 0:
        return np.full((n_boot, *v.shape[1:]), np.nan)
    return (_resample_weights(n, n_boot, seed) @ v) / n


def bootstrap_ci(
    values: Sequence[float] | np.ndarray, n_boot: int = DEFAULT_RESAMPLES, seed: int = 0, alpha: float = 0.05
) -> tuple[float, float]:
    """Percentile bootstrap (1 - alpha) CI of the mean; ``(nan, nan)`` for no values."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return (float("nan"), float("nan"))
    means = bootstrap_means(v, n_boot, seed)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def _column(rows: Sequence[dict[str, Any]], metric: str) -> np.ndarray:
    nan = np.nan
    return np.fromiter(
        (nan if (v := r.get(metric)) is None else v for r in rows), dtype=np.float64, count=len(rows)
    )


def aggregate_rows(
    rows: Sequence[dict[str, Any]],
    metrics: Sequence[str],
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    alpha: float = 0.05,
) -> dict[str, Aggregate]:
    """Mean and bootstrap CI of each metric over the rows where it is defined (not ``None``/NaN).

    Metrics defined on the same set of rows share one resample matrix (one matrix product for all).
    """
    out: dict[str, Aggregate] = {}
    if not metrics:
        return out
    matrix = np.column_stack([_column(rows, m) for m in metrics]) if rows else np.empty((0, len(metrics)))
    groups: dict[bytes, list[int]] = {}
    for j in range(len(metrics)):
        mask = ~np.isnan(matrix[:, j])
        groups.setdefault(np.packbits(mask).tobytes(), []).append(j)
    for cols in groups.values():
        mask = ~np.isnan(matrix[:, cols[0]])
        sub = matrix[mask][:, cols]
        n = sub.shape[0]
        if n == 0:
            for j in cols:
                out[metrics[j]] = Aggregate(None, None, None, 0)
            continue
        means = sub.mean(axis=0)
        boot = bootstrap_means(sub, n_boot, seed)
        lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
        for k, j in enumerate(cols):
            out[metrics[j]] = Aggregate(float(means[k]), float(lo[k]), float(hi[k]), n)
    return {m: out[m] for m in metrics}


def breakdown(
    rows: Sequence[dict[str, Any]],
    metrics: Sequence[str],
    key: str,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
) -> dict[str, dict[str, Aggregate]]:
    """Aggregates per value of ``row[key]`` (rows without the key go to group ``"(none)"``), sorted."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(str(r.get(key) or "(none)"), []).append(r)
    return {g: aggregate_rows(groups[g], metrics, seed, n_boot) for g in sorted(groups)}


@lru_cache(maxsize=2)
def _sign_matrix(n: int, n_resamples: int, seed: int) -> tuple[np.ndarray, bool]:
    """Random ±1 signs ``(B, n)``, or all 2**n sign vectors when that is not more than B (exact)."""
    if n <= 20 and 2**n <= n_resamples:
        exact = np.array(list(itertools.product((1.0, -1.0), repeat=n)), dtype=np.float64).reshape(-1, n)
        exact.flags.writeable = False
        return exact, True
    rng = np.random.default_rng(seed)
    signs = rng.integers(0, 2, size=(n_resamples, n)).astype(np.float64) * 2.0 - 1.0
    signs.flags.writeable = False
    return signs, False


def randomization_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> float:
    """Two-sided paired sign-flip randomization test p-value (see the module docstring)."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.size
    if n == 0:
        return 1.0
    observed = abs(d.mean())
    signs, exact = _sign_matrix(n, n_resamples, seed)
    perm = np.abs(signs @ d) / n
    count = int(np.count_nonzero(perm >= observed - 1e-12))
    if exact:
        return count / signs.shape[0]
    return (count + 1) / (n_resamples + 1)


def paired_bootstrap_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float, float, float]:
    """``(ci_low, ci_high, p)`` for mean(a - b): percentile CI and the shifted-null two-sided p."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if d.size == 0:
        return (float("nan"), float("nan"), 1.0)
    boot = bootstrap_means(d, n_resamples, seed)
    lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    obs = d.mean()
    count = int(np.count_nonzero(np.abs(boot - obs) >= abs(obs) - 1e-12))
    return (float(lo), float(hi), (count + 1) / (n_resamples + 1))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return [float(x) for x in out]


def win_tie_loss(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[int, int, int]:
    """Items where a > b, a == b (within 1e-12), a < b."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return (int(np.sum(d > _TIE)), int(np.sum(np.abs(d) <= _TIE)), int(np.sum(d < -_TIE)))


def compare_rows(
    rows_a: Sequence[dict[str, Any]],
    rows_b: Sequence[dict[str, Any]],
    metrics: Sequence[str],
    name_a: str = "A",
    name_b: str = "B",
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> Comparison:
    """Paired comparison on ``item_id``; the two item sets must be identical (else ``ValueError``).

    Per metric, items where either side is undefined are left out (n is reported per row). Holm is
    applied to the randomization p-values across the compared metrics.
    """
    ia = {str(r["item_id"]): r for r in rows_a}
    ib = {str(r["item_id"]): r for r in rows_b}
    if ia.keys() != ib.keys():
        only_a = sorted(ia.keys() - ib.keys())[:5]
        only_b = sorted(ib.keys() - ia.keys())[:5]
        raise ValueError(
            f"the two submissions were scored on different item sets (only in A: {only_a}, only in B: {only_b})"
        )
    ids = sorted(ia)
    pending = []
    for m in metrics:
        va = _column([ia[i] for i in ids], m)
        vb = _column([ib[i] for i in ids], m)
        ok = ~(np.isnan(va) | np.isnan(vb))
        va, vb = va[ok], vb[ok]
        if va.size == 0:
            continue
        p_rand = randomization_test(va, vb, n_resamples, seed)
        lo, hi, p_boot = paired_bootstrap_test(va, vb, n_resamples, seed)
        w, t, lo_ = win_tie_loss(va, vb)
        pending.append(
            (m, float(va.mean()), float(vb.mean()), lo, hi, p_rand, p_boot, w, t, lo_, int(va.size))
        )
    adjusted = holm([p[5] for p in pending])
    rows = [
        ComparisonRow(m, ma, mb, ma - mb, lo, hi, pr, pb, ph, w, t, loss, n)
        for (m, ma, mb, lo, hi, pr, pb, w, t, loss, n), ph in zip(pending, adjusted, strict=True)
    ]
    notes = (
        "Paired on item id. p (rand.) = two-sided sign-flip randomization test, (count+1)/(B+1) "
        "(exact enumeration when 2^n <= B); CI = paired percentile bootstrap of mean(A-B); "
        "p (Holm) = randomization p-values Holm-adjusted across the metrics in this table."
    )
    return Comparison(name_a, name_b, rows, n_resamples, seed, notes)
