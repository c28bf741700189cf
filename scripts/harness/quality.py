"""Gold queries through a backend, scored by openxiv's own evaluator (`openxiv.evaluator.ranked`)."""

from __future__ import annotations

import time
from typing import Any

from openxiv.evaluator.ranked import score_ranked
from openxiv.indexer.backend import SearchBackend

Run = dict[str, list[tuple[str, float]]]
"""Query id -> ranked (arXiv id, score) pairs."""


def run_queries(
    backend: SearchBackend, queries: list[dict[str, Any]], mode: str | None, depth: int
) -> tuple[Run, list[float]]:
    """Each query's top ``depth`` papers (one search at a time) and its milliseconds."""
    run: Run = {}
    latencies = []
    for q in queries:
        t = time.perf_counter()
        result = backend.search(q["query"], top_k=depth, mode=mode)
        latencies.append((time.perf_counter() - t) * 1000)
        # scores decrease down the list; pass rank-derived scores so ties keep the engine's order
        run[q["qid"]] = [(h.arxiv_id, float(depth - i)) for i, h in enumerate(result.hits)]
    return run, latencies


def evaluate(queries: list[dict[str, Any]], run: Run, ks: tuple[int, ...]) -> dict[str, float]:
    """Mean metrics at ``ks`` of ``run`` against each query's ``relevant`` papers."""
    qrels = {q["qid"]: {str(d): 1 for d in q["relevant"]} for q in queries}
    report = score_ranked(qrels, run, ks=ks, n_boot=200)
    return {name: agg.value for name, agg in report.aggregates.items() if agg.value is not None}
