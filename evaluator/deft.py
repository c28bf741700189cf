"""DEFT failure modes (FINDER_DEFT's ``deft_toolkit``): a judge assigns modes to execution records.

The prompt is the benchmark's own ``assignment.txt`` (placeholders ``{Modes}``: the taxonomy file's
text, ``{Record}``: the record as JSON), sent as one user message. The taxonomy is a Markdown file of
lines ``[level] Name (Count: n): description`` (``seeds.md`` and ``final_DEFT.md`` shapes); a mode's
*dimension* is the level-1 mode above it (a level-1 mode is its own dimension).

The answer's lines ``[k] Mode Label: explanation`` are matched to mode names (case-insensitive).
Strict parser: an answer that is neither ``None`` nor has a line naming a known mode is not judged;
labels not in the taxonomy are counted (``unknown_labels``). ``upstream``: whatever lines match count.

Per record each mode and dimension is 1 or 0; aggregates are shares with bootstrap CIs, plus
``E_i`` (records showing dimension i) and the positive metric ``S = mean_i 100·cos(min(E_i/N, 1)·π/2)``
(the toolkit hard-codes N = 100; ``upstream`` does too).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openxiv.evaluator.io import EvalInputError, iter_jsonl
from openxiv.evaluator.judge import Judge, JudgeRequest, JudgeStats, Prompt, messages
from openxiv.evaluator.judge.parse import answer_text
from openxiv.evaluator.report import Aggregate, Coverage, EvalReport
from openxiv.evaluator.stats import aggregate_rows

__all__ = ["Taxonomy", "parse_modes", "positive_metric", "read_taxonomy", "score_deft"]

_MODE_LINE = re.compile(r"^\[(\d+)\] (.+?)(?: \(Count: (\d+)\))?(?::\s*(.+))?$")
_ANSWER_LINE = re.compile(r"^\s*(?:\[\d+\]\s*)?([^(:\n]+?)(?:\s*\(level\s+\d+\))?\s*:")
DEFT_PARAMS: tuple[float, int] = (0.0, 4000)
"""Temperature and token limit (DEFT's own are not among the shared files: openxiv's choice)."""


@dataclass(frozen=True)
class Taxonomy:
    text: str
    root_of: dict[str, str]  # lowercased mode name -> level-1 mode name
    names: dict[str, str]  # lowercased -> as written
    roots: tuple[str, ...]


def read_taxonomy(path: Path) -> Taxonomy:
    text = path.read_text(encoding="utf-8")
    root_of: dict[str, str] = {}
    names: dict[str, str] = {}
    roots: list[str] = []
    root = None
    for n, line in enumerate(text.splitlines(), 1):
        m = _MODE_LINE.match(line.strip())
        if not m:
            continue
        level, name = int(m.group(1)), m.group(2).strip()
        if level == 1:
            root = name
            roots.append(name)
        if root is None:
            raise EvalInputError(f"{path} line {n}: a level-{level} mode before any level-1 mode")
        root_of[name.lower()] = root
        names[name.lower()] = name
    if not roots:
        raise EvalInputError(f"{path}: no '[1] Mode: description' lines")
    return Taxonomy(text, root_of, names, tuple(roots))


def parse_modes(answer: str, tax: Taxonomy, parser: str) -> tuple[set[str] | None, list[str]]:
    """``(modes found, unknown labels)``; modes ``None`` = unparseable (strict parser only)."""
    found: set[str] = set()
    unknown: list[str] = []
    for line in answer.splitlines():
        m = _ANSWER_LINE.match(line)
        if not m:
            continue
        label = m.group(1).strip().lower()
        if label in tax.names:
            found.add(tax.names[label])
        else:
            unknown.append(m.group(1).strip())
    if parser == "strict" and not found and answer.strip().strip('".').lower() != "none":
        return None, unknown
    return found, unknown


def positive_metric(counts: dict[str, int], n: int) -> dict[str, float]:
    """``S_i = 100·cos(min(E_i/n, 1)·π/2)`` per dimension and their mean ``S``."""
    s = {k: 100 * math.cos(min(e / n, 1.0) * math.pi / 2) if n else 100.0 for k, e in counts.items()}
    return {**{f"S[{k}]": v for k, v in s.items()}, "S": sum(s.values()) / len(s) if s else 0.0}


def score_deft(records_path: Path, tax: Taxonomy, judge: Judge, prompt: Prompt, *, parser: str = "strict",
               seed: int = 0, n_boot: int = 1000, name: str = "deft") -> EvalReport:  # fmt: skip
    records = [(n, obj) for n, obj in iter_jsonl(records_path)]
    for n, obj in records:
        if "id" not in obj:
            raise EvalInputError(f"{records_path} line {n}: an execution record needs 'id'")
    reqs = [
        JudgeRequest(str(o["id"]), prompt.version,
                     messages(prompt, Modes=tax.text.strip(), Record=json.dumps(o, ensure_ascii=False)), *DEFT_PARAMS)
        for _, o in records
    ]  # fmt: skip
    stats = JudgeStats(judge.backend, judge.model, prompt.version, reason=judge.unavailable)
    answers = judge.answer(reqs) if not judge.unavailable else []
    rows, unknown_total = [], 0
    for i, (_, o) in enumerate(records):
        a = answers[i] if answers else None
        modes: set[str] | None = None
        unknown: list[str] = []
        if a is not None and a.text is not None:
            modes, unknown = parse_modes(answer_text(a.text, a.reasoning), tax, parser)
            if modes is None:
                a.text, a.error = None, "unparseable"
        unknown_total += len(unknown)
        row: dict[str, Any] = {"item_id": str(o["id"]), "label": str(o.get("question", ""))[:80]}
        for root in tax.roots:
            row[root] = None if modes is None else float(any(tax.root_of[m.lower()] == root for m in modes))
        row["details"] = {"matched": sorted(modes or []), "flags": [f"unknown label: {u}" for u in unknown]}
        rows.append(row)
    if answers:
        stats.add(answers)
    else:
        stats.requests = stats.unjudged = len(reqs)
    metrics = list(tax.roots)
    judged = [r for r in rows if r[metrics[0]] is not None]
    counts = {root: int(sum(r[root] for r in judged)) for root in tax.roots}
    n_for_s = 100 if parser == "upstream" else len(judged)
    computed = stats.reason is None
    aggregates = aggregate_rows(rows, metrics, seed=seed, n_boot=n_boot) if computed else {
        m: Aggregate(None, None, None, 0) for m in metrics}  # fmt: skip
    return EvalReport(
        name=name, benchmark="deft", metrics=metrics, per_item=rows, aggregates=aggregates,
        conventions={"judge": stats.line(), "modes": "share of judged records showing each dimension (level-1 mode)",
                     "S": f"mean over dimensions of 100·cos(min(E_i/N,1)·π/2), N = {n_for_s}"},
        counts={"records": len(rows), "judged": len(judged), "judge_cache_hits": stats.cache_hits,
                "judge_unjudged": stats.unjudged, "unknown_labels": unknown_total,
                **({f"E[{k}]": v for k, v in counts.items()} if computed else {})},
        coverage=Coverage(answered=len(judged), total=len(rows)),
        headline=metrics,
        extra={"judge": {m: stats.as_dict() for m in metrics},
               "deft": {"E": counts, **positive_metric(counts, n_for_s)} if computed else {"not_computed": stats.reason}},
    )  # fmt: skip
