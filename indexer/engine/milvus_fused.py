"""`FusedRanking`: one depth of a fusion mode's ranking on Milvus, stage for stage the embedded one's.

`openxiv.indexer.engine.hybrid.HybridBackend._rank` runs lexical -> feedback -> dense -> query kind ->
fuse (the kept head) -> category prior; so does this, with Milvus' searches for the lists and the
engine's own functions for every decision (`openxiv.indexer.engine.milvus_feedback`; the fusion and
kept head: `openxiv.indexer.engine.ranking.Ranking._fuse`; the prior: ``_with_prior``).

Every side is asked ``depth`` deep: ``candidates`` (1,000, the embedded depth) unless
``OPENXIV_MILVUS_FUSION_DEPTH`` asks shallower, whose lists are then completed by exact rescoring
(`openxiv.indexer.engine.milvus_fusion.rescore`). A search returns primary keys and scores only, so a
1,000-deep list costs milvus-lite little more than a 100-deep one (BENCHMARKS.md, "Milvus fusion").
The dense sides rank papers holding a query term: listed (``row in [...]``) when the lexical lists
hold every match, else searched with the filters alone and the papers not
found by a lexical side checked by their analysed text (`PaperMatches`, shared with the feedback side).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from openxiv.indexer.backend import SearchFilters, check_deadline
from openxiv.indexer.engine.milvus_depth import MilvusSide
from openxiv.indexer.engine.milvus_feedback import (
    PaperMatches,
    coverage,
    expanded_query,
    feedback_side,
    is_topic,
)
from openxiv.indexer.engine.milvus_fusion import rescore
from openxiv.indexer.engine.milvus_terms import PassageTerms, TermStats
from openxiv.indexer.engine.prf import confident_head
from openxiv.indexer.engine.query_kind import QueryKindConfig
from openxiv.indexer.engine.ranking import Ranking, SideResult, ms_since
from openxiv.indexer.engine.tiling import Block

__all__ = ["MAX_IN_LIST", "FusedRanking", "MilvusQuery", "add_ms"]

MAX_IN_LIST = 20000
"""Largest ``row in [...]`` list sent to Milvus; beyond it the dense sides' hits are checked here."""


@dataclass
class MilvusQuery:
    """One search's state across its depths: the query, its terms and filter, its vector once encoded."""

    text: str
    terms: str
    expr: str | None
    filters: SearchFilters | None
    deadline: float | None
    qvec: np.ndarray | None = None
    timings: dict[str, float] = field(default_factory=dict)


