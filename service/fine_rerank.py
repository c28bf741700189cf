"""``use_fine_rerank``: one query's page with the first stage's head reordered by the reranker.

Every front that takes the flag (``POST /search``, ``GET /arxiv/?type=retrieve``, the MCP search
tool, ``openxiv search --fine-rerank``, the agent search) reaches `rank_page` through
`openxiv.service.search.run_search`. The page is cut from one ranking, whatever the page: the first
``depth`` places reranked (`openxiv.indexer.engine.rerank`), the places below in the first stage's
order. A page entirely below ``depth`` is the first stage's page and calls no reranker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.backend import PaperHit, SearchResult
from openxiv.indexer.encoders.cross_encoder import resolve_reranker
from openxiv.indexer.encoders.embed import paper_text
from openxiv.indexer.encoders.rerankers import Reranker, RerankerUnavailable
from openxiv.indexer.engine.rerank import NOT_CONFIGURED, rerank_head
from openxiv.indexer.snapshot import OpenIndex

__all__ = ["FineRerank", "hit_texts", "rank_page"]

Rank = Callable[[int, int], SearchResult]
"""The first stage: ``(top_k, offset) -> SearchResult`` for the query being answered."""


@dataclass(frozen=True)
class FineRerank:
    """What a request asked and the server has: the reranker setting and the depth."""

    spec: str
    depth: int
    passages: bool = True

    @classmethod
    def of(cls, settings: Settings, asked: bool | None) -> FineRerank | None:
        """The plan for a request; None when it did not ask (``false`` or absent). The reranker is
        loaded here (once per process), before the caller starts the request's time budget, so a
        first request (or each ``openxiv search``) does not spend its budget on loading a model."""
        if not asked:
            return None
        plan = cls(spec=settings.rerank, depth=settings.rerank_depth, passages=settings.rerank_passages)
        _reranker(plan)
        return plan


def _reranker(plan: FineRerank) -> tuple[Reranker | None, str | None]:
    try:
        found = resolve_reranker(plan.spec)
    except RerankerUnavailable as exc:
        return (
            None,
            f"use_fine_rerank: the reranker {plan.spec!r} cannot be loaded ({exc}); first-stage order kept",
        )
    return found, None if found is not None else NOT_CONFIGURED


def hit_texts(index: OpenIndex, passages: bool) -> Callable[[Sequence[PaperHit]], list[list[str]]]:
    """Each hit's texts: title + abstract, and title + its evidence passage when it has one."""

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
                texts.append(paper_text(title, found[h.passage_id].text))
            out.append(texts)
        return out

    return texts_of


def rank_page(
    index: OpenIndex, query: str, *, top_k: int, offset: int, plan: FineRerank, rank: Rank
) -> SearchResult:
    """The page ``[offset, offset + top_k)`` of the reranked ranking of ``query``."""
    if offset >= plan.depth:
        return rank(top_k, offset)
    reranker, note = _reranker(plan)
    if reranker is None:
        first = rank(top_k, offset)
        return SearchResult(first.hits, first.total_count, first.timings_ms, [*first.notes, str(note)])
    head = rank(plan.depth, 0)
    done = rerank_head(query, head.hits, hit_texts(index, plan.passages), reranker)
    hits = done.hits
    timings = dict(head.timings_ms)
    notes = [*head.notes, *done.warnings]
    end = offset + top_k
    if end > plan.depth and len(head.hits) >= plan.depth:
        below = rank(end - plan.depth, plan.depth)
        hits = hits + list(below.hits)
        for k, v in below.timings_ms.items():
            timings[k] = timings.get(k, 0.0) + v
    timings["rerank"] = done.ms
    return SearchResult(hits[offset:end], head.total_count, timings, notes)
