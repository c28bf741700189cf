"""AutoResearchBench scoring: deep (exact-set accuracy) and wide (IoU/P/R/F1) items, passes, efficiency.

The conventions are the ``CONVENTIONS`` dict below; every report carries them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from openxiv.evaluator import metrics as M
from openxiv.evaluator.arb_judge import TitleJudge, judged_rows
from openxiv.evaluator.arb_rows import EFFICIENCY, KS, SET_METRICS, ArbOptions
from openxiv.evaluator.gcpause import gc_paused
from openxiv.evaluator.io import GoldItem, SubmissionItem
from openxiv.evaluator.matching import Matcher
from openxiv.evaluator.report import Coverage, EvalReport
from openxiv.evaluator.stats import aggregate_rows, breakdown

__all__ = ["pair_items", "score_arb"]

CONVENTIONS = {
    "deep": "only the first max_candidates (default 1, as the benchmark) candidates of a pass count; the pass "
    "is correct iff the predicted set equals the gold set (ids first, title fallback; the benchmark asks an "
    "LLM whether titles match, we never call a model)",
    "none_answer": "a gold answer of 'None' (or an empty gold) is answered correctly only by an explicit "
    "'none' state or an empty prediction (both empty -> every set metric is 1)",
    "none_state": "final_candidate_state 'none' is an explicit abstention: the prediction is the empty set "
    "(the agent clears its list on 'none'; leftover candidates are ignored and flagged)",
    "wide": "all candidates count; per pass IoU, precision, recall, F1; item value = mean over its passes "
    "(mean@k); aggregate = mean over gold items. The official wide scorer's numbers (mean over all passes "
    "of all submitted records, efficiency) are in extra.official_wide",
    "passes": "best_iou@k = exact E[max IoU over a random k-subset of passes] for items with >= k passes; "
    "pass@k = unbiased estimator of 'some of k passes is exactly right'; accuracy@1 = the lowest pass_id",
    "missing": "a gold item without a submission scores 0 on every metric (even a 'None' item; on pass@k and "
    "best_iou@k for every k up to the most passes any item has) and lowers coverage; submission items that "
    "match no gold item are listed, not scored",
    "efficiency": "per pass, as the official scorer: turns = len(turn_details), tool_calls = turns whose "
    "action is 'tool', last_tokens = input + output tokens of the last turn, duration_sec = sum of turn "
    "durations rounded to 4 decimals (total_time when there are no turn details); item = mean over passes",
}


def _key(text: str | None) -> str:
    return " ".join((text or "").split())


def pair_items(
    gold: Sequence[GoldItem], subs: Sequence[SubmissionItem]
) -> tuple[dict[str, SubmissionItem], list[SubmissionItem]]:
    """Submission item per gold item id (by ``qid``, else by question text) and the unmatched submissions."""
    by_id = {g.item_id: g for g in gold}
    by_q: dict[str, GoldItem] = {}
    for item in gold:
        by_q.setdefault(_key(item.question), item)
    out: dict[str, SubmissionItem] = {}
    unknown: list[SubmissionItem] = []
    for s in subs:
        g = by_id.get(s.qid) if s.qid is not None else None
        if g is None and s.question:
            g = by_q.get(_key(s.question))
        if g is None or g.item_id in out:
            unknown.append(s)
            continue
        out[g.item_id] = s
    return out, unknown


def official_wide(rows: Sequence[dict[str, Any]], ks: Sequence[int] = KS) -> dict[str, Any]:
    """The official wide scorer's ``aggregate_stats``: means over ALL passes of the submitted wide records.

    As the official scorer, records without a submission are not part of this block (they are in our
    aggregates, at 0), and avg_max_iou_at_k is 0.0 when no record has k passes.
    """
    recs = [r for r in rows if r["type"] == "wide" and r["passes"]]
    passes = [p for r in recs for p in r["passes"]]

    def avg(key: str) -> float:
        vals = [p[key] for p in passes if p[key] is not None]
        return round(float(np.mean(vals)), 4) if vals else 0.0

    out: dict[str, Any] = {
        "total_records": len(recs),
        "total_passes": max((len(r["passes"]) for r in recs), default=0),
        "total_pass_results": len(passes),
    }
    for k in ks:
        vals = [r[f"best_iou@{k}"] for r in recs if r.get(f"best_iou@{k}") is not None]
        out[f"avg_max_iou_at_{k}"] = round(float(np.mean(vals)), 4) if vals else 0.0
    out.update(avg_iou=avg("iou"), avg_recall=avg("recall"), avg_precision=avg("precision"))
    out.update(avg_last_tokens=avg("last_tokens"), avg_total_duration_sec=avg("duration_sec"))
    out.update(avg_turn_count=avg("turns"), avg_tool_call_count=avg("tool_calls"))
    out["total_tokens"] = int(sum(p["last_tokens"] or 0 for p in passes))
    out["total_duration_sec"] = round(sum(p["duration_sec"] or 0.0 for p in passes), 4)
    ious = [p["iou"] for p in passes] or [0.0]
    recalls = [p["recall"] for p in passes] or [0.0]
    out["iou_distribution"] = {"max": max(ious), "min": min(ious)}
    out["recall_distribution"] = {"max": max(recalls), "min": min(recalls)}
    return out


def micro(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Micro averages over all passes of all items: Σhits / Σ|P|, Σhits / Σ|G|, Σhits / Σ|P∪G|."""
    hits = sum(p["hits"] for r in rows for p in r["passes"])
    n_pred = sum(p["n_pred"] for r in rows for p in r["passes"])
    n_gold = sum(p["n_gold"] for r in rows for p in r["passes"])
    return {
        "precision": hits / n_pred if n_pred else 0.0,
        "recall": hits / n_gold if n_gold else 0.0,
        "iou": hits / (n_pred + n_gold - hits) if n_pred + n_gold - hits else 0.0,
    }


