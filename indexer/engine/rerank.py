"""Fine rerank: the first stage's top ``depth`` papers reordered by a cross-encoder's scores.

DeepXiv's ``use_fine_rerank=true``. The first stage (the backend's ranking, tiled so a page is a
pure function of the query) gives its head; the reranker scores (query, paper text) for each paper of
that head and the head is re-sorted by those scores (ties keep the first stage's order). A page that
reaches below ``depth`` continues in the first stage's order, so pages still tile: the same query
asked page by page lists every paper once. The scores shown do not change place: the head's papers
take the first stage's scores of the places they move to (the cross-encoder's logit is kept in the
hit's ``signals["rerank"]``), so scores never increase down the list, across the head's end too.

When the reranker raises `RerankerUnavailable` the head keeps the first stage's order and the
outcome carries a warning; the stage's time is reported as ``rerank`` in ``timings_ms``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from openxiv.indexer.backend import PaperHit
from openxiv.indexer.encoders.rerankers import Reranker, RerankerUnavailable

__all__ = ["NOT_CONFIGURED", "Reranked", "rerank_head"]

NOT_CONFIGURED = (
    "use_fine_rerank: ignored; no reranker is configured here (OPENXIV_RERANK=none), "
    "the first-stage ranking is the final order"
)


@dataclass
class Reranked:
    hits: list[PaperHit]
    """The head in its new order (the same papers as given)."""
    ms: float = 0.0
    warnings: list[str] = field(default_factory=list)


def rerank_head(
    query: str,
    head: Sequence[PaperHit],
    texts_of: Callable[[Sequence[PaperHit]], list[list[str]]],
    reranker: Reranker,
) -> Reranked:
    """``head`` (the first stage's first places, best first) sorted by ``reranker``'s scores. A hit's
    score is the best over its texts (``texts_of(head)[i]``: title + abstract, and for a full-text
    hit also title + evidence passage). Stable: equal scores keep the first stage's order."""
    t0 = time.perf_counter()
    hits = list(head)
    if len(hits) < 2:
        return Reranked(hits=hits, ms=round((time.perf_counter() - t0) * 1000, 3))
    texts = texts_of(hits)
    owner = np.array([i for i, ts in enumerate(texts) for _ in ts], dtype=np.int64)
    try:
        flat = np.asarray(reranker.score(query, [t for ts in texts for t in ts]), dtype=np.float64)
    except RerankerUnavailable as exc:
        note = f"use_fine_rerank: the reranker {reranker.name} is unavailable ({exc}); first-stage order kept"
        return Reranked(hits=hits, ms=round((time.perf_counter() - t0) * 1000, 3), warnings=[note])
    scores = np.full(len(hits), -1e30)
    np.maximum.at(scores, owner, flat)
    order = np.argsort(-scores, kind="stable")
    moved = [
        replace(
            hits[int(j)],
            score=hits[place].score,
            signals={**hits[int(j)].signals, "rerank": float(scores[j])},
        )
        for place, j in enumerate(order)
    ]
    return Reranked(hits=moved, ms=round((time.perf_counter() - t0) * 1000, 3))
