"""Ranked retrieval: hand-computed values, trec_eval conventions, cross-check with ir_measures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from openxiv.evaluator.io import read_qrels, read_run
from openxiv.evaluator.ranked import rank_docs, score_ranked, write_trec_qrels, write_trec_run

QRELS = "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 1\nq2 0 d5 1\nq3 0 d9 1\nq4 0 d1 0\n"
# q1: d1 and d7 tie at 0.8 -> doc id descending puts d7 first; q2: d6/d5 tie -> d6 first; q3 missing
RUN = (
    "q1 Q0 d3 1 0.9 t\nq1 Q0 d1 2 0.8 t\nq1 Q0 d7 3 0.8 t\nq1 Q0 d2 4 0.5 t\nq1 Q0 d8 5 0.4 t\n"
    "q2 Q0 d5 1 1.0 t\nq2 Q0 d6 2 1.0 t\nq9 Q0 d1 1 1.0 t\n"
)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    return q, r


def test_tie_breaking_is_trec_eval() -> None:
    assert rank_docs([("d1", 0.8), ("d3", 0.9), ("d7", 0.8), ("d1", 0.1)]) == ["d3", "d7", "d1"]
    assert rank_docs([("2301.00001v2", 1.0), ("arXiv:2301.00001", 0.5)]) == ["2301.00001"]


def test_hand_computed(files: tuple[Path, Path]) -> None:
    q, r = files
    rep = score_ranked(read_qrels(q), read_run(r), ks=(1, 3, 5, 10), n_boot=100)
    rows = {x["item_id"]: x for x in rep.per_item}
    assert set(rows) == {"q1", "q2", "q3"}  # q4 has no relevant document
    q1 = rows["q1"]  # ranking d3 d7 d1 d2 d8, relevant {d1, d2, d4}: hits at ranks 3 and 4
    assert q1["map"] == pytest.approx((1 / 3 + 2 / 4) / 3)
    assert q1["mrr"] == pytest.approx(1 / 3)
    assert q1["recall@3"] == pytest.approx(1 / 3) and q1["recall@5"] == pytest.approx(2 / 3)
    assert q1["precision@5"] == pytest.approx(0.4) and q1["success@1"] == 0.0
    assert q1["ndcg@5"] == pytest.approx(
        (1 / np.log2(4) + 1 / np.log2(5)) / (1 + 1 / np.log2(3) + 1 / np.log2(4))
    )
    q2 = rows["q2"]  # d6 before d5 (tie, doc id descending)
    assert q2["mrr"] == pytest.approx(0.5) and q2["ndcg@3"] == pytest.approx(1 / np.log2(3))
    assert rows["q3"]["status"] == "missing" and rows["q3"]["map"] == 0.0
    assert rep.aggregates["map"].value == pytest.approx(((1 / 3 + 2 / 4) / 3 + 0.5 + 0) / 3)
    assert rep.coverage is not None and (rep.coverage.answered, rep.coverage.total) == (2, 3)
    assert rep.counts["queries_without_relevant"] == 1 and rep.counts["unknown_run_queries"] == 1


def test_same_numbers_as_ir_measures(files: tuple[Path, Path]) -> None:
    ir_measures = pytest.importorskip(
        "ir_measures", reason="ir-measures not installed (pip install ir-measures)"
    )
    from ir_measures import AP, RR, P, R, Success, nDCG

    q, r = files
    rep = score_ranked(read_qrels(q), read_run(r), ks=(1, 3, 5, 10), n_boot=50)
    rows = {x["item_id"]: x for x in rep.per_item}
    measures = {"map": AP, "mrr": RR}
    for k in (1, 3, 5, 10):
        measures.update(
            {
                f"recall@{k}": R @ k,
                f"precision@{k}": P @ k,
                f"ndcg@{k}": nDCG @ k,
                f"success@{k}": Success @ k,
            }
        )
    inv = {v: k for k, v in measures.items()}
    qrels = list(ir_measures.read_trec_qrels(str(q)))
    run = list(ir_measures.read_trec_run(str(r)))
    seen = 0
    for m in ir_measures.iter_calc(list(measures.values()), qrels, run):
        if m.query_id in rows:
            assert rows[m.query_id][inv[m.measure]] == pytest.approx(m.value), (m.query_id, m.measure)
            seen += 1
    assert seen >= 2 * len(measures)


def test_trec_round_trip_and_jsonl(files: tuple[Path, Path], tmp_path: Path) -> None:
    q, r = files
    qrels, run = read_qrels(q), read_run(r)
    write_trec_qrels(qrels, tmp_path / "q2.txt")
    write_trec_run(run, tmp_path / "r2.txt")
    assert read_qrels(tmp_path / "q2.txt") == qrels
    a = score_ranked(qrels, run, n_boot=50)
    b = score_ranked(read_qrels(tmp_path / "q2.txt"), read_run(tmp_path / "r2.txt"), n_boot=50)
    assert [x["map"] for x in a.per_item] == [x["map"] for x in b.per_item]
    # the same run as JSONL (ranked lists, no scores) gives the same numbers
    jl = tmp_path / "run.jsonl"
    jl.write_text("\n".join(json.dumps({"qid": k, "results": rank_docs(v)}) for k, v in run.items()) + "\n")
    c = score_ranked(qrels, read_run(jl), n_boot=50)
    assert [x["ndcg@10"] for x in a.per_item] == [x["ndcg@10"] for x in c.per_item]


def test_shared_topic_queries_with_a_perfect_and_a_reversed_run(tmp_path: Path) -> None:
    from openxiv.corpus.shared import SharedData

    path = SharedData.default().gold("topic_queries_dev.jsonl")
    if not path.is_file():
        pytest.skip(f"{path} not found (set OPENXIV_SHARED)")
    qrels = read_qrels(path)
    perfect = {qid: [(d, 1.0 / (i + 1)) for i, d in enumerate(sorted(rel))] for qid, rel in qrels.items()}
    rep = score_ranked(qrels, perfect, ks=(10, 100), n_boot=50)
    assert rep.aggregates["map"].value == 1.0 and rep.aggregates["recall@100"].value == 1.0
    half = dict(list(perfect.items())[: len(perfect) // 2])
    rep = score_ranked(qrels, half, ks=(10,), n_boot=50)
    assert rep.aggregates["map"].value == pytest.approx((len(perfect) // 2) / len(perfect))


def test_fast_score_query_equals_the_registered_metrics() -> None:
    from openxiv.evaluator.ranked import score_query, score_query_reference

    rng = np.random.default_rng(5)
    for _ in range(300):
        docs = [f"d{i}" for i in rng.permutation(60)[: rng.integers(0, 40)]]
        relevant = {f"d{i}" for i in rng.choice(60, size=rng.integers(0, 12), replace=False)}
        ks = (1, 3, 10, 50)
        fast, ref = score_query(docs, relevant, ks), score_query_reference(docs, relevant, ks)
        assert fast.keys() == ref.keys()
        for m in fast:
            assert fast[m] == pytest.approx(ref[m]), (m, docs, relevant)
