"""Ranked retrieval evaluation (openxiv's own search): recall@k, precision@k, nDCG@k, MRR, MAP, success@k.

Conventions, chosen to give trec_eval's numbers on the same files:

* Document ids that parse as arXiv ids are compared in canonical form (``2301.00001v2`` = ``2301.00001``);
  other ids are compared as written.
* Ranking: score descending, ties broken by document id descending (trec_eval's rule); a JSONL run
  without scores keeps its list order. A document repeated in one query's run counts once (first place).
* Relevant = judged relevance >= ``rel_level`` (default 1); gains are binary.
* MAP and nDCG's ideal ranking use ALL judged relevant documents of the query, retrieved or not.
* Averages run over every gold query with at least one relevant document; a query missing from the run
  scores 0 on every metric (trec_eval would drop it; this is ``trec_eval -c``) and lowers coverage.
  Gold queries without relevant documents are not scored and are counted separately.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.evaluator import metrics as M
from openxiv.evaluator.gcpause import gc_paused
from openxiv.evaluator.idcache import try_canonical_id
from openxiv.evaluator.report import Coverage, EvalReport
from openxiv.evaluator.stats import DEFAULT_RESAMPLES, aggregate_rows

__all__ = [
    "DEFAULT_KS",
    "rank_docs",
    "ranked_metric_names",
    "score_query",
    "score_query_reference",
    "score_ranked",
    "write_trec_qrels",
    "write_trec_run",
]

DEFAULT_KS = (1, 5, 10, 20, 100)

CONVENTIONS = {
    "ids": "document ids that parse as arXiv ids are compared in canonical form; others as written",
    "ranking": "score descending, ties by document id descending (trec_eval); JSONL runs without scores keep "
    "their order; a repeated document counts once, at its best place",
    "relevance": "binary: judged relevance >= rel_level; MAP and the ideal DCG use ALL judged relevant documents",
    "missing": "averages over every gold query with a relevant document; a query missing from the run scores 0 "
    "(trec_eval -c) and lowers coverage; gold queries without relevant documents are counted, not scored",
}


def _doc_key(doc: str) -> str:
    return try_canonical_id(doc) or doc


def rank_docs(docs: Sequence[tuple[str, float]]) -> list[str]:
    """Document keys best first: score desc, then doc id desc; repeated documents keep their best place."""
    keyed = [(_doc_key(d), s) for d, s in docs]
    keyed.sort(key=lambda ds: ds[0], reverse=True)
    keyed.sort(key=lambda ds: ds[1], reverse=True)  # stable: ties stay in doc-id-descending order
    seen: set[str] = set()
    out = []
    for d, _s in keyed:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def write_trec_run(run: dict[str, list[tuple[str, float]]], path: str | Path, tag: str = "openxiv") -> None:
    """Write ``{qid: [(doc, score)]}`` as a TREC run (``qid Q0 doc rank score tag``), ranks in our order."""
    with Path(path).open("w", encoding="utf-8") as fh:
        for qid in sorted(run):
            scores: dict[str, float] = {}
            for d, sc in run[qid]:
                k = _doc_key(d)
                scores[k] = max(scores.get(k, sc), sc)
            for rank, doc in enumerate(rank_docs(run[qid]), 1):
                fh.write(f"{qid} Q0 {doc} {rank} {scores[doc]!r} {tag}\n")


def write_trec_qrels(qrels: dict[str, dict[str, int]], path: str | Path) -> None:
    """Write ``{qid: {doc: rel}}`` as TREC qrels (``qid 0 doc rel``)."""
    with Path(path).open("w", encoding="utf-8") as fh:
        for qid in sorted(qrels):
            for doc, rel in sorted(qrels[qid].items()):
                fh.write(f"{qid} 0 {doc} {rel}\n")


def ranked_metric_names(ks: Sequence[int]) -> list[str]:
    names = ["map", "mrr", "mrr@10"]
    for k in ks:
        names += [f"recall@{k}", f"precision@{k}", f"ndcg@{k}", f"success@{k}"]
    return names


_DISC = 1.0 / np.log2(np.arange(2, 100_002, dtype=np.float64))


def _disc(n: int) -> np.ndarray:
    return _DISC[:n] if n <= _DISC.size else 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))


def score_query(ranked: Sequence[str], relevant: set[str], ks: Sequence[int]) -> dict[str, float]:
    """Every ranked metric of one query from one relevance vector (cumulative sums, no per-metric pass).

    Same values as the registered functions in `openxiv.evaluator.metrics` (tested against them).
    """
    n_rel = len(relevant)
    h = np.fromiter((d in relevant for d in ranked), dtype=bool, count=len(ranked))
    length = h.size
    if n_rel == 0 or not h.any():
        return dict.fromkeys(ranked_metric_names(ks), 0.0)
    pos = np.flatnonzero(h)  # 0-based ranks of the relevant documents
    cum = np.cumsum(h)
    dcg = np.cumsum(np.where(h, _disc(length), 0.0))
    ideal = np.cumsum(_disc(max(*ks, n_rel)))
    out = {
        "map": float((np.arange(1, pos.size + 1) / (pos + 1)).sum()) / n_rel,
        "mrr": 1.0 / float(pos[0] + 1),
        "mrr@10": 1.0 / float(pos[0] + 1) if pos[0] < 10 else 0.0,
    }
    for k in ks:
        top = min(k, length)
        hits = float(cum[top - 1]) if top else 0.0
        out[f"recall@{k}"] = hits / n_rel
        out[f"precision@{k}"] = hits / k
        out[f"ndcg@{k}"] = (float(dcg[top - 1]) if top else 0.0) / float(ideal[min(k, n_rel) - 1])
        out[f"success@{k}"] = 1.0 if hits > 0 else 0.0
    return out


def score_query_reference(ranked: Sequence[str], relevant: set[str], ks: Sequence[int]) -> dict[str, float]:
    """`score_query` through the registered metric functions one by one (slow; the reference in tests)."""
    out = {
        "map": M.average_precision(ranked, relevant),
        "mrr": M.mrr(ranked, relevant),
        "mrr@10": M.mrr(ranked, relevant, 10),
    }
    for k in ks:
        out[f"recall@{k}"] = M.recall_at_k(ranked, relevant, k)
        out[f"precision@{k}"] = M.precision_at_k(ranked, relevant, k)
        out[f"ndcg@{k}"] = M.ndcg_at_k(ranked, relevant, k)
        out[f"success@{k}"] = M.success_at_k(ranked, relevant, k)
    return out


@gc_paused()
def score_ranked(
    qrels: dict[str, dict[str, int]],
    run: dict[str, list[tuple[str, float]]],
    ks: Sequence[int] = DEFAULT_KS,
    rel_level: int = 1,
    queries: dict[str, str] | None = None,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    name: str = "ranked",
) -> EvalReport:
    names = ranked_metric_names(ks)
    rows: list[dict[str, Any]] = []
    no_relevant = []
    depth = max(ks)
    for qid in sorted(qrels):
        relevant = {_doc_key(d) for d, r in qrels[qid].items() if r >= rel_level}
        if not relevant:
            no_relevant.append(qid)
            continue
        present = qid in run
        ranked = rank_docs(run[qid]) if present else []
        row: dict[str, Any] = {
            "item_id": qid,
            "label": (queries or {}).get(qid, ""),
            "n_relevant": len(relevant),
        }
        row["status"] = "scored" if present else "missing"
        row.update(score_query(ranked, relevant, ks))
        position = {d: r for r, d in enumerate(ranked[:depth], 1)}
        found = sorted((position[d], d) for d in relevant if d in position)
        details = {
            "matched": [f"{d} (rank {r})" for r, d in found],
            "missed": sorted(d for d in relevant if d not in position),
            "extra": [d for d in ranked[:10] if d not in relevant],
        }
        if not present:
            details["flags"] = ["query missing from the run: scored 0"]
        row["details"] = {k: v for k, v in details.items() if v}
        rows.append(row)
    unknown = sorted(set(run) - set(qrels))
    scored = [r for r in rows if r["status"] == "scored"]
    headline = ["map", "mrr@10", *(f"recall@{k}" for k in ks), *(f"ndcg@{k}" for k in ks if k >= 10)]
    headline += [f"success@{k}" for k in ks if k <= 10]
    return EvalReport(
        name=name,
        benchmark="ranked",
        metrics=names,
        per_item=rows,
        aggregates=aggregate_rows(rows, names, seed=seed, n_boot=n_boot),
        conventions={
            **CONVENTIONS,
            "formulas": "; ".join(f"{m.name}: {m.formula}" for m in M.METRICS.values() if m.kind == "ranked"),
            "rel_level": str(rel_level),
            "aggregation": f"mean over gold queries; percentile bootstrap 95% CI, B={n_boot}, seed={seed}",
        },
        counts={
            "gold_queries": len(qrels),
            "scored_queries": len(rows),
            "queries_without_relevant": len(no_relevant),
            "missing_queries": len(rows) - len(scored),
            "unknown_run_queries": len(unknown),
            "mean_run_length": float(np.mean([len(run[r["item_id"]]) for r in scored])) if scored else 0.0,
        },
        coverage=Coverage(answered=len(scored), total=len(rows)),
        headline=headline,
        extra={"unknown_run_queries": unknown[:100], "queries_without_relevant": no_relevant[:100]},
    )
