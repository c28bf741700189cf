"""DeepResearch Bench's RACE and FACT numbers as FINDER reports them (docs/evaluator.md, "FINDER").

* `race_item`: one report's RACE from per-criterion judge scores of the target and of the
  reference report. Per dimension d: ``S_d = Σ_c w_c · s_c`` (criterion weights of the task);
  ``total = Σ_d W_d · S_d`` (dimension weights); the reported dimension score is
  ``S_d(target) / (S_d(target) + S_d(reference))`` and ``overall = total(target) / (total(target) +
  total(reference))``. A score whose criterion text is not in the task's list is matched
  case-insensitively, then by containment, else it gets the dimension's average weight.
* `race_aggregates`: the plain mean of each per-report score over the reports, as
  ``race_result.txt`` prints it (4 decimals); `race_check` compares the two.
* `fact_aggregates`: citations per report, valid citations per report and the valid rate
  (Σ valid / Σ citations) from per-report citation records.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from openxiv.evaluator.io import EvalInputError, iter_jsonl

__all__ = ["DIMENSIONS", "fact_aggregates", "race_aggregates", "race_check", "race_item", "read_result_txt"]

DIMENSIONS = ("comprehensiveness", "insight", "instruction_following", "readability")
RACE_COLUMNS = (*DIMENSIONS, "overall_score")
_LABELS = {"comprehensiveness": "Comprehensiveness", "insight": "Insight",
           "instruction_following": "Instruction Following", "readability": "Readability",
           "overall_score": "Overall Score"}  # fmt: skip


def _weight(criteria: list[dict[str, Any]], text: str) -> float:
    low = text.strip().lower()
    for exact in (True, False):
        for c in criteria:
            name = str(c["criterion"]).strip()
            if (name == text.strip()) if exact else (name.lower() == low):
                return float(c["weight"])
    for c in criteria:
        name = str(c["criterion"]).strip().lower()
        if low and (low in name or name in low):
            return float(c["weight"])
    return sum(float(c["weight"]) for c in criteria) / len(criteria) if criteria else 0.0


def _dimension_scores(task: dict[str, Any], scores: dict[str, list[dict[str, Any]]]) -> dict[str, float]:
    out = {}
    for d in DIMENSIONS:
        crit = task["criterions"].get(d, [])
        out[d] = sum(_weight(crit, str(s["criterion"])) * float(s["score"]) for s in scores.get(d, []))
    return out


def race_item(task: dict[str, Any], target: dict[str, list[dict[str, Any]]],
              reference: dict[str, list[dict[str, Any]]]) -> dict[str, float]:  # fmt: skip
    """``{dimension: normalised score, "overall_score": ...}`` of one report (module docstring)."""
    t, r = _dimension_scores(task, target), _dimension_scores(task, reference)
    weights = task["dimension_weight"]
    out = {d: t[d] / (t[d] + r[d]) if t[d] + r[d] else 0.0 for d in DIMENSIONS}
    tt = sum(float(weights[d]) * t[d] for d in DIMENSIONS)
    rt = sum(float(weights[d]) * r[d] for d in DIMENSIONS)
    out["overall_score"] = tt / (tt + rt) if tt + rt else 0.0
    return out


def race_aggregates(raw_results: Path) -> dict[str, float]:
    """Mean of every RACE column over the reports of ``raw_results.jsonl`` (full precision)."""
    sums = dict.fromkeys(RACE_COLUMNS, 0.0)
    n = 0
    for line, obj in iter_jsonl(raw_results):
        try:
            for c in RACE_COLUMNS:
                sums[c] += float(obj[c])
        except (KeyError, TypeError, ValueError):
            raise EvalInputError(
                f"{raw_results} line {line}: needs numeric {', '.join(RACE_COLUMNS)}"
            ) from None
        n += 1
    if not n:
        raise EvalInputError(f"{raw_results}: no results")
    return {c: s / n for c, s in sums.items()}


def read_result_txt(path: Path) -> dict[str, str]:
    """``label -> value text`` of an official ``*_result.txt`` (``Label: value`` lines)."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*([^:]+):\s*(\S+)\s*$", line)
        if m:
            out[m.group(1).strip()] = m.group(2)
    return out


def race_check(raw_results: Path, race_result: Path) -> dict[str, Any]:
    """Recomputed aggregates next to the official file's, compared at the file's own precision."""
    ours = race_aggregates(raw_results)
    official = read_result_txt(race_result)
    rows = {}
    for c in RACE_COLUMNS:
        text = official.get(_LABELS[c])
        digits = len(text.split(".")[1]) if text and "." in text else 4
        mine = f"{ours[c]:.{digits}f}"
        rows[c] = {"recomputed": ours[c], "recomputed_text": mine, "official": text, "equal": mine == text}
    return {"columns": rows, "reproduced": all(r["equal"] for r in rows.values())}


def fact_aggregates(records: list[dict[str, Any]]) -> dict[str, float]:
    """FACT from ``[{id, citations: [{valid: bool, ...}]}]``: per-report means and Σ valid / Σ cited."""
    cited = [len(r.get("citations") or []) for r in records]
    valid = [sum(bool(c.get("valid")) for c in r.get("citations") or []) for r in records]
    n = len(records)
    return {
        "total_citations": sum(cited) / n if n else 0.0,
        "total_valid_citations": sum(valid) / n if n else 0.0,
        "valid_rate": sum(valid) / sum(cited) if sum(cited) else 0.0,
    }