class FusedRanking(Ranking):
    """The fusion modes' ranking of `openxiv.indexer.engine.milvus_backend.MilvusBackend`, which gives
    the Milvus searches declared here."""

    client: Any
    collections: dict[str, str]
    encoder: Any
    term_stats: TermStats | None
    passage_stats: TermStats | None
    _search: Callable[..., list[Any]]
    _lexical: Callable[..., tuple[int, set[int]]]
    _dense_papers: Callable[..., MilvusSide]
    _dense_passages: Callable[..., MilvusSide]
    _query_vector: Callable[[MilvusQuery], np.ndarray]

    def _rank_fused(
        self,
        q: MilvusQuery,
        depth: int,
        sides: tuple[str, ...],
        method: str,
        mode: str | None,
    ) -> Block:
        """The fused ranking at ``depth`` (context: the sides' results, the papers matching (a lower
        bound unless ``complete``))."""
        results: dict[str, MilvusSide] = {}
        check_deadline(q.deadline, "bm25")
        t = time.perf_counter()
        total, matched = self._lexical(q.terms, sides, depth, q.expr, results)
        complete = all(r.floor is None for r in results.values())
        papers = results.get("bm25_papers")
        known = papers.rows.tolist() if papers is not None else []
        matches = PaperMatches(
            self.client,
            self.collections["papers"],
            q.terms,
            known,
            papers is not None and papers.floor is None,
        )
        factor = self.passage_factor(q.text)
        add_ms(q.timings, "bm25", ms_since(t))
        feedback = None
        if papers is not None and q.terms and self.term_stats is not None and self.feedback.enabled:
            check_deadline(q.deadline, "feedback")
            t = time.perf_counter()
            s = self.settings
            text = expanded_query(
                self.client,
                self.collections["papers"],
                self.term_stats,
                papers,
                self.feedback,
                s.bm25_k1,
                s.bm25_b,
            )
            feedback = feedback_side(self._search, text, depth, q.expr, matches)
            add_ms(q.timings, "feedback", ms_since(t))
        if any(s.startswith("dense") for s in sides) and total > 0 and q.terms:
            self._dense_fused(q, depth, sides, results, matches, matched, complete)
        if depth < self.settings.candidates:  # shallow lists: each paper side rescored over the others
            t = time.perf_counter()
            rescore(self._search, self.client, self.collections["papers"], results, q.terms, q.qvec, q.expr)
            add_ms(q.timings, "rescore", ms_since(t))
        check_deadline(q.deadline, "fuse")
        t = time.perf_counter()
        topic, head = self._kind(q, results, sides, factor, feedback is not None)
        inputs: dict[str, SideResult] = dict(results)
        if feedback is not None:
            inputs["bm25_feedback"] = feedback
        rows, scores = self._fuse(inputs, sides, method, 0 if topic else head, factor)
        rows, scores = self._with_prior(rows, scores, mode, keep_head=not topic)
        add_ms(q.timings, "fuse", ms_since(t))
        return Block(depth, rows, scores, {"results": inputs, "total": total, "complete": complete})

    def _dense_fused(
        self,
        q: MilvusQuery,
        depth: int,
        sides: tuple[str, ...],
        results: dict[str, MilvusSide],
        matches: PaperMatches,
        matched: set[int],
        complete: bool,
    ) -> None:
        """The dense sides among the papers holding a query term (module doc), into ``results``."""
        qvec = self._query_vector(q)
        check_deadline(q.deadline, "dense")
        t = time.perf_counter()
        listed = complete and len(matched) <= MAX_IN_LIST
        expr = f"row in {sorted(matched)}" if listed else q.expr  # listed: they passed the filters

        def keep(rows: list[int]) -> set[int]:
            return matches.holding(rows) | (matched & set(rows))

        if "dense_papers" in sides:
            results["dense_papers"] = self._dense_papers(qvec, depth, expr, None if listed else keep)
        if "dense_passages" in sides:
            results["dense_passages"] = self._dense_passages(
                qvec, depth, q.expr, expr if listed else None, keep
            )
        add_ms(q.timings, "dense", ms_since(t))

    def passage_factor(self, query: str) -> float:
        """The query's factor on BM25 passage scores (`openxiv.indexer.engine.passage_calibration`, over
        the snapshot's statistics; the fixed factor without them)."""
        if self.term_stats is None or self.passage_stats is None:
            return self.passage_scale
        return self.calibration.factor(query, self.term_stats, PassageTerms(self.passage_stats))

    def _kind(
        self,
        q: MilvusQuery,
        results: dict[str, MilvusSide],
        sides: tuple[str, ...],
        factor: float,
        fed: bool,
    ) -> tuple[bool, int]:
        """Whether the query is a topic (`openxiv.indexer.engine.query_kind`), and the head a confident
        first pass keeps above feedback (`openxiv.indexer.engine.prf.confident_head`; 0 without it)."""
        lexical: dict[str, SideResult] = {n: r for n, r in results.items() if n.startswith("bm25")}
        if self.term_stats is None or not lexical:
            return False, 0
        family = self._families(lexical, sides, factor)[0]  # papers and passages max-merged
        first10 = (family.rows[:10], family.scores[:10])
        pid = None
        if "bm25_passages" in results and first10[0].size:
            pid = results["bm25_passages"].passages.get(int(first10[0][0]))
        covered = 0.0
        if self.passage_stats is not None and "passages" in self.collections:
            covered = coverage(self.client, self.collections["passages"], pid, q.terms, self.passage_stats)
        dense = results["dense_papers"].scores if "dense_papers" in results else None
        kind = QueryKindConfig.of(self.settings, getattr(self.encoder, "description", {}).get("query_kind"))
        topic = is_topic(kind, q.text, first10, covered, dense)
        head = confident_head(self.feedback, q.text, first10, coverage=covered) if fed else 0
        return topic, head


def _and(*terms: str | None) -> str:
    return " and ".join(f"({t})" for t in terms if t)


def add_ms(timings: dict[str, float], stage: str, ms: float) -> None:
    timings[stage] = round(timings.get(stage, 0.0) + ms, 3)
