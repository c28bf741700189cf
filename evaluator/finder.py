"""FINDER (OPPO-PersonalAI/FINDER_DEFT): checklist pass rate with a judge, RACE and FACT aggregates.

**Checklist** (docs/evaluator.md, "FINDER"): one judge call per (report, checklist item) with the
benchmark's parameters (temperature 0.1, at most 2,000 tokens). A task's ``pass_rate`` = items met /
items judged; the aggregate is the mean over tasks with a bootstrap CI (tasks are the sampled unit),
and ``extra.checklist.micro_pass_rate`` = Σ met / Σ judged, the benchmark's own aggregate. A task
without a report (or with an empty one, or FINDER's ``"[生成失败]"``) scores 0 on every item (the
benchmark skips it) and counts against coverage. With the strict parser an item the judge could not
answer is left out of its task's denominator and counted (``unjudged``); with ``--parser upstream``
it counts as not met, as the benchmark does.

**RACE** is recomputed from the official per-report scores (`race_aggregates`), and from
per-criterion judge scores with the criteria weights (`race_item`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from openxiv.evaluator.io import EvalInputError, iter_jsonl
from openxiv.evaluator.judge import Judge, JudgeRequest, Prompt, messages, run_yes_no
from openxiv.evaluator.report import Aggregate, Coverage, EvalReport
from openxiv.evaluator.stats import aggregate_rows, breakdown

__all__ = ["CHECKLIST_PARAMS", "FAILED_ARTICLE", "Task", "read_checklist", "read_reports", "score_checklist"]

CHECKLIST_PARAMS: tuple[float, int] = (0.1, 2000)
"""FINDER's checklist judge temperature and token limit (its README and `checklist_eval/llm_judge.py`)."""
FAILED_ARTICLE = "[生成失败]"
"""FINDER's marker of a report the agent failed to write."""


@dataclass(frozen=True)
class Task:
    id: str
    topic: str
    language: str
    prompt: str
    items: tuple[tuple[str, str], ...]  # (title, description)


def read_checklist(path: Path) -> list[Task]:
    tasks = []
    for n, obj in iter_jsonl(path):
        items = obj.get("checklist")
        if "id" not in obj or not isinstance(items, list) or not items:
            raise EvalInputError(
                f"{path} line {n}: a FINDER task needs 'id' and a non-empty 'checklist' list"
            )
        try:
            pairs = tuple((str(it["title"]), str(it.get("description", ""))) for it in items)
        except (KeyError, TypeError):
            raise EvalInputError(f"{path} line {n}: every checklist item needs a 'title'") from None
        tasks.append(
            Task(str(obj["id"]), str(obj.get("topic") or ""), str(obj.get("language") or ""),
                 str(obj.get("prompt") or ""), pairs)
        )  # fmt: skip
    return tasks


def read_reports(path: Path) -> dict[str, str]:
    """``id -> article`` (``article``, else ``prediction``, as the benchmark reads them)."""
    out: dict[str, str] = {}
    for n, obj in iter_jsonl(path):
        if "id" not in obj:
            raise EvalInputError(f"{path} line {n}: a report needs 'id'")
        text = obj.get("article", obj.get("prediction"))
        if text is not None and not isinstance(text, str):
            raise EvalInputError(f"{path} line {n}: 'article' must be text")
        out[str(obj["id"])] = text or ""
    return out


def _answered(article: str | None) -> bool:
    return bool(article and article.strip() and article.strip() != FAILED_ARTICLE)


def score_checklist(tasks: list[Task], reports: dict[str, str], judge: Judge, prompt: Prompt, *,
                    parser: str = "strict", seed: int = 0, n_boot: int = 1000,
                    name: str = "finder") -> EvalReport:  # fmt: skip
    """Judge every (report, item) pair and build the report (see the module docstring)."""
    requests: list[JudgeRequest] = []
    for t in tasks:
        article = reports.get(t.id)
        if not _answered(article):
            continue
        for k, (title, desc) in enumerate(t.items, 1):
            msgs = messages(prompt, title=title, description=desc, article=article or "", task=t.prompt)
            requests.append(JudgeRequest(f"{t.id}.{k}", prompt.version, msgs, *CHECKLIST_PARAMS))
    verdicts, stats = run_yes_no(judge, requests, parser, prompt)
    by_item = dict(zip((r.item for r in requests), verdicts, strict=True))
    computed = stats.reason is None
    rows, met_total, judged_total, items_total = [], 0, 0, 0
    for t in tasks:
        answered = _answered(reports.get(t.id))
        met = judged = 0
        items = []
        for k, (title, _) in enumerate(t.items, 1):
            v = by_item.get(f"{t.id}.{k}") if answered else False
            if v is None and parser == "upstream" and answered:
                v = False  # the benchmark counts a failed judgement as not met
            items.append({"item": k, "title": title, "met": v})
            met += v is True
            judged += v is not None
        items_total += len(t.items)
        met_total, judged_total = met_total + met, judged_total + judged
        rate = met / judged if (computed and judged) else None
        rows.append({
            "item_id": t.id, "label": t.prompt[:80], "topic": t.topic, "language": t.language,
            "pass_rate": rate, "items": len(t.items), "items_met": met if computed else None,
            "details": {"matched": [i["title"] for i in items if i["met"] is True],
                        "missed": [i["title"] for i in items if i["met"] is False],
                        "flags": [f"not judged: {i['title']}" for i in items if i["met"] is None]
                        + ([] if answered else ["no report: every item scores 0"])},
        })  # fmt: skip
    metrics = ["pass_rate"]
    aggregates = aggregate_rows(rows, metrics, seed=seed, n_boot=n_boot)
    if not computed:
        aggregates = {"pass_rate": Aggregate(None, None, None, 0)}
    answered_n = sum(_answered(reports.get(t.id)) for t in tasks)
    micro = met_total / judged_total if computed and judged_total else None
    return EvalReport(
        name=name, benchmark="finder", metrics=metrics, per_item=rows, aggregates=aggregates,
        conventions={
            "pass_rate": "per task: items met / items judged; aggregate: mean over tasks, bootstrap 95% CI",
            "judge": stats.line(),
            "parser": "strict: the last yes/no word decides, else not judged" if parser == "strict"
            else "upstream: 'yes'/'true' in the text and no 'no'/'false' anywhere (substrings: 'not' is a no)",
            "missing report": "every item of the task scores 0 (the benchmark skips it)",
        },
        counts={"tasks": len(tasks), "checklist_items": items_total, "reports": answered_n,
                "judgements": stats.requests, "judge_cache_hits": stats.cache_hits,
                "judge_unjudged": stats.unjudged, "micro_pass_rate": micro},
        coverage=Coverage(answered=answered_n, total=len(tasks)),
        breakdowns={by: breakdown(rows, metrics, by, seed, n_boot) for by in ("topic", "language")} if computed else {},
        headline=metrics,
        extra={"judge": {"pass_rate": stats.as_dict()},
               "checklist": {"micro_pass_rate": micro, "met": met_total, "judged": judged_total,
                             "items": items_total, "parser": parser, "prompt_source": prompt.source}},
    )  # fmt: skip
