"""Dr.Mi-Bench planning and reasoning with a judge (arXiv 2512.00986; no official scorer is public).

openxiv's own prompts (``evaluator/judge/prompts/drmi_*.txt``, versioned by the hash of their text).
Formats and the metric definitions are in docs/evaluator.md, "Dr.Mi-Bench planning and reasoning".

**Planning**: the judge fills the matrix M[i][j] = "predicted sub-task i matches gold sub-task j" (one
call per pair). ``coverage`` = gold sub-tasks matched by any predicted one / |G|; ``correctness`` =
predicted sub-tasks matching any gold one / |P|; with m the size of a maximum one-to-one matching in
M: ``precision`` = m/|P|, ``recall`` = m/|G|, ``f1``; ``redundancy`` = (predicted sub-tasks matching
some gold one − m) / |P| (correct but repeating what another already covers).

**Reasoning**: the judge answers every diagnostic claim (true/false) from the report. Against the
gold booleans (positive = true): ``accuracy``, ``precision`` = TP/(TP+FP), ``recall`` = TP/(TP+FN),
``f1``. A missing plan or report scores 0 on every metric (coverage counts it); an item with any
pair or claim the judge could not answer has no value (``None``) and is counted as not judged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from openxiv.evaluator.io import EvalInputError, iter_jsonl
from openxiv.evaluator.judge import Judge, JudgeRequest, Prompt, messages, run_yes_no
from openxiv.evaluator.report import Aggregate, Coverage, EvalReport
from openxiv.evaluator.stats import aggregate_rows

__all__ = [
    "PLANNING_METRICS",
    "REASONING_METRICS",
    "planning_scores",
    "reasoning_scores",
    "score_drmi_judged",
]

PLANNING_METRICS = ["coverage", "correctness", "redundancy", "precision", "recall", "f1"]
REASONING_METRICS = ["accuracy", "precision", "recall", "f1"]
PARAMS: tuple[float, int] = (0.0, 256)
"""Temperature and token limit of openxiv's Dr.Mi prompts."""


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def planning_scores(matrix: list[list[bool]], n_pred: int, n_gold: int) -> dict[str, float]:
    """Planning metrics of one item from its |P|×|G| boolean matrix (module docstring)."""
    if n_pred == 0 or n_gold == 0:
        return dict.fromkeys(PLANNING_METRICS, 0.0)
    m_arr = np.array(matrix, dtype=bool).reshape(n_pred, n_gold)
    rows, cols = linear_sum_assignment(-m_arr.astype(np.float64))
    m = int(m_arr[rows, cols].sum())
    correct = int(m_arr.any(axis=1).sum())
    p, r = m / n_pred, m / n_gold
    return {"coverage": float(m_arr.any(axis=0).sum()) / n_gold, "correctness": correct / n_pred,
            "redundancy": (correct - m) / n_pred, "precision": p, "recall": r, "f1": _f1(p, r)}  # fmt: skip


def reasoning_scores(predicted: list[bool], gold: list[bool]) -> dict[str, float]:
    """Accuracy and P/R/F1 (positive = true) of one paper's claims."""
    tp = sum(p and g for p, g in zip(predicted, gold, strict=True))
    fp = sum(p and not g for p, g in zip(predicted, gold, strict=True))
    fn = sum(g and not p for p, g in zip(predicted, gold, strict=True))
    correct = sum(p == g for p, g in zip(predicted, gold, strict=True))
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return {
        "accuracy": correct / len(gold) if gold else 0.0,
        "precision": prec,
        "recall": rec,
        "f1": _f1(prec, rec),
    }


def _read(path: Path, keys: tuple[str, ...], what: str) -> dict[str, dict[str, Any]]:
    out = {}
    for n, obj in iter_jsonl(path):
        if "id" not in obj or not any(k in obj for k in keys):
            raise EvalInputError(f"{path} line {n}: a {what} needs 'id' and one of {', '.join(keys)}")
        out[str(obj["id"])] = obj
    return out


def _texts(obj: dict[str, Any], keys: tuple[str, ...], path: Path) -> list[str]:
    value: Any = next((obj[k] for k in keys if k in obj), [])
    if not isinstance(value, list):
        raise EvalInputError(f"{path}: item {obj.get('id')}: '{keys[0]}' must be a list")
    return [str(v.get("text", v.get("subtask", ""))) if isinstance(v, dict) else str(v) for v in value]


def _claims(obj: dict[str, Any], path: Path) -> list[tuple[str, bool]]:
    out = []
    for c in obj.get("claims") or []:
        if not isinstance(c, dict) or "claim" not in c or not isinstance(c.get("label"), bool):
            raise EvalInputError(f"{path}: item {obj.get('id')}: a claim needs 'claim' and a boolean 'label'")
        out.append((str(c["claim"]), c["label"]))
    return out


