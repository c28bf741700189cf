"""``use_fine_rerank``: one query's page with the first stage's head reordered by the reranker.

Every front that takes the flag (``POST /search``, ``GET /arxiv/?type=retrieve``, the MCP search
tool, ``openxiv search --fine-rerank``, the agent search) reaches `rank_page` through
`openxiv.service.search.run_search`. The page is cut from one ranking, whatever the page: the first
``depth`` places reranked (`openxiv.indexer.engine.rerank`), the places below in the first stage's
order. A page entirely below ``depth`` is the first stage's page and calls no reranker.

A reranker reached over the network (one with ``ascore``, `openxiv.indexer.encoders.remote_rerank`)
is not waited for inside a compute slot: the event-loop use case (`openxiv.service.search_async`)
takes the head and its texts in one slot (`stage_head`), awaits the scores outside any slot
(`Staged.fetch`) and cuts the page in another (`rank_page` with ``staged``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.backend import PaperHit, SearchResult
from openxiv.indexer.encoders.cross_encoder import resolve_reranker
from openxiv.indexer.encoders.embed import paper_text
from openxiv.indexer.encoders.rerankers import Reranker, RerankerUnavailable
from openxiv.indexer.engine.rerank import NOT_CONFIGURED, passage_window, rerank_head
from openxiv.indexer.snapshot import OpenIndex

__all__ = ["FineRerank", "Staged", "hit_texts", "network_reranker", "rank_page", "stage_head"]

Rank = Callable[[int, int], SearchResult]
"""The first stage: ``(top_k, offset) -> SearchResult`` for the query being answered."""


@dataclass(frozen=True)
class FineRerank:
    """What a request asked and the server has: the reranker setting and the depth."""

    spec: str
    depth: int
    passages: bool = True
    weight: float = 0.0
    """The first stage's weight in the head's order (`openxiv.indexer.engine.rerank.mixed`)."""
    settings: Settings | None = field(default=None, compare=False, repr=False)
    """The server's settings: a model server's shape, timeout and replay are read from them."""

    @classmethod
    def of(cls, settings: Settings, asked: bool | None) -> FineRerank | None:
        """The plan for a request; None when it did not ask (``false`` or absent). The reranker is
        loaded here (once per process), before the caller starts the request's time budget, so a
        first request (or each ``openxiv search``) does not spend its budget on loading a model."""
        if not asked:
            return None
        plan = cls(
            spec=settings.rerank,
            depth=settings.rerank_depth,
            passages=settings.rerank_passages,
            weight=settings.rerank_weight,
            settings=settings,
        )
        _reranker(plan)
        return plan


def _reranker(plan: FineRerank) -> tuple[Reranker | None, str | None]:
    try:
        found = resolve_reranker(plan.spec, plan.settings)
    except RerankerUnavailable as exc:
        return (
            None,
            f"use_fine_rerank: the reranker {plan.spec!r} cannot be loaded ({exc}); first-stage order kept",
        )
    return found, None if found is not None else NOT_CONFIGURED


def hit_texts(
    index: OpenIndex, passages: bool, query: str
) -> Callable[[Sequence[PaperHit]], list[list[str]]]:
    """Each hit's texts: title + abstract, and title + its evidence passage when it has one (from the
    passage's sentence that holds the most query terms: `passage_window`)."""

    def texts_of(hits: Sequence[PaperHit]) -> list[list[str]]:
        papers = index.store.get_papers([h.arxiv_id for h in hits])
        pids = [h.passage_id for h in hits if h.passage_id is not None] if passages else []
        found = index.store.get_passages(pids) if pids else {}
        out = []
        for h in hits:
            p = papers.get(h.arxiv_id)
            title, abstract = (p.title, p.abstract) if p is not None else ("", "")
            texts = [paper_text(title, abstract)]
            if h.passage_id is not None and h.passage_id in found:
                texts.append(paper_text(title, passage_window(query, found[h.passage_id].text)))
            out.append(texts)
        return out

    return texts_of


