"""Dr.Mi-Bench planning and reasoning on hand-made fixtures, judged over HTTP by a scripted server;
every expected number is worked out by hand below."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from openxiv.evaluator.cli import eval_group
from openxiv.evaluator.judge.scripted import ScriptedServer

MATCHES = {("review the scaling laws of diffusion models", "survey scaling laws"),
           ("study scaling laws once more", "survey scaling laws"),
           ("gather benchmark datasets", "collect benchmarks")}  # fmt: skip
CLAIMS = {"c1": "True", "c2": "True", "c3": "False", "c4": "False", "c5": "True", "c6": "True"}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _field(text: str, name: str) -> str:
    return next(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith(name))


def _rule(msgs: list[dict[str, str]]) -> str:
    text = msgs[-1]["content"]
    if "Reference sub-task" in text:
        pair = (_field(text, "Predicted sub-task"), _field(text, "Reference sub-task"))
        return "Yes" if pair in MATCHES else "No"
    return CLAIMS[_field(text, "Claim")]


def _run(tmp_path: Path, task: str, gold: Path, sub: Path) -> dict:
    env = {"OPENXIV_JUDGE_MODEL": "scripted", "OPENXIV_JUDGE_CACHE": str(tmp_path / f"{task}.jsonl"),
           "OPENXIV_JUDGE_RETRIES": "0"}  # fmt: skip
    with ScriptedServer(_rule, faults={"Claim: c6": ["500"]}) as srv:
        res = CliRunner().invoke(eval_group, ["drmi", "--task", task, "-g", str(gold), "-s", str(sub),
                                              "--judge", "openai", "--json", "-"],
                                 env={**env, "OPENXIV_JUDGE_BASE_URL": srv.base_url})  # fmt: skip
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_planning_matrix_worked_by_hand(tmp_path: Path) -> None:
    gold = _write(tmp_path / "plans_gold.jsonl", [
        {"id": "p1", "question": "How do diffusion models scale?",
         "subtasks": ["survey scaling laws", "compare samplers", "collect benchmarks"]},
        {"id": "p2", "question": "Unanswered", "subtasks": ["anything"]},
    ])  # fmt: skip
    sub = _write(tmp_path / "plans.jsonl", [{"id": "p1", "plan": [
        "review the scaling laws of diffusion models", "study scaling laws once more", "gather benchmark datasets",
        "write a poem"]}])  # fmt: skip
    doc = _run(tmp_path, "planning", gold, sub)
    p1 = next(r for r in doc["per_item"] if r["item_id"] == "p1")
    # matrix rows = predicted, columns = gold: [1,0,0], [1,0,0], [0,0,1], [0,0,0]
    assert p1["details"]["matrix"] == [[True, False, False], [True, False, False], [False, False, True],
                                       [False, False, False]]  # fmt: skip
    assert p1["coverage"] == pytest.approx(2 / 3)  # gold 0 and 2 are covered
    assert p1["correctness"] == pytest.approx(3 / 4)  # predicted 0, 1, 2 match something
    assert p1["precision"] == pytest.approx(2 / 4)  # one-to-one matching: 2 pairs
    assert p1["recall"] == pytest.approx(2 / 3)
    assert p1["f1"] == pytest.approx(4 / 7)  # 2 · 1/2 · 2/3 / (1/2 + 2/3)
    assert p1["redundancy"] == pytest.approx(1 / 4)  # predicted 1 repeats predicted 0
    p2 = next(r for r in doc["per_item"] if r["item_id"] == "p2")
    assert p2["coverage"] == 0.0 and doc["coverage"]["answered"] == 1
    assert doc["aggregates"]["coverage"]["value"] == pytest.approx(1 / 3)  # (2/3 + 0) / 2
    assert doc["counts"]["judgements"] == 12 and doc["counts"]["judge_unjudged"] == 0


def test_reasoning_claims_worked_by_hand(tmp_path: Path) -> None:
    gold = _write(tmp_path / "claims.jsonl", [
        {"id": "r1", "claims": [{"claim": "c1", "label": True}, {"claim": "c2", "label": False},
                                {"claim": "c3", "label": True}, {"claim": "c4", "label": False},
                                {"claim": "c5", "label": True}]},
        {"id": "r2", "claims": [{"claim": "c6", "label": True}]},
    ])  # fmt: skip
    sub = _write(tmp_path / "reports.jsonl", [{"id": "r1", "report": "text"}, {"id": "r2", "report": "text"}])
    doc = _run(tmp_path, "reasoning", gold, sub)
    r1 = next(r for r in doc["per_item"] if r["item_id"] == "r1")
    # judge: c1 T (TP), c2 T (FP), c3 F (FN), c4 F (TN), c5 T (TP)
    assert r1["accuracy"] == pytest.approx(3 / 5)
    assert r1["precision"] == pytest.approx(2 / 3) and r1["recall"] == pytest.approx(2 / 3)
    assert r1["f1"] == pytest.approx(2 / 3)
    r2 = next(r for r in doc["per_item"] if r["item_id"] == "r2")
    assert r2["accuracy"] is None  # the judge failed (500, no retries): not judged, never 0
    assert doc["counts"]["judge_unjudged"] == 1 and doc["counts"]["judged_items"] == 1
    assert (
        doc["aggregates"]["accuracy"]["value"] == pytest.approx(3 / 5)
        and doc["aggregates"]["accuracy"]["n"] == 1
    )
    assert "1 not judged" in doc["conventions"]["judge"]
