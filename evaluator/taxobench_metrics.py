"""TaxoBench metrics as small pure functions (paper §3.3, appendix A.2–A.5, Algorithm 2).

Notation: ``P*`` expert (gold) papers, ``P̂`` retrieved papers, ``T*``/``T̂`` the expert and predicted
topic hierarchies (paper nodes excluded), ``Sim`` a label similarity in [0, 1]
(:mod:`openxiv.evaluator.labelsim`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import (
    adjusted_rand_score,
    completeness_score,
    homogeneity_score,
    v_measure_score,
)

from openxiv.evaluator.labelsim import LabelSimilarity
from openxiv.evaluator.metrics import register
from openxiv.evaluator.trees import TaxoNode, iter_nodes

__all__ = [
    "BOTTOM",
    "SEM_PATH_LAMBDA",
    "clustering_scores",
    "e2e_labels",
    "f1_score",
    "intersection_labels",
    "leaf_ari",
    "leaf_completeness",
    "leaf_homogeneity",
    "leaf_v_measure",
    "path_cost",
    "path_similarity",
    "retrieval_precision",
    "retrieval_recall",
    "sem_path",
    "us_nted",
    "us_ted",
]

KIND = "taxobench"
SEM_PATH_LAMBDA = 1.0
BOTTOM = -1  # placeholder for the shared ⊥ cluster; replaced by a fresh cluster id in e2e_labels


# --- retrieval (paper eq. 1-2) ------------------------------------------------------------------


@register("taxobench.recall", KIND)
def retrieval_recall(hits: int, n_gold: int) -> float:
    """``Recall = |P* ∩ P̂| / |P*|`` (``hits`` = aligned gold titles); 0 when ``|P*| = 0``."""
    return hits / n_gold if n_gold else 0.0


@register("taxobench.precision", KIND)
def retrieval_precision(hits: int, n_retrieved: int) -> float:
    """``Precision = |P* ∩ P̂| / |P̂|`` (``|P̂|`` counts duplicates); 0 when nothing was retrieved."""
    return hits / n_retrieved if n_retrieved else 0.0


@register("taxobench.f1", KIND)
def f1_score(precision: float, recall: float) -> float:
    """``F1 = 2PR / (P + R)``; 0 when ``P + R = 0``."""
    s = precision + recall
    return 2.0 * precision * recall / s if s else 0.0


# --- leaf-level clustering (paper eq. 3-6) ------------------------------------------------------


def intersection_labels(
    gold_clusters: Sequence[int], pred_cluster_of_gold: Sequence[int | None]
) -> tuple[list[int], list[int]]:
    """Universe ``P* ∩ P̂``: keep only the gold papers aligned to a paper of the predicted tree.

    ``gold_clusters[k]`` is the gold leaf of the k-th gold paper, ``pred_cluster_of_gold[k]`` the
    predicted leaf of its aligned paper or ``None``.
    """
    pairs = [(g, p) for g, p in zip(gold_clusters, pred_cluster_of_gold, strict=True) if p is not None]
    return [g for g, _ in pairs], [p for _, p in pairs]


def e2e_labels(
    gold_clusters: Sequence[int], pred_cluster_of_gold: Sequence[int | None], n_pred_clusters: int
) -> tuple[list[int], list[int]]:
    """Universe ``P*`` (end to end): every unaligned gold paper goes to one shared cluster ⊥.

    ⊥ gets the id ``n_pred_clusters`` (one past the predicted leaves), as in the public scorer.
    """
    bottom = n_pred_clusters
    return list(gold_clusters), [bottom if p is None else p for p in pred_cluster_of_gold]


def _guard(y_true: Sequence[int]) -> bool:
    return len(y_true) >= 2


@register("taxobench.ari", KIND)
def leaf_ari(y_true: Sequence[int], y_pred: Sequence[int]) -> float:
    """ARI = (RI - E[RI]) / (max RI - E[RI]) over leaf labels (sklearn); 0 with fewer than 2 papers."""
    return float(adjusted_rand_score(y_true, y_pred)) if _guard(y_true) else 0.0


@register("taxobench.homogeneity", KIND)
def leaf_homogeneity(y_true: Sequence[int], y_pred: Sequence[int]) -> float:
    """h = 1 - H(C|K) / H(C), C gold leaves, K predicted leaves (sklearn); 0 with fewer than 2 papers."""
    return float(homogeneity_score(y_true, y_pred)) if _guard(y_true) else 0.0


@register("taxobench.completeness", KIND)
def leaf_completeness(y_true: Sequence[int], y_pred: Sequence[int]) -> float:
    """c = 1 - H(K|C) / H(K) (sklearn); 0 with fewer than 2 papers."""
    return float(completeness_score(y_true, y_pred)) if _guard(y_true) else 0.0


@register("taxobench.v_measure", KIND)
def leaf_v_measure(y_true: Sequence[int], y_pred: Sequence[int]) -> float:
    """V = 2hc / (h + c) (β = 1, sklearn); 0 with fewer than 2 papers."""
    return float(v_measure_score(y_true, y_pred)) if _guard(y_true) else 0.0


def clustering_scores(y_true: Sequence[int], y_pred: Sequence[int]) -> dict[str, float]:
    """ARI, homogeneity, completeness and V-measure; all 0 with fewer than 2 samples.

    The < 2 rule is the public scorer's (sklearn would return 1.0 for a single sample).
    """
    return {
        "ari": leaf_ari(y_true, y_pred),
        "homogeneity": leaf_homogeneity(y_true, y_pred),
        "completeness": leaf_completeness(y_true, y_pred),
        "v_measure": leaf_v_measure(y_true, y_pred),
    }


# --- US-TED / US-NTED (paper eq. 7-11, A.3, Algorithm 2) ----------------------------------------


def _name_index(root: TaxoNode) -> tuple[list[str], dict[str, int]]:
    names = list(dict.fromkeys(n.name for n in iter_nodes(root)))
    return names, {n: k for k, n in enumerate(names)}


def _label_sims(gold: TaxoNode, pred: TaxoNode, sim: LabelSimilarity) -> tuple[np.ndarray, dict, dict]:
    gnames, gidx = _name_index(gold)
    pnames, pidx = _name_index(pred)
    return np.asarray(sim.matrix(gnames, pnames), dtype=np.float64), gidx, pidx


def _ted(u: TaxoNode, v: TaxoNode, S: np.ndarray, gidx: Mapping[str, int], pidx: Mapping[str, int]) -> float:
    rename = 1.0 - float(S[gidx[u.name], pidx[v.name]])
    m, n = len(u.children), len(v.children)
    if m == 0 or n == 0:  # leaf-leaf: rename only; leaf vs internal: every child subtree to a dummy
        return rename + sum(c.size for c in u.children) + sum(c.size for c in v.children)
    k = max(m, n)
    C = np.zeros((k, k))
    for i, a in enumerate(u.children):
        for j, b in enumerate(v.children):
            C[i, j] = _ted(a, b, S, gidx, pidx)
    C[:m, n:] = np.array([a.size for a in u.children], dtype=float)[:, None]  # delete subtree a
    C[m:, :n] = np.array([b.size for b in v.children], dtype=float)[None, :]  # insert subtree b
    rows, cols = linear_sum_assignment(C)
    return rename + float(C[rows, cols].sum())


@register("taxobench.us_ted", KIND)
def us_ted(gold: TaxoNode, pred: TaxoNode, sim: LabelSimilarity) -> float:
    """US-TED = D(root*, root̂), D(u,v) = 1 - Sim(u,v) + min-cost child assignment (Algorithm 2).

    Unordered, top-down tree edit distance over topic nodes. ``D(u, v) = 1 - Sim(name u, name v) + MatchCost(Ch(u), Ch(v))``. MatchCost builds a k×k
    matrix, ``k = max(m, n)``: ``C[i,j] = D(u_i, v_j)`` for real pairs, ``|T_{u_i}|`` to delete an
    unmatched gold child subtree, ``|T_{v_j}|`` to insert an unmatched predicted one, 0 for
    dummy–dummy, and takes the minimum-cost assignment (Hungarian). ``US-TED = D(root*, root̂)``;
    the roots are renamed like any node. Paper nodes are not part of the trees.
    """
    S, gidx, pidx = _label_sims(gold, pred, sim)
    return _ted(gold, pred, S, gidx, pidx)


@register("taxobench.us_nted", KIND)
def us_nted(ted: float, gold_size: int, pred_size: int) -> float:
    """``US-NTED = US-TED / (|T*| + |T̂|)`` in [0, 1] (0 if both trees are empty)."""
    total = gold_size + pred_size
    return ted / total if total else 0.0


# --- Sem-Path (paper eq. 12-13, A.4) ------------------------------------------------------------


def path_cost(delta: np.ndarray, lam: float = SEM_PATH_LAMBDA) -> float:
    """``J`` for ancestor chains A (length p, rows) and B (length q ≥ p, columns), ``delta = 1 - Sim``.

    ``dp[0, j] = 0``; ``dp[i, j] = min(dp[i-1, j-1] + δ(a_i, b_j), dp[i, j-1])`` for ``j ≥ i``
    (∞ otherwise); ``J = dp[p, q] + λ (q - p)``: every element of the shorter chain is matched, in
    order, to a distinct element of the longer one, and each unmatched level costs λ.
    """
    p, q = delta.shape
    if p > q:
        return path_cost(delta.T, lam)
    if p == 0:
        return lam * q
    prev = np.zeros(q + 1)  # dp[i-1, :]
    for i in range(1, p + 1):
        cur = np.full(q + 1, np.inf)
        for j in range(i, q + 1):
            cur[j] = min(prev[j - 1] + float(delta[i - 1, j - 1]), cur[j - 1])
        prev = cur
    return float(prev[q] + lam * (q - p))


@register("taxobench.sem_path", KIND)
def path_similarity(delta: np.ndarray, lam: float = SEM_PATH_LAMBDA) -> float:
    """Sem-Path of one chain pair = 1 / (1 + J), J = aligned 1-Sim costs + λ·(q - p) (see path_cost)."""
    return 1.0 / (1.0 + path_cost(delta, lam))


def sem_path(
    gold_paths: Sequence[Sequence[Sequence[str]]],
    pred_paths: Sequence[Sequence[Sequence[str]]],
    sim: LabelSimilarity,
    lam: float = SEM_PATH_LAMBDA,
) -> list[float]:
    """Per aligned paper ``d``: ``max over (gold path, predicted path) of 1 / (1 + J)``.

    ``gold_paths[k]`` / ``pred_paths[k]`` are all ancestor chains (root kept, paper dropped) of the
    k-th aligned pair. Sem-Path of a survey is the mean of the returned list over aligned papers
    (|D_a| in the denominator, unaligned papers excluded).
    """
    gnames = list(dict.fromkeys(n for paths in gold_paths for path in paths for n in path))
    pnames = list(dict.fromkeys(n for paths in pred_paths for path in paths for n in path))
    if not gnames or not pnames:
        return [0.0] * len(gold_paths)
    S = np.asarray(sim.matrix(gnames, pnames), dtype=np.float64)
    gi = {n: k for k, n in enumerate(gnames)}
    pi = {n: k for k, n in enumerate(pnames)}
    out: list[float] = []
    for gps, pps in zip(gold_paths, pred_paths, strict=True):
        best = 0.0
        for gp in gps:
            rows = [gi[n] for n in gp]
            for pp in pps:
                delta = 1.0 - S[np.ix_(rows, [pi[n] for n in pp])]
                best = max(best, path_similarity(delta, lam))
        out.append(best)
    return out