def network_reranker(plan: FineRerank | None) -> Any | None:
    """The plan's reranker when it answers over the network (it has ``ascore``), else None."""
    if plan is None:
        return None
    reranker, _ = _reranker(plan)
    return reranker if callable(getattr(reranker, "ascore", None)) else None


@dataclass
class Staged:
    """One query's first-stage head and its texts, taken before the reranker is awaited, and then
    the reranker's scores of those texts (or why it could not give them)."""

    head: SearchResult
    texts: list[list[str]]
    scores: np.ndarray | None = None
    failure: str | None = None
    fetched: bool = field(default=False, repr=False)
    ms: float = 0.0
    """Milliseconds the scores took to come (added to the page's ``rerank`` timing)."""

    async def fetch(self, reranker: Any, query: str) -> None:
        """The scores from ``reranker.ascore``, awaited on the event loop (no compute slot held)."""
        if len(self.head.hits) < 2:  # `rerank_head` does not score a head of one
            return
        t0 = time.perf_counter()
        try:
            self.scores = await reranker.ascore(query, [t for ts in self.texts for t in ts])
        except RerankerUnavailable as exc:
            self.failure = str(exc)
        self.fetched = True
        self.ms = round((time.perf_counter() - t0) * 1000, 3)


class _Fetched:
    """A `Reranker` answering with the scores a `Staged` fetched (the fetched reranker's names)."""

    def __init__(self, reranker: Reranker, staged: Staged) -> None:
        self.name, self.fingerprint = reranker.name, reranker.fingerprint
        self._reranker, self._staged = reranker, staged

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not self._staged.fetched:  # not fetched (cannot happen for a head of two or more)
            return self._reranker.score(query, texts)
        if self._staged.failure is not None:
            raise RerankerUnavailable(self._staged.failure)
        assert self._staged.scores is not None
        return self._staged.scores


def stage_head(
    index: OpenIndex, query: str, *, top_k: int, offset: int, plan: FineRerank, rank: Rank
) -> Staged | None:
    """What `rank_page` would score for this page, computed now: the first stage's head and its
    texts; None when the page needs no reranker (below ``depth``, or none configured)."""
    if offset >= plan.depth or _reranker(plan)[0] is None:
        return None
    head = rank(plan.depth, 0)
    return Staged(head, hit_texts(index, plan.passages, query)(head.hits))


def rank_page(
    index: OpenIndex,
    query: str,
    *,
    top_k: int,
    offset: int,
    plan: FineRerank,
    rank: Rank,
    staged: Staged | None = None,
) -> SearchResult:
    """The page ``[offset, offset + top_k)`` of the reranked ranking of ``query``; with ``staged``
    (`stage_head`, its scores fetched) the head, texts and scores are those."""
    if offset >= plan.depth:
        return rank(top_k, offset)
    reranker, note = _reranker(plan)
    if reranker is None:
        first = rank(top_k, offset)
        return SearchResult(first.hits, first.total_count, first.timings_ms, [*first.notes, str(note)])
    if staged is None:
        head = rank(plan.depth, 0)
        done = rerank_head(query, head.hits, hit_texts(index, plan.passages, query), reranker, plan.weight)
    else:
        head = staged.head
        done = rerank_head(query, head.hits, lambda _: staged.texts, _Fetched(reranker, staged), plan.weight)
    hits = done.hits
    timings = dict(head.timings_ms)
    notes = [*head.notes, *done.warnings]
    end = offset + top_k
    if end > plan.depth and len(head.hits) >= plan.depth:
        below = rank(end - plan.depth, plan.depth)
        hits = hits + list(below.hits)
        for k, v in below.timings_ms.items():
            timings[k] = timings.get(k, 0.0) + v
    timings["rerank"] = done.ms if staged is None else round(done.ms + staged.ms, 3)
    return SearchResult(hits[offset:end], head.total_count, timings, notes)
