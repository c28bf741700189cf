"""Statistics: determinism with a seed, known answers, Holm, paired comparisons."""

from __future__ import annotations

import numpy as np
import pytest

from openxiv.evaluator import stats


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    v = np.random.default_rng(3).random(200)
    a = stats.bootstrap_ci(v, n_boot=500, seed=11)
    b = stats.bootstrap_ci(v, n_boot=500, seed=11)
    c = stats.bootstrap_ci(v, n_boot=500, seed=12)
    assert a == b
    assert a != c
    assert a[0] < v.mean() < a[1]
    assert stats.bootstrap_ci([0.7] * 10) == (pytest.approx(0.7), pytest.approx(0.7))
    assert all(np.isnan(x) for x in stats.bootstrap_ci([]))


def test_bootstrap_means_matches_explicit_resampling() -> None:
    v = np.arange(5, dtype=float)
    means = stats.bootstrap_means(v, n_boot=50, seed=1)
    idx = np.random.default_rng(1).integers(0, 5, size=(50, 5))
    assert np.allclose(means, v[idx].mean(axis=1))


def test_aggregate_rows_handles_undefined_values() -> None:
    rows = [{"item_id": str(i), "x": float(i), "y": None if i % 2 else 1.0} for i in range(10)]
    agg = stats.aggregate_rows(rows, ["x", "y"], seed=0, n_boot=200)
    assert agg["x"].value == pytest.approx(4.5) and agg["x"].n == 10
    assert agg["y"].value == 1.0 and agg["y"].n == 5
    assert agg["x"].ci_low is not None and agg["x"].ci_low < 4.5 < agg["x"].ci_high
    assert stats.aggregate_rows(rows, ["x"], seed=5) == stats.aggregate_rows(rows, ["x"], seed=5)
    empty = stats.aggregate_rows([{"item_id": "a", "z": None}], ["z"])
    assert empty["z"].value is None and empty["z"].n == 0


def test_randomization_test_exact_known_answer() -> None:
    # 5 equal positive differences: of the 2^5 sign vectors only all-plus and all-minus reach |mean| = 1
    assert stats.randomization_test([1.0] * 5, [0.0] * 5, n_resamples=1000) == pytest.approx(2 / 32)
    # identical systems: every sign vector ties the observed 0 -> p = 1
    assert stats.randomization_test([0.3, 0.5], [0.3, 0.5]) == 1.0


def test_randomization_test_sampled_is_seeded_and_smoothed() -> None:
    a = np.ones(30)
    b = np.zeros(30)
    p = stats.randomization_test(a, b, n_resamples=999, seed=4)
    assert p == pytest.approx(1 / 1000)  # no flip reaches |mean| = 1 except all-plus/all-minus: (0+1)/(B+1)
    rng = np.random.default_rng(0)
    x, y = rng.random(40), rng.random(40)
    assert stats.randomization_test(x, y, 500, seed=9) == stats.randomization_test(x, y, 500, seed=9)


def test_paired_bootstrap_and_win_tie_loss() -> None:
    a = [1.0, 0.5, 0.2, 0.9]
    b = [0.5, 0.5, 0.4, 0.1]
    lo, hi, p = stats.paired_bootstrap_test(a, b, 500, seed=2)
    assert lo <= np.mean(np.subtract(a, b)) <= hi
    assert 0 < p <= 1
    assert stats.win_tie_loss(a, b) == (2, 1, 1)


def test_holm() -> None:
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert stats.holm([]) == []


def test_compare_rows_requires_identical_items() -> None:
    a = [{"item_id": "1", "m": 1.0}, {"item_id": "2", "m": 0.0}]
    with pytest.raises(ValueError, match="different item sets"):
        stats.compare_rows(a, [{"item_id": "1", "m": 1.0}], ["m"])
    comp = stats.compare_rows(a, [{"item_id": "2", "m": 0.0}, {"item_id": "1", "m": 0.5}], ["m"], seed=1)
    row = comp.rows[0]
    assert row.diff == pytest.approx(0.25) and (row.wins, row.ties, row.losses) == (1, 1, 0)
    assert row.p_holm == row.p_randomization  # one metric: Holm changes nothing


def test_breakdown_groups() -> None:
    rows = [{"item_id": str(i), "type": "deep" if i < 3 else "wide", "m": float(i)} for i in range(5)]
    out = stats.breakdown(rows, ["m"], "type", n_boot=100)
    assert list(out) == ["deep", "wide"]
    assert out["deep"]["m"].value == pytest.approx(1.0) and out["wide"]["m"].value == pytest.approx(3.5)