def _requests(task: str, gold: dict[str, dict[str, Any]], sub: dict[str, dict[str, Any]], prompt: Prompt,
              gold_path: Path, sub_path: Path) -> list[JudgeRequest]:  # fmt: skip
    reqs = []
    for iid, g in gold.items():
        s = sub.get(iid)
        if s is None:
            continue
        if task == "planning":
            q = str(g.get("question", ""))
            for i, pred in enumerate(_texts(s, ("plan", "subtasks"), sub_path)):
                for j, gt in enumerate(_texts(g, ("subtasks", "plan"), gold_path)):
                    msgs = messages(prompt, question=q, gold=gt, predicted=pred)
                    reqs.append(JudgeRequest(f"{iid}:{i}:{j}", prompt.version, msgs, *PARAMS))
        else:
            report = str(s.get("report", s.get("article", "")))
            for k, (claim, _) in enumerate(_claims(g, gold_path)):
                msgs = messages(prompt, report=report, claim=claim)
                reqs.append(JudgeRequest(f"{iid}:{k}", prompt.version, msgs, *PARAMS))
    return reqs


def _item_row(task: str, iid: str, g: dict[str, Any], s: dict[str, Any] | None, verdict: dict[str, bool | None],
              gold_path: Path, sub_path: Path) -> dict[str, Any]:  # fmt: skip
    metrics = PLANNING_METRICS if task == "planning" else REASONING_METRICS
    row: dict[str, Any] = {"item_id": iid, "label": str(g.get("question", g.get("title", "")))[:80]}
    if s is None:
        return {**row, **dict.fromkeys(metrics, 0.0), "details": {"flags": ["no submission: scores 0"]}}
    if task == "planning":
        preds, golds = _texts(s, ("plan", "subtasks"), sub_path), _texts(g, ("subtasks", "plan"), gold_path)
        cells = [[verdict.get(f"{iid}:{i}:{j}") for j in range(len(golds))] for i in range(len(preds))]
        if any(c is None for r in cells for c in r):
            return {
                **row,
                **dict.fromkeys(metrics),
                "details": {"flags": ["not judged: a pair has no verdict"]},
            }
        row.update(planning_scores([[bool(c) for c in r] for r in cells], len(preds), len(golds)))
        row["details"] = {"matrix": cells}
        return row
    claims = _claims(g, gold_path)
    got = [verdict.get(f"{iid}:{k}") for k in range(len(claims))]
    if any(v is None for v in got):
        return {**row, **dict.fromkeys(metrics), "details": {"flags": ["not judged: a claim has no verdict"]}}
    row.update(reasoning_scores([bool(v) for v in got], [lab for _, lab in claims]))
    row["details"] = {"missed": [c for (c, lab), v in zip(claims, got, strict=True) if v != lab]}
    return row


def score_drmi_judged(task: str, gold_path: Path, sub_path: Path, judge: Judge, prompt: Prompt, *,
                      parser: str = "strict", seed: int = 0, n_boot: int = 1000) -> EvalReport:  # fmt: skip
    """Score Dr.Mi ``planning`` or ``reasoning`` (module docstring)."""
    if task == "planning":
        gold, sub = (
            _read(gold_path, ("subtasks", "plan"), "gold plan"),
            _read(sub_path, ("plan", "subtasks"), "plan"),
        )
    else:
        gold, sub = (
            _read(gold_path, ("claims",), "claim set"),
            _read(sub_path, ("report", "article"), "report"),
        )
    reqs = _requests(task, gold, sub, prompt, gold_path, sub_path)
    verdicts, stats = run_yes_no(judge, reqs, parser, prompt)
    by_item = dict(zip((r.item for r in reqs), verdicts, strict=True))
    rows = [_item_row(task, iid, g, sub.get(iid), by_item, gold_path, sub_path) for iid, g in gold.items()]
    metrics = PLANNING_METRICS if task == "planning" else REASONING_METRICS
    computed = stats.reason is None
    aggregates = aggregate_rows(rows, metrics, seed=seed, n_boot=n_boot) if computed else {
        m: Aggregate(None, None, None, 0) for m in metrics}  # fmt: skip
    if not computed:
        for r in rows:
            r.update(dict.fromkeys(metrics))
    judged = sum(r[metrics[0]] is not None for r in rows)
    return EvalReport(
        name=f"drmi {task}: {sub_path.name}", benchmark=f"drmi-{task}", metrics=metrics, per_item=rows,
        aggregates=aggregates,
        conventions={"judge": stats.line(), "definitions": "docs/evaluator.md, Dr.Mi-Bench planning and reasoning",
                     "missing": "an item without a submission scores 0; one with an unanswered judgement has no value"},
        counts={"items": len(rows), "submitted": sum(i in sub for i in gold), "judged_items": judged,
                "judgements": stats.requests, "judge_cache_hits": stats.cache_hits, "judge_unjudged": stats.unjudged},
        coverage=Coverage(answered=sum(i in sub for i in gold), total=len(gold)),
        headline=metrics, extra={"judge": {m: stats.as_dict() for m in metrics}},
    )  # fmt: skip