def official_deep(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The deep scorer's summary (Accuracy@1, pass@k, mean@k) over submitted deep items, id/title matched."""
    recs = [r for r in rows if r["type"] == "deep" and r["passes"]]
    if not recs:
        return {"total_items": 0}
    acc1 = np.mean([r["accuracy@1"] for r in recs])
    any_ = np.mean([max(p["accuracy"] for p in r["passes"]) for r in recs])
    mean_k = np.mean([r["accuracy"] for r in recs])
    return {
        "total_items": len(recs),
        "k": max(len(r["passes"]) for r in recs),
        "overall_metrics": {"Accuracy@1": f"{acc1:.2%}", "pass@k": f"{any_:.2%}", "mean@k": f"{mean_k:.4f}"},
    }


@gc_paused()
def score_arb(
    gold: Sequence[GoldItem],
    subs: Sequence[SubmissionItem],
    matcher: Matcher,
    opts: ArbOptions | None = None,
    name: str = "autoresearchbench",
    title_judge: TitleJudge | None = None,
) -> EvalReport:
    """Score a submission; ``title_judge`` decides the deep title pairs left open (`openxiv.evaluator.arb_judge`)."""
    opts = opts or ArbOptions()
    paired, unknown = pair_items(gold, subs)
    rows, annotate = judged_rows(gold, paired, matcher, opts, title_judge)
    # A missing item scores 0 on the @k metrics for every k the submission ran (k <= its most passes).
    most = max((r["n_passes"] for r in rows), default=0)
    for r in rows:
        if r["status"] == "missing":
            r.update({f"{m}@{k}": 0.0 for k in opts.ks if k <= max(most, 1) for m in ("pass", "best_iou")})
    types = sorted({g.type for g in gold})
    pass_metrics = [m for k in opts.ks for m in (f"pass@{k}", f"best_iou@{k}")]
    metrics = [*SET_METRICS, "accuracy@1", *pass_metrics, *EFFICIENCY]
    headline = ["accuracy", "accuracy@1", "pass@1"] if types == ["deep"] else []
    headline += ["iou", "precision", "recall", "f1"] + (["accuracy"] if types != ["deep"] else [])
    headline += [m for m in pass_metrics if any(r.get(m) is not None for r in rows) and m not in headline]
    headline += [m for m in EFFICIENCY if any(r.get(m) is not None for r in rows)]
    aggregates = aggregate_rows(rows, metrics, seed=opts.seed, n_boot=opts.n_boot)
    breakdowns = {}
    if len(types) > 1:
        breakdowns["type"] = breakdown(rows, metrics, "type", opts.seed, opts.n_boot)
    if any(r["category"] for r in rows):
        breakdowns["category"] = breakdown(rows, metrics, "category", opts.seed, opts.n_boot)
    total = {
        c: int(sum(r.get(c) or 0 for r in rows)) for c in ("n_duplicates", "n_malformed", "n_title_matches")
    }
    corpus_counts = ("n_hallucinated", "n_after_cutoff", "n_gold_not_in_corpus")
    total.update({c: int(sum(r.get(c) or 0 for r in rows)) for c in corpus_counts})
    counts: dict[str, Any] = {
        "gold_items": len(gold),
        "deep_items": sum(g.type == "deep" for g in gold),
        "wide_items": sum(g.type == "wide" for g in gold),
        "missing_items": sum(r["status"] == "missing" for r in rows),
        "unknown_submission_items": len(unknown),
        "pass_results": sum(r["n_passes"] for r in rows),
        **total,
    }
    extra: dict[str, Any] = {
        "official_wide": official_wide(rows, opts.ks),
        "official_deep": official_deep(rows),
        "micro": micro(rows),
    }
    if unknown:
        extra["unknown_submission_items"] = [
            {"line": s.line, "qid": s.qid, "question": (s.question or "")[:200]} for s in unknown
        ]
    report = EvalReport(
        name=name,
        benchmark="autoresearchbench",
        metrics=metrics,
        per_item=rows,
        aggregates=aggregates,
        conventions=conventions(matcher, opts),
        counts=counts,
        coverage=Coverage(answered=sum(r["status"] == "scored" for r in rows), total=len(rows)),
        breakdowns=breakdowns,
        headline=headline,
        extra=extra,
    )
    if annotate is not None:
        annotate(report)
    return report


def conventions(matcher: Matcher, opts: ArbOptions) -> dict[str, str]:
    return {
        **CONVENTIONS,
        "set_metrics": "; ".join(f"{n}: {M.get_metric(n).formula}" for n in SET_METRICS),
        "best_of_k": M.get_metric("best_of_k").formula,
        "pass@k": M.get_metric("pass@k").formula,
        "deep_max_candidates": "all" if opts.max_candidates is None else str(opts.max_candidates),
        "title_matching": {
            "fuzzy": f"TaxoBench A.5 alignment, threshold {matcher.threshold}, one-to-one, best first",
            "drmi": "Dr.Mi: first 20 characters of the normalised title, one-to-one",
            "off": "ids only",
        }[matcher.title_mode],
        "corpus_db": "given: titles resolve to ids, ids not in the corpus are flagged"
        if matcher.store is not None
        else "not given",
        "cutoff": str(matcher.cutoff) if matcher.cutoff else "none",
        "aggregation": f"mean over all gold items; percentile bootstrap 95% CI, B={opts.n_boot}, seed={opts.seed}",
    }
