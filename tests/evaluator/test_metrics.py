"""Hand-computed values for every registered metric and its edge cases."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from openxiv.evaluator import metrics as M


def test_registry_has_every_metric_with_a_formula() -> None:
    expected = {"iou", "precision", "recall", "f1", "accuracy", "recall@k", "precision@k", "ndcg@k", "mrr",
                "map", "success@k", "best_of_k", "pass@k", "mean@k"}  # fmt: skip
    assert expected <= set(M.METRICS)
    for m in M.METRICS.values():
        assert m.formula and m.kind  # other parts register their own kinds (e.g. taxobench)
    with pytest.raises(KeyError, match="unknown metric"):
        M.get_metric("nope")


@pytest.mark.parametrize(
    ("hits", "n_pred", "n_gold", "iou", "p", "r", "f1", "acc"),
    [
        (0, 0, 0, 1.0, 1.0, 1.0, 1.0, 1.0),  # both empty
        (0, 3, 0, 0.0, 0.0, 0.0, 0.0, 0.0),  # gold empty, prediction not
        (0, 0, 4, 0.0, 0.0, 0.0, 0.0, 0.0),  # prediction empty
        (2, 3, 4, 2 / 5, 2 / 3, 2 / 4, 4 / 7, 0.0),  # |P∪G| = 5, F1 = 2*2/(3+4)
        (3, 3, 3, 1.0, 1.0, 1.0, 1.0, 1.0),
        (0, 2, 2, 0.0, 0.0, 0.0, 0.0, 0.0),
        (1, 1, 2, 0.5, 1.0, 0.5, 2 / 3, 0.0),
    ],
)
def test_set_metrics(
    hits: int, n_pred: int, n_gold: int, iou: float, p: float, r: float, f1: float, acc: float
) -> None:
    assert M.iou(hits, n_pred, n_gold) == pytest.approx(iou)
    assert M.precision(hits, n_pred, n_gold) == pytest.approx(p)
    assert M.recall(hits, n_pred, n_gold) == pytest.approx(r)
    assert M.f1(hits, n_pred, n_gold) == pytest.approx(f1)
    assert M.accuracy(hits, n_pred, n_gold) == acc
    if p + r > 0:
        assert M.f1(hits, n_pred, n_gold) == pytest.approx(2 * p * r / (p + r))


def test_set_counts() -> None:
    assert M.set_counts(["a", "b", "b", "c"], ["b", "c", "d"]) == (2, 3, 3)


RANKED = ["d3", "d7", "d1", "d2", "d8"]
REL = {"d1", "d2", "d4"}


def test_ranked_metrics_by_hand() -> None:
    # relevant at ranks 3 and 4; d4 never retrieved
    assert M.recall_at_k(RANKED, REL, 1) == 0.0
    assert M.recall_at_k(RANKED, REL, 3) == pytest.approx(1 / 3)
    assert M.recall_at_k(RANKED, REL, 10) == pytest.approx(2 / 3)
    assert M.precision_at_k(RANKED, REL, 5) == pytest.approx(2 / 5)
    assert M.precision_at_k(RANKED, REL, 10) == pytest.approx(2 / 10)  # short run still divides by k
    assert M.mrr(RANKED, REL) == pytest.approx(1 / 3)
    assert M.mrr(RANKED, REL, 2) == 0.0
    assert M.average_precision(RANKED, REL) == pytest.approx((1 / 3 + 2 / 4) / 3)  # over ALL 3 relevant
    assert M.success_at_k(RANKED, REL, 2) == 0.0
    assert M.success_at_k(RANKED, REL, 3) == 1.0
    # nDCG@5: relevant at ranks 3 and 4 -> DCG = 1/log2(4) + 1/log2(5); ideal = ranks 1..3 (|Rel| = 3)
    idcg = 1 / np.log2(2) + 1 / np.log2(3) + 1 / np.log2(4)
    assert M.ndcg_at_k(RANKED, REL, 5) == pytest.approx((1 / np.log2(4) + 1 / np.log2(5)) / idcg)
    assert M.ndcg_at_k(RANKED, REL, 3) == pytest.approx((1 / np.log2(4)) / idcg)
    # k=2: no relevant in the top 2, ideal over min(2, 3) ranks
    assert M.ndcg_at_k(RANKED, REL, 2) == 0.0


def test_ranked_metrics_empty_cases() -> None:
    for fn in (M.recall_at_k, M.precision_at_k, M.ndcg_at_k, M.success_at_k):
        assert fn([], {"a"}, 5) == 0.0
        assert fn(["a"], set(), 5) == 0.0
    assert M.mrr([], {"a"}) == 0.0
    assert M.average_precision(["a"], set()) == 0.0
    assert M.ndcg_at_k(["a"], {"a"}, 1) == 1.0


def test_best_of_k_known_values() -> None:
    v = [0.1, 0.5, 0.2, 0.0]
    assert M.best_of_k(v, 1) == pytest.approx(0.2)  # the mean
    assert M.best_of_k(v, 2) == pytest.approx(1 / 3)
    assert M.best_of_k(v, 4) == pytest.approx(0.5)  # the max
    with pytest.raises(ValueError):
        M.best_of_k(v, 5)


def test_best_of_k_equals_enumeration_over_subsets() -> None:
    rng = random.Random(7)
    v = [rng.random() for _ in range(7)]
    for k in range(1, 8):
        subsets = list(itertools.combinations(v, k))
        assert M.best_of_k(v, k) == pytest.approx(sum(max(s) for s in subsets) / len(subsets))


def test_pass_at_k() -> None:
    assert M.pass_at_k([1, 0, 0, 0], 1) == pytest.approx(0.25)
    assert M.pass_at_k([1, 0, 0, 0], 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2)
    assert M.pass_at_k([1, 0, 0, 0], 4) == 1.0  # any pass
    assert M.pass_at_k([0, 0], 2) == 0.0
    assert M.pass_at_k([0.5, 1.0], 1) == pytest.approx(0.5)  # only a score of 1 is "correct"
    assert M.mean_at_k([0.5, 1.0, 0.0]) == pytest.approx(0.5)
    assert M.mean_at_k([]) == 0.0


# ------------------------------------------------------------------------- array forms, bit for bit
SET_NAMES = ("iou", "precision", "recall", "f1", "accuracy")


def test_set_metric_array_forms_equal_the_scalar_functions_bit_for_bit() -> None:
    combos = [(h, p, g) for p in range(25) for g in range(25) for h in range(min(p, g) + 1)]
    hits, n_pred, n_gold = (np.array(c, dtype=np.int64) for c in zip(*combos, strict=True))
    for name in SET_NAMES:
        metric = M.get_metric(name)
        assert metric.array_fn is not None
        got = metric.array_fn(hits, n_pred, n_gold).tolist()
        want = [metric.fn(h, p, g) for h, p, g in combos]
        assert [x.hex() for x in got] == [float(x).hex() for x in want], name


def _pass_values(rng: random.Random, rows: int, n: int) -> np.ndarray:
    # what passes score: ratios of small counts, exact 0 and 1 among them
    return np.array(
        [[min(1.0, rng.randint(0, 20) / rng.randint(1, 25)) for _ in range(n)] for _ in range(rows)]
    )


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17])
def test_pass_metric_row_forms_equal_the_scalar_functions_bit_for_bit(n: int) -> None:
    rng = random.Random(n)
    values = _pass_values(rng, 200, n)
    correct = (values >= 0.5).astype(np.float64)
    assert M.mean_at_k_rows(values).tolist() == [M.mean_at_k(list(v)) for v in values]
    for k in range(1, n + 1):
        assert M.best_of_k_rows(values, k).tolist() == [M.best_of_k(list(v), k) for v in values]
        assert M.pass_at_k_rows(correct, k).tolist() == [M.pass_at_k(list(c), k) for c in correct]
    with pytest.raises(ValueError):
        M.best_of_k_rows(values, n + 1)
