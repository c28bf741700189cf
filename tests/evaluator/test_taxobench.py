"""TaxoBench metrics: hand-derived cases (exact label similarity), sklearn cross-checks, the public
toy files, and the 5 real Bottom-Up records scored with the real all-MiniLM-L6-v2 similarity."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, completeness_score, homogeneity_score, v_measure_score

from openxiv.corpus.shared import SharedData
from openxiv.evaluator import taxobench_metrics as tm
from openxiv.evaluator.io import EvalInputError
from openxiv.evaluator.labelsim import ExactSimilarity
from openxiv.evaluator.taxobench import METRICS, evaluate_taxobench, score_taxobench
from openxiv.evaluator.taxobench_io import TaxoBenchInputError
from openxiv.evaluator.trees import TaxoNode, parse_tree, topic_count

EXACT = ExactSimilarity()


def T(name: str, *children: TaxoNode | str) -> TaxoNode:
    """Build a tree: TaxoNode children are subtopics, strings are papers."""
    d: dict = {"name": name}
    subs = [c for c in children if isinstance(c, TaxoNode)]
    papers = [c for c in children if isinstance(c, str)]
    node = parse_tree(d)
    node.children = subs
    node.papers = papers
    node.size = 1 + sum(c.size for c in subs)
    return node


class TableSimilarity:
    """Exact similarity plus a few fixed pairs, to test a non-binary Sim."""

    name = "table"

    def __init__(self, table: dict[tuple[str, str], float]) -> None:
        self.table = {**table, **{(b, a): v for (a, b), v in table.items()}}

    def similarity(self, a: str, b: str) -> float:
        return 1.0 if a == b else self.table.get((a, b), 0.0)

    def matrix(self, xs: Sequence[str], ys: Sequence[str]) -> np.ndarray:
        return np.array([[self.similarity(x, y) for y in ys] for x in xs]).reshape(len(xs), len(ys))


# --- US-TED / US-NTED, distances derived by hand (exact similarity: rename cost 0 or 1) ---------


def test_us_ted_identical_is_zero() -> None:
    a = T("R", T("A", T("x"), T("y")), T("B"))
    b = T("R", T("A", T("x"), T("y")), T("B"))
    assert tm.us_ted(a, b, EXACT) == 0.0
    assert tm.us_nted(0.0, 5, 5) == 0.0


def test_us_ted_one_renamed_leaf() -> None:
    # root R=R: 0. Children cost matrix (rows A,B; cols A,C): [[0,1],[1,1]] -> A-A + B-C = 1
    assert tm.us_ted(T("R", T("A"), T("B")), T("R", T("A"), T("C")), EXACT) == 1.0


def test_us_ted_extra_leaf_subtree_costs_its_size() -> None:
    # pred has an extra child X{y,z} (3 topic nodes); k=3, A-A 0, B-B 0, X inserted at |T_X| = 3
    gold = T("R", T("A"), T("B"))
    pred = T("R", T("A"), T("B"), T("X", T("y"), T("z")))
    ted = tm.us_ted(gold, pred, EXACT)
    assert ted == 3.0
    # US-NTED = 3 / (|T*| + |T̂|) = 3 / (3 + 6)
    assert tm.us_nted(ted, topic_count(gold), topic_count(pred)) == pytest.approx(1 / 3)
    # symmetric: the same subtree deleted from the gold side
    assert tm.us_ted(pred, gold, EXACT) == 3.0


def test_us_ted_leaf_vs_internal() -> None:
    # D(A, A{b,c}) = rename 0 + both children of the internal node to dummies (1 + 1) = 2;
    # the alternative (delete leaf A: 1, insert A{b,c}: 3) costs 4, so US-TED = 2.
    assert tm.us_ted(T("R", T("A")), T("R", T("A", T("b"), T("c"))), EXACT) == 2.0
    # the root itself a leaf against a root with two leaf children: 0 + 1 + 1
    assert tm.us_ted(T("R"), T("R", T("A"), T("B")), EXACT) == 2.0
    # D(A{x}, B) = rename 1 + delete x 1 = 2 (cheaper than delete A{x} 2 + insert B 1 = 3)
    assert tm.us_ted(T("R", T("A", T("x"))), T("R", T("B")), EXACT) == 2.0


def test_us_ted_roots_are_renamed_like_any_node() -> None:
    assert tm.us_ted(T("Survey title", T("A")), T("Other title", T("A")), EXACT) == 1.0
    sim = TableSimilarity({("Survey title", "Other title"): 0.8})
    assert tm.us_ted(T("Survey title", T("A")), T("Other title", T("A")), sim) == pytest.approx(0.2)


def test_us_ted_hungarian_not_name_greedy() -> None:
    # gold R{A{a1,a2}, B}, pred R{B{a1,a2}, A}. Pairwise D:
    #   D(A{..}, B{..}) = 1 + 0 = 1;  D(A{..}, A) = 0 + 2 = 2;  D(B, B{..}) = 0 + 2 = 2;  D(B, A) = 1.
    # Pairing by equal names costs 2 + 2 = 4; the optimal assignment costs 1 + 1 = 2.
    gold = T("R", T("A", T("a1"), T("a2")), T("B"))
    pred = T("R", T("B", T("a1"), T("a2")), T("A"))
    assert tm.us_ted(gold, pred, EXACT) == 2.0


def test_us_ted_fewer_children_deletes_rest() -> None:
    # gold R{A,B,C} vs pred R{A}: k = 3, A-A 0, B and C deleted at 1 each -> 2; NTED 2/(4+2)
    gold, pred = T("R", T("A"), T("B"), T("C")), T("R", T("A"))
    assert tm.us_ted(gold, pred, EXACT) == 2.0
    assert tm.us_nted(2.0, topic_count(gold), topic_count(pred)) == pytest.approx(1 / 3)


def test_us_ted_ignores_papers() -> None:
    assert tm.us_ted(T("R", T("A", "p1", "p2")), T("R", T("A", "p3")), EXACT) == 0.0


def _brute_ted(u: TaxoNode, v: TaxoNode) -> float:
    """Algorithm 2 with every permutation tried instead of the Hungarian method."""
    cost = 0.0 if u.name == v.name else 1.0
    a: list[TaxoNode | None] = list(u.children)
    b: list[TaxoNode | None] = list(v.children)
    k = max(len(a), len(b))
    a += [None] * (k - len(a))
    b += [None] * (k - len(b))
    best = math.inf
    for perm in itertools.permutations(range(k)):
        total = 0.0
        for i, j in enumerate(perm):
            x, y = a[i], b[j]
            if x is not None and y is not None:
                total += _brute_ted(x, y)
            elif x is not None:
                total += x.size
            elif y is not None:
                total += y.size
        best = min(best, total)
    return cost + (best if k else 0.0)


def _random_tree(rng: random.Random, depth: int) -> TaxoNode:
    n = rng.randint(0, 3) if depth > 0 else 0
    return T(rng.choice("ABCD"), *(_random_tree(rng, depth - 1) for _ in range(n)))


def test_us_ted_matches_brute_force_and_is_a_bounded_symmetric_distance() -> None:
    rng = random.Random(0)
    for _ in range(60):
        a, b = _random_tree(rng, 3), _random_tree(rng, 3)
        ted = tm.us_ted(a, b, EXACT)
        assert ted == pytest.approx(_brute_ted(a, b))
        assert ted == pytest.approx(tm.us_ted(b, a, EXACT))
        assert tm.us_ted(a, a, EXACT) == 0.0
        assert 0.0 <= tm.us_nted(ted, a.size, b.size) <= 1.0


# --- Sem-Path -----------------------------------------------------------------------------------


def _sp(g: tuple[str, ...], p: tuple[str, ...], sim=EXACT) -> float:
    return tm.sem_path([[g]], [[p]], sim)[0]


def test_sem_path_hand_cases() -> None:
    assert _sp(("R", "A"), ("R", "A")) == 1.0  # J = 0
    # one extra level: R-R 0, A-A 0, X skipped at λ = 1 -> J = 1 -> 1/2
    assert _sp(("R", "A"), ("R", "X", "A")) == 0.5
    assert _sp(("R", "X", "A"), ("R", "A")) == 0.5  # the shorter chain may be either side
    # same length, nothing equal: J = 1 + 1 = 2 -> 1/3
    assert _sp(("R", "A"), ("S", "B")) == pytest.approx(1 / 3)
    # order matters: (R,X,Y) vs (R,Y,X) is matched position by position: J = 0 + 1 + 1 -> 1/3
    assert _sp(("R", "X", "Y"), ("R", "Y", "X")) == pytest.approx(1 / 3)
    # root only vs a 3-level chain: R-R 0 + 2 skipped levels -> J = 2 -> 1/3
    assert _sp(("R",), ("R", "A", "B")) == pytest.approx(1 / 3)
    # graded similarity: leaf Sim 0.75 -> δ 0.25 -> 1/1.25
    assert _sp(("R", "A"), ("R", "A'"), TableSimilarity({("A", "A'"): 0.75})) == pytest.approx(0.8)


def test_path_cost_dp() -> None:
    # p=1, q=3, δ = [0.5, 0.1, 0.9]: the single element takes its cheapest partner 0.1, 2 skips
    assert tm.path_cost(np.array([[0.5, 0.1, 0.9]])) == pytest.approx(2.1)
    # p=2, q=3: the order constraint forbids matching a1->b3 and a2->b1
    delta = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    # options: (b1,b2)=1+1, (b1,b3)=1+1, (b2,b3)=1+1 -> 2, plus λ(3-2) = 3
    assert tm.path_cost(delta) == pytest.approx(3.0)
    assert tm.path_cost(np.zeros((0, 2))) == 2.0


def test_sem_path_best_pair_of_paths() -> None:
    # the gold paper sits under two leaves; the model path matches one of them exactly
    gold_paths = [[("R", "A"), ("R", "B", "C")]]
    pred_paths = [[("R", "B", "C")]]
    assert tm.sem_path(gold_paths, pred_paths, EXACT) == [1.0]


# --- retrieval and clustering -------------------------------------------------------------------


def test_retrieval_functions() -> None:
    assert tm.retrieval_recall(2, 3) == pytest.approx(2 / 3)
    assert tm.retrieval_precision(2, 0) == 0.0
    assert tm.retrieval_recall(0, 0) == 0.0
    assert tm.f1_score(0.0, 0.0) == 0.0
    assert tm.f1_score(0.5, 1.0) == pytest.approx(2 / 3)


def test_clustering_cross_checked_with_sklearn() -> None:
    # gold leaves L1{a,b} L2{c,d} L3{e}; pred M1{a,b,c} M2{d}; e not retrieved
    y_gold = [0, 0, 1, 1, 2]
    pred_of_gold = [0, 0, 0, 1, None]
    yt, yp = tm.e2e_labels(y_gold, pred_of_gold, n_pred_clusters=2)
    assert (yt, yp) == ([0, 0, 1, 1, 2], [0, 0, 0, 1, 2])  # e in ⊥ = cluster 2
    e2e = tm.clustering_scores(yt, yp)
    assert e2e["ari"] == pytest.approx(adjusted_rand_score(yt, yp))
    assert e2e["v_measure"] == pytest.approx(v_measure_score(yt, yp))
    ct, cp = tm.intersection_labels(y_gold, pred_of_gold)
    assert (ct, cp) == ([0, 0, 1, 1], [0, 0, 0, 1])
    cap = tm.clustering_scores(ct, cp)
    # by hand: H(C) = ln 2; H(C|K) = 3/4 * H(2/3, 1/3) = 0.75 * 0.63651 = 0.47738
    # homogeneity = 1 - 0.47738 / 0.69315 = 0.31128
    assert cap["homogeneity"] == pytest.approx(0.31128, abs=1e-5)
    assert cap["homogeneity"] == pytest.approx(homogeneity_score(ct, cp))
    assert cap["completeness"] == pytest.approx(completeness_score(ct, cp))
    # fewer than 2 samples: all zero (public scorer), not sklearn's 1.0
    assert tm.clustering_scores([0], [0]) == dict.fromkeys(
        ("ari", "homogeneity", "completeness", "v_measure"), 0.0
    )


# --- files --------------------------------------------------------------------------------------


def _taxo_dir() -> Path:
    d = SharedData.default().gold("taxobench")
    if not (d / "toy_reference.jsonl").exists():
        pytest.skip(f"TaxoBench fixtures not found under {d} (set OPENXIV_SHARED)")
    return d


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


GOLD = {
    "id": 1,
    "survey_topic": "S",
    "gt": {
        "name": "S",
        "subtopics": [
            {"name": "L1", "papers": ["Paper number one", "Paper number two"]},
            {"name": "L2", "papers": ["Paper number three", "Paper number four"]},
            {"name": "L3", "papers": ["Paper number five"]},
        ],
    },
}


def test_toy_files_reproduce_the_public_result() -> None:
    d = _taxo_dir()
    res = score_taxobench(d / "toy_reference.jsonl", d / "toy_prediction.jsonl", EXACT)
    (s,) = res.surveys
    for m in ["recall", "precision", "f1", "ari", "homogeneity", "completeness", "v_measure"]:
        assert s.values[m] == 1.0, m
        assert (
            s.values[f"{m}_aligned" if m in ("ari", "homogeneity", "completeness", "v_measure") else m] == 1.0
        )
    # the toy leaves are renamed (Retrieval -> Retrieval Methods, ...): with exact Sim, 3 renames
    assert s.values["us_ted"] == 3.0
    assert s.values["us_nted"] == pytest.approx(3 / 8)
    assert s.values["sem_path"] == 0.5  # (root, leaf) vs (root, leaf'): J = 1
    assert res.coverage.answered == 1 and res.coverage.total == 1


def test_missing_and_invalid_predictions_are_scored_not_skipped(tmp_path: Path) -> None:
    gold2 = {**GOLD, "id": 2}
    gold3 = {**GOLD, "id": 3}
    g = _write(tmp_path / "gold.jsonl", [GOLD, gold2, gold3])
    p = _write(
        tmp_path / "pred.jsonl",
        [
            {"id": 1, "tree": GOLD["gt"]},  # `tree` alias
            {"id": "3", "hierarchy_tree": {"name": "S", "papers": "not a list"}},
            {"id": 99, "hierarchy_tree": GOLD["gt"]},
        ],
    )
    res = score_taxobench(g, p, EXACT)
    s1, s2, s3 = res.surveys
    assert s1.status == "scored" and all(
        s1.values[m] == (0.0 if m in ("us_ted", "us_nted") else 1.0) for m in METRICS
    )
    assert s2.status == "missing" and s3.status == "invalid"
    assert "line 2: $.hierarchy_tree" in s3.details["flags"][0]
    for s in (s2, s3):
        assert s.values["recall"] == 0.0 and s.values["ari"] == 0.0 and s.values["sem_path"] == 0.0
        assert s.values["us_nted"] == 1.0 and s.values["us_ted"] == 4.0  # |T*| = 4
    assert res.coverage.answered == 1 and res.coverage.total == 3
    assert res.means()["recall"] == pytest.approx(1 / 3)
    assert res.unknown_prediction_ids == ["99"]


def test_retrieval_duplicates_partial_tree_and_bottom_cluster(tmp_path: Path) -> None:
    pred_tree = {
        "name": "S",
        "subtopics": [
            {"name": "M1", "papers": ["Paper number one", "paper number two", "Paper number three"]},
            {"name": "M2", "papers": ["Paper number four", "Paper number one", "Unrelated title here"]},
        ],
    }
    g = _write(tmp_path / "g.jsonl", [GOLD])
    p = _write(tmp_path / "p.jsonl", [{"id": 1, "hierarchy_tree": pred_tree}])
    (s,) = score_taxobench(g, p, EXACT).surveys
    # retrieved = 6 titles with a duplicate; 4 of 5 gold aligned
    assert s.counts["n_retrieved"] == 6 and s.counts["hits"] == 4
    assert s.values["recall"] == pytest.approx(4 / 5)
    assert s.values["precision"] == pytest.approx(4 / 6)
    # clustering: "Paper number one" is in M1 and M2 -> last leaf M2 (=1)
    yt, yp = [0, 0, 1, 1, 2], [1, 0, 0, 1, 2]  # paper five unretrieved -> ⊥ = 2
    assert s.values["ari"] == pytest.approx(adjusted_rand_score(yt, yp))
    assert s.values["v_measure_aligned"] == pytest.approx(v_measure_score(yt[:4], yp[:4]))
    assert s.details["missed"] == ["Paper number five"]
    assert s.details["extra"] == ["Paper number one", "Unrelated title here"]
    # retrieved_papers overrides the tree for retrieval only
    p2 = _write(
        tmp_path / "p2.jsonl",
        [{"id": 1, "hierarchy_tree": pred_tree, "retrieved_papers": ["Paper number five"]}],
    )
    (s2,) = score_taxobench(g, p2, EXACT).surveys
    assert (s2.values["recall"], s2.values["precision"]) == (pytest.approx(0.2), 1.0)
    assert s2.values["ari"] == s.values["ari"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": 1, "gt": {"name": "S"}}\n{oops\n', "g.jsonl line 2: invalid JSON"),
        (
            '{"id": 1, "gt": {"name": "S"}}\n{"id": 1, "gt": {"name": "S"}}\n',
            "g.jsonl line 2: duplicate gold id 1",
        ),
        ('{"id": 1}\n', 'g.jsonl line 1: gold survey 1 has no "gt"'),
        ('{"id": 1, "gt": {"name": "S", "subtopics": [5]}}\n', "g.jsonl line 1: $.gt.subtopics[0]"),
        ("\n", "no gold surveys"),
    ],
)
def test_bad_gold_files(tmp_path: Path, content: str, message: str) -> None:
    g = tmp_path / "g.jsonl"
    g.write_text(content, encoding="utf-8")
    p = _write(tmp_path / "p.jsonl", [])
    with pytest.raises(EvalInputError, match=re.escape(message)):
        score_taxobench(g, p, EXACT)


def test_bad_prediction_lines(tmp_path: Path) -> None:
    g = _write(tmp_path / "g.jsonl", [GOLD])
    p = tmp_path / "p.jsonl"
    p.write_text('{"id": 1, "hierarchy_tree": {"name": "S"}}\n{"hierarchy_tree": {}}\n', encoding="utf-8")
    with pytest.raises(TaxoBenchInputError, match=re.escape('p.jsonl line 2: prediction line has no "id"')):
        score_taxobench(g, p, EXACT)
    p.write_text('{"id": 1, "hierarchy_tree": "{\\"name\\": \\"S\\"}"}\n', encoding="utf-8")
    (s,) = score_taxobench(g, p, EXACT).surveys  # a tree serialised as a JSON string is accepted
    assert s.status == "scored"


def test_similarity_by_name_and_registry() -> None:
    from openxiv.evaluator.labelsim import get_similarity
    from openxiv.evaluator.metrics import get_metric

    assert isinstance(get_similarity("exact"), ExactSimilarity)
    assert get_similarity("minilm") is get_similarity(None)  # one shared model per process (lazy load)
    with pytest.raises(ValueError, match="unknown label similarity"):
        get_similarity("cosine-ish")
    for name in [
        "recall",
        "precision",
        "f1",
        "ari",
        "homogeneity",
        "completeness",
        "v_measure",
        "us_ted",
        "us_nted",
        "sem_path",
    ]:
        m = get_metric(f"taxobench.{name}")
        assert m.kind == "taxobench" and m.formula
    assert get_metric("taxobench.ari").fn([0, 0, 1], [0, 0, 1]) == 1.0
    assert get_metric("taxobench.sem_path").fn(np.array([[0.0, 0.0]])) == 0.5


def test_evaluate_builds_report(tmp_path: Path) -> None:
    d = _taxo_dir()
    rep = evaluate_taxobench(
        d / "toy_reference.jsonl", d / "toy_prediction.jsonl", similarity="exact", seed=0
    )
    assert rep.benchmark == "taxobench" and rep.metrics == METRICS
    assert rep.aggregates["recall"].value == 1.0 and rep.aggregates["us_nted"].value == pytest.approx(3 / 8)
    assert rep.coverage is not None and rep.coverage.fraction == 1.0
    assert rep.per_item[0]["item_id"] == "toy-0"
    json.dumps(rep.to_dict())


# --- the 5 real Bottom-Up records with the real MiniLM similarity ------------------------------


def test_real_bottom_up_records_with_minilm() -> None:
    d = _taxo_dir()
    f = d / "bottom_up_outputs_examples.jsonl"
    from openxiv.evaluator.labelsim import MiniLMSimilarity

    sim = MiniLMSimilarity()
    res = score_taxobench(f, f, sim)  # the file holds both the expert `gt` and the model's tree
    by_id = {s.id: s for s in res.surveys}
    assert sorted(by_id) == [1, 2, 28, 34, 64]
    for s in res.surveys:
        print(s.id, {k: round(v, 4) for k, v in s.values.items()})
        assert s.status == "scored"
        assert 0.0 <= s.values["us_nted"] <= 1.0
        assert 0.0 < s.values["sem_path"] <= 1.0
        assert s.values["recall"] >= 0.97
        assert -0.5 <= s.values["ari"] <= 1.0 and 0.0 <= s.values["v_measure"] <= 1.0
    # survey 1: one paper dropped (37/38), the OPPU title aligned by containment
    assert by_id[1].counts["hits"] == 37
    assert any("One PEFT Per User" in m for m in by_id[1].details["matched"])
    # survey 2: venue noise aligned; survey 28: the acronym-only "CONQORD" stays unmatched
    assert by_id[2].values["recall"] == 1.0
    assert by_id[28].details["extra"] == ["CONQORD"]
    assert by_id[28].values["precision"] == pytest.approx(43 / 44)
    means = res.means()
    print("means", {k: round(v, 4) for k, v in means.items()})
    # sanity against the paper's Bottom-Up ranges (US-NTED 75.7-80.9%, Sem-Path ~29%)
    assert 0.6 <= means["us_nted"] <= 0.95
    assert 0.15 <= means["sem_path"] <= 0.5
    # semantic similarity can only lower the distance compared with exact matching
    exact = score_taxobench(f, f, EXACT)
    for s, e in zip(res.surveys, exact.surveys, strict=True):
        assert s.values["us_ted"] <= e.values["us_ted"] + 1e-9
        assert s.values["sem_path"] >= e.values["sem_path"] - 1e-9
