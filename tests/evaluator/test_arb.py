"""AutoResearchBench scoring: the official result file, deep conventions, passes, missing items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openxiv.evaluator.arb import score_arb
from openxiv.evaluator.arb_rows import ArbOptions
from openxiv.evaluator.io import read_arb_gold, read_submission
from openxiv.evaluator.matching import Matcher

OPTS = ArbOptions(n_boot=200)


def write(tmp_path: Path, name: str, lines: list[dict]) -> Path:
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return p


def test_reproduces_the_official_wide_result_file(arb_dir: Path) -> None:
    official = json.loads((arb_dir / "sample_inference_output_wide_eval_results.json").read_text())
    gold = read_arb_gold(arb_dir / "academic_widesearch_example.jsonl")
    report = score_arb(gold, read_submission(arb_dir / "sample_inference_output_wide.jsonl"), Matcher(), OPTS)
    ours = report.extra["official_wide"]
    assert ours == official["aggregate_stats"]  # every key, every value
    assert ours["avg_turn_count"] == 5.6 and ours["avg_tool_call_count"] == 4.2
    assert ours["avg_last_tokens"] == 2882.4 and ours["total_tokens"] == 14412
    assert ours["avg_total_duration_sec"] == 15.7003 and ours["total_duration_sec"] == 78.5016
    # per record and pass, the same numbers as the official per_record_results
    rows = {r["label"]: r for r in report.per_item}
    for rec in official["per_record_results"]:
        (want,) = rec["pass_results"]
        (got,) = rows[rec["question"]]["passes"]
        assert (
            got["iou"] == want["iou"]
            and got["recall"] == want["recall"]
            and got["precision"] == want["precision"]
        )
        assert got["n_gold"] == want["gt_count"] and got["n_pred"] == want["predicted_count"]
        assert got["hits"] == want["hit_count"] and got["last_tokens"] == want["last_tokens"]
        assert got["turns"] == want["turn_count"] and got["tool_calls"] == want["tool_call_count"]
        assert got["duration_sec"] == want["total_duration"]
        assert sorted(x.split()[0] for x in got["missed"]) == sorted(want["missed_ids"])
        assert got["extra"] == want["extra_ids"] == [] and got["matched"] == want["hit_ids"] == []
    for m in ("iou", "precision", "recall", "f1", "accuracy"):
        assert report.aggregates[m].value == 0.0
    assert report.aggregates["turns"].value == pytest.approx(5.6)
    assert report.coverage is not None and report.coverage.fraction == 1.0


def test_inference_output_is_its_own_gold(arb_dir: Path) -> None:
    path = arb_dir / "sample_inference_output_wide.jsonl"
    report = score_arb(read_arb_gold(path), read_submission(path), Matcher(), OPTS)
    official = json.loads((arb_dir / "sample_inference_output_wide_eval_results.json").read_text())
    assert report.extra["official_wide"] == official["aggregate_stats"]


def test_deep_items(arb_dir: Path, tmp_path: Path) -> None:
    gold = read_arb_gold(arb_dir / "academic_deepsearch_example.jsonl")
    sub = write(tmp_path, "s.jsonl", [
        {"qid": "1", "predictions": ["arXiv:2204.05525v2"]},  # id spelling -> correct
        {"qid": "3", "predictions": ["2011.03802", "2203.15859"]},  # only the first candidate counts
        {"qid": "4", "predictions": ["2203.15859"], "state": "none"},  # explicit none on a real answer -> 0
        {"qid": "5", "predictions": ["daBNN: A Super Fast Inference Framework for Binary Neural Networks on ARM devices"]},
        {"qid": "6", "predictions": ["2301.0001"]},  # malformed
        {"qid": "99", "predictions": []},  # not in the gold: listed, not scored
    ])  # fmt: skip
    rep = score_arb(gold, read_submission(sub), Matcher(), OPTS)
    acc = {r["item_id"]: r["accuracy"] for r in rep.per_item}
    assert acc == {
        "1": 1.0,
        "2": 0.0,
        "3": 1.0,
        "4": 0.0,
        "5": 1.0,
        "6": 0.0,
        "7": 0.0,
        "8": 0.0,
        "9": 0.0,
        "10": 0.0,
    }
    assert rep.aggregates["accuracy"].value == pytest.approx(0.3) and rep.aggregates["accuracy"].n == 10
    assert rep.coverage is not None and (rep.coverage.answered, rep.coverage.total) == (5, 10)
    assert rep.counts["missing_items"] == 5 and rep.counts["unknown_submission_items"] == 1
    assert rep.counts["n_malformed"] == 1 and rep.counts["n_title_matches"] == 1
    flags = {r["item_id"]: r["details"].get("flags", []) for r in rep.per_item}
    assert any("leftover" in f for f in flags["4"]) and any("no submission" in f for f in flags["2"])
    # all candidates counting: item 3 now predicts two papers for one gold -> wrong
    rep_all = score_arb(gold, read_submission(sub), Matcher(), ArbOptions(max_candidates=None, n_boot=50))
    assert {r["item_id"]: r["accuracy"] for r in rep_all.per_item}["3"] == 0.0


def test_none_answers(tmp_path: Path) -> None:
    gold = read_arb_gold(write(tmp_path, "g.jsonl", [
        {"qid": "a", "question": "qa", "answer": ["None"], "arxiv_id": "None"},
        {"qid": "b", "question": "qb", "answer": [], "arxiv_id": [], "type": "deep"},
        {"qid": "c", "question": "qc", "answer": ["None"], "arxiv_id": "none"},
        {"qid": "d", "question": "qd", "answer": ["None"], "arxiv_id": "none"},
    ]))  # fmt: skip
    sub = read_submission(write(tmp_path, "s.jsonl", [
        {"qid": "a", "predictions": [], "state": "none"},  # explicit none -> 1
        {"qid": "b", "predictions": []},  # empty prediction -> 1
        {"qid": "c", "predictions": ["2301.00001"]},  # a paper where none exists -> 0
    ]))  # fmt: skip
    rep = score_arb(gold, sub, Matcher(), OPTS)
    got = {r["item_id"]: (r["accuracy"], r["iou"], r["f1"]) for r in rep.per_item}
    assert got == {"a": (1.0, 1.0, 1.0), "b": (1.0, 1.0, 1.0), "c": (0.0, 0.0, 0.0), "d": (0.0, 0.0, 0.0)}


def test_passes_best_of_k_and_pass_at_k(tmp_path: Path) -> None:
    gold = read_arb_gold(write(tmp_path, "g.jsonl", [
        {"qid": "w", "question": "qw", "arxiv_id": ["2301.00001", "2301.00002"]},
        {"qid": "m", "question": "qm", "arxiv_id": ["2301.00003"]},
    ]))  # fmt: skip
    sub = read_submission(write(tmp_path, "s.jsonl", [
        {"qid": "w", "pass_id": 0, "predictions": ["2301.00001"]},  # IoU 1/2
        {"qid": "w", "pass_id": 1, "predictions": ["2301.00001", "2301.00002"]},  # IoU 1, exact
        {"qid": "w", "pass_id": 2, "predictions": []},  # IoU 0
        {"qid": "w", "pass_id": 3, "predictions": ["2301.00009"]},  # IoU 0
    ]))  # fmt: skip
    rep = score_arb(gold, sub, Matcher(), OPTS)
    w, m = rep.per_item
    assert w["iou"] == pytest.approx(0.375) and w["accuracy"] == pytest.approx(0.25)
    assert w["best_iou@1"] == pytest.approx(0.375)
    # passes' IoU [0.5, 1, 0, 0]; the max over the C(4,2) = 6 pairs: 1, .5, .5, 1, 1, 0
    assert w["best_iou@2"] == pytest.approx((1 + 0.5 + 0.5 + 1 + 1 + 0) / 6)
    assert w["best_iou@4"] == 1.0 and w["best_iou@8"] is None
    assert w["pass@1"] == pytest.approx(0.25) and w["pass@2"] == pytest.approx(0.5) and w["pass@4"] == 1.0
    assert w["accuracy@1"] == 0.0
    # the missing item is 0 for every k the submission ran (up to 4 passes), undefined beyond
    assert m["best_iou@4"] == 0.0 and m["pass@2"] == 0.0 and m["best_iou@8"] is None
    assert rep.aggregates["best_iou@2"].n == 2
    off = rep.extra["official_wide"]
    assert off["total_pass_results"] == 4 and off["avg_iou"] == pytest.approx(0.375)
    assert off["avg_max_iou_at_8"] == 0.0  # the official scorer reports 0 when no record has k passes


def test_type_breakdown_with_mixed_gold(arb_dir: Path, tmp_path: Path) -> None:
    lines = [
        json.loads(x) for x in (arb_dir / "academic_deepsearch_example.jsonl").read_text().splitlines()[:2]
    ]
    lines += [
        json.loads(x) for x in (arb_dir / "academic_widesearch_example.jsonl").read_text().splitlines()[:2]
    ]
    gold = read_arb_gold(write(tmp_path, "g.jsonl", lines))
    sub = read_submission(
        write(tmp_path, "s.jsonl", [{"question": lines[2]["question"], "predictions": lines[2]["arxiv_id"]}])
    )
    rep = score_arb(gold, sub, Matcher(), OPTS)
    assert set(rep.breakdowns["type"]) == {"deep", "wide"}
    assert rep.breakdowns["type"]["wide"]["iou"].value == pytest.approx(0.5)
    assert rep.breakdowns["type"]["deep"]["accuracy"].value == 0.0


def test_items_with_one_to_six_passes_get_the_registry_values_of_their_passes(tmp_path: Path) -> None:
    """Item metrics are computed over arrays, grouped by pass count: each equals the scalar registry
    function on that item's own pass rows (including best_iou@k and pass@k past two passes)."""
    import random

    from openxiv.evaluator import metrics as M

    rng = random.Random(7)
    gold, sub = [], []
    for q in range(60):
        ids = [f"2{rng.randint(301, 312)}.{rng.randint(0, 99999):05d}" for _ in range(rng.randint(1, 6))]
        gold.append({"qid": f"q{q}", "question": f"question {q}", "answer": [], "arxiv_id": ids})
        results = []
        for p in rng.sample(range(8), rng.randint(1, 6)):
            cands = [{"arxiv_id": i} for i in ids if rng.random() < 0.6] + [
                {"arxiv_id": "2401.00001"}
            ] * rng.randint(0, 2)
            res: dict[str, object] = {"pass_id": p, "final_candidates": cands}
            if rng.random() < 0.7:  # efficiency fields on some passes only
                res["turn_details"] = [
                    {"action": "tool", "duration": rng.random(), "input_tokens": 5, "output_tokens": 1}
                ] * rng.randint(1, 4)
            results.append(res)
        sub.append(
            {"input_data": {"qid": f"q{q}", "question": f"question {q}"}, "inference_results": results}
        )
    report = score_arb(
        read_arb_gold(write(tmp_path, "g.jsonl", gold)), read_submission(write(tmp_path, "s.jsonl", sub)),
        Matcher(), ArbOptions(max_candidates=None, n_boot=50),
    )  # fmt: skip
    assert {r["n_passes"] for r in report.per_item} == {1, 2, 3, 4, 5, 6}
    for row in report.per_item:
        passes = row["passes"]
        for p in passes:
            for name in ("iou", "precision", "recall", "f1", "accuracy"):
                assert p[name] == M.get_metric(name).fn(p["hits"], p["n_pred"], p["n_gold"])
        for name in ("iou", "precision", "recall", "f1", "accuracy"):
            assert row[name] == M.mean_at_k([p[name] for p in passes])
        assert row["accuracy@1"] == passes[0]["accuracy"] and passes == sorted(
            passes, key=lambda p: p["pass_id"]
        )
        for k in (1, 2, 4, 8):
            enough = len(passes) >= k
            assert row[f"best_iou@{k}"] == (M.best_of_k([p["iou"] for p in passes], k) if enough else None)
            assert row[f"pass@{k}"] == (M.pass_at_k([p["accuracy"] for p in passes], k) if enough else None)
        durations = [p["duration_sec"] for p in passes if p["duration_sec"] is not None]
        assert row["duration_sec"] == (M.mean_at_k(durations) if durations else None)
