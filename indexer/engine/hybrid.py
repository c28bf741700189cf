"""`HybridBackend`: the embedded `SearchBackend` over one snapshot directory.

Up to four sides rank papers for a query, each restricted by the filter mask *before* its top-k cut:

- ``bm25_papers``: BM25 over title + abstract;
- ``bm25_passages``: BM25 over full-text passages, collapsed to papers (best passage per paper);
- ``dense_papers``: FAISS inner product of the query vector with paper vectors;
- ``dense_passages``: the same over passage vectors (when the snapshot embedded passages),
  collapsed to papers.

Every side that ranks by the query's words (``bm25_*``) also tells which papers match at all (at
least one query term, after filters): their number is ``total_count``, the same on every page. When
a mode runs a lexical side, the dense sides rank only among those papers (the filter mask AND the
lexical matches), so the fused list holds exactly ``total_count`` papers when paged to its end and a
query none of whose words occur in the corpus has no hits. A dense side alone counts every paper
passing the filters. ``deadline`` is checked between the stages (filter, BM25, encode, dense, fuse).

Sides of one family share a score scale and merge by max (a paper scores its best unit: its
title + abstract or its best passage), so a paper with full text is not counted twice. The two
families (``bm25``, ``dense``) are then fused (`openxiv.indexer.engine.fusion`) by ``mode`` (default
``Settings.fusion``): ``weighted``, ``zscore`` or ``rrf`` (these also fuse the pseudo-relevance feedback
list ``bm25_feedback``, `openxiv.indexer.engine.prf`, and their fused list is then reordered below its
head by the category prior, `openxiv.indexer.engine.prior`, with papers of the query's exact title
pinned first); ``bm25`` / ``dense`` use that family alone; a side name (``bm25_passages``...) uses that
side alone. Each side returns ``Settings.candidates`` papers; a deeper page adds blocks ranked at
doubled depths (`openxiv.indexer.engine.tiling`), so every page is a slice of one ranking of the
query. Order is deterministic: score, then arxiv_id ascending. Nothing per query
is stored on the backend, so one instance serves many threads; only the query encoder is called
under a lock (tokenizers of transformer models are not safe to share across threads).
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.modes import FAMILIES, SIDES, ModeUnavailable
from openxiv.corpus.settings.sources import ConfigError
from openxiv.indexer import layout
from openxiv.indexer.backend import SearchFilters, SearchResult, check_deadline, check_page
from openxiv.indexer.engine.dense_lexical import passages_among, search_among
from openxiv.indexer.engine.doc_terms import DocTerms
from openxiv.indexer.engine.first_pass import first_top
from openxiv.indexer.engine.fusion import fuse, fuse_with_extra
from openxiv.indexer.engine.meta import PaperMeta
from openxiv.indexer.engine.overlap import Overlap
from openxiv.indexer.engine.pages import page_hits
from openxiv.indexer.engine.prf import (
    confident_top,
    feedback_list,
    keep_head,
    passage_coverage,
)
from openxiv.indexer.engine.prior import CategoryPrior
from openxiv.indexer.engine.query_kind import QueryKindConfig, QueryProfile, is_topic, query_profile
from openxiv.indexer.engine.query_state import QueryState, lexical_top
from openxiv.indexer.engine.ranking import (
    BM25_PASSAGE_SCALE,
    Ranking,
    SideResult,
    encoder_for,
    ms_since,
)
from openxiv.indexer.engine.similar import VectorSimilar
from openxiv.indexer.engine.sparse import PassageHits, PassageIndex, SparseIndex
from openxiv.indexer.engine.tiling import Block, pin, tile, title_rows
from openxiv.indexer.engine.topk import top_k_rows
from openxiv.indexer.manifest import Manifest

__all__ = ["HybridBackend"]


class HybridBackend(VectorSimilar, Ranking):
    supports_feedback = True

    def __init__(
        self, path: Path, settings: Settings, manifest: Manifest, encoder: Any | None = None
    ) -> None:
        self.path = Path(path)
        self.settings = settings
        self.manifest = manifest
        self.meta = PaperMeta.load(self.path / layout.META)
        self.bm25_papers = SparseIndex.load(self.path / layout.BM25_PAPERS)
        pdir = self.path / layout.BM25_PASSAGES
        self.passages: PassageIndex | None = PassageIndex.load(pdir) if pdir.is_dir() else None
        self.dense: dict[str, Any] = {}
        for side, sub in (("dense_papers", layout.DENSE_PAPERS), ("dense_passages", layout.DENSE_PASSAGES)):
            if (self.path / sub).is_dir():
                from openxiv.indexer.engine.dense import DenseIndex

                self.dense[side] = DenseIndex.load(self.path / sub)
        self.encoder = encoder
        if self.dense and self.encoder is None:
            self.encoder = encoder_for(manifest, settings, self.path)
        self._encode_lock = threading.Lock()
        self.overlap = Overlap(settings.serve_overlap)
        """Runs the query's encoding beside its BM25 sides while one search is in flight."""
        self.passage_scale = BM25_PASSAGE_SCALE
        """Factor on BM25 passage scores before they meet paper-text scores (see `BM25_PASSAGE_SCALE`)."""
        self._doc_terms: dict[str, DocTerms] = {}
        """Built on first use; the same dict in every `tuned` view, so the transpose is made once."""
        self._terms_lock = threading.Lock()
        self.category_prior = CategoryPrior(self.meta)
        self.side_weights: dict[str, float] = {}
        """Family weight overrides (``{"bm25": 2.0}``); otherwise ``weight_bm25`` / ``weight_dense``."""
        self.sides = tuple(
            s
            for s in SIDES
            if s == "bm25_papers" or (s == "bm25_passages" and self.passages is not None) or s in self.dense
        )
        try:
            self._plan(settings.fusion)
        except ModeUnavailable as exc:
            raise ConfigError(f"OPENXIV_FUSION={settings.fusion!r}: {exc}") from exc
        self.bm25_papers.search("warm up", 1)  # compile the numba kernel now, not on the first request
        if self.feedback.enabled:  # its per-paper term copy: seconds at millions of papers, so at open,
            self._paper_terms()  # not inside the first requests' time budget (503s at 2.7M, issue 24)

    def tuned(
        self, side_weights: dict[str, float] | None = None, passage_scale: float | None = None, **changes: Any
    ) -> HybridBackend:
        """A view of the same loaded index with other ranking settings (``rrf_k``, weights, ...)."""
        other = copy.copy(self)
        if passage_scale is not None:
            other.passage_scale = float(passage_scale)
        other.settings = self.settings.replace(**changes)
        unknown = set(side_weights or {}) - set(FAMILIES)
        if unknown:
            raise ValueError(f"unknown famil(ies) {sorted(unknown)}: expected {', '.join(FAMILIES)}")
        other.side_weights = {**self.side_weights, **(side_weights or {})}
        return other

    # --- SearchBackend -----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        offset: int = 0,
        filters: SearchFilters | None = None,
        mode: str | None = None,
        deadline: float | None = None,
    ) -> SearchResult:
        with self.overlap.search() as alone:
            return self._search(query, top_k, offset, filters, mode, deadline, alone)

    def _search(
        self,
        query: str,
        top_k: int,
        offset: int,
        filters: SearchFilters | None,
        mode: str | None,
        deadline: float | None,
        alone: bool,
    ) -> SearchResult:
        """`search` as named stages: filter -> lexical -> feedback -> dense -> fuse -> prior (`_rank`),
        then exact titles pinned and blocks tiled (`openxiv.indexer.engine.tiling`) -> page.

        The overlap (`openxiv.indexer.engine.overlap`) shows here: when ``alone`` and the mode runs
        both families, the query's encoding starts on the helper thread before the lexical stage,
        the passage side queues behind it beside the paper side, and the feedback stage queues
        last, beside the FAISS search."""
        t0 = time.perf_counter()
        check_page(top_k, offset)
        sides, method = self._plan(mode)
        first = self._rank(
            QueryState(query, sides, self.settings.candidates, deadline), method, mode, filters, alone
        )
        q0: QueryState = first.context
        shown = q0.lexical if q0.lexical is not None else q0.allowed  # the papers this search may show
        pinned = (
            pin(first, title_rows(self.titles, self.meta.row_of, query, shown)) if self._fuses(mode) else None
        )

        def rank_at(depth: int) -> Block:  # a deeper block: the same query, its vector and mask reused
            q = QueryState(query, sides, depth, deadline, qvec=q0.qvec, allowed=q0.allowed)
            block = self._rank(q, method, mode, q0.allowed, alone=False)
            for k, ms in q.timings.items():
                q0.timings[k] = round(q0.timings.get(k, 0.0) + ms, 3)
            return block

        tiled = tile(first, rank_at, offset + top_k, q0.total, pinned)
        t = time.perf_counter()
        hits = page_hits(self.meta, self.passages, tiled, offset, offset + top_k)
        q0.timings["fuse"] = round(q0.timings["fuse"] + ms_since(t), 3)
        q0.timings["total"] = ms_since(t0)
        return SearchResult(hits=hits, total_count=q0.total, timings_ms=q0.timings)

    def _rank(
        self,
        q: QueryState,
        method: str,
        mode: str | None,
        filters: SearchFilters | np.ndarray | None,
        alone: bool,
    ) -> Block:
        """The fused ranking at ``q.depth``: filter -> lexical -> feedback -> dense -> fuse -> prior.
        ``filters`` as a mask: the one an earlier block of the same search made."""
        if not isinstance(filters, np.ndarray):
            self._filter(q, filters)
        encoding = self._start_encoding(q) if alone else None  # overlap: encode beside lexical
        self._lexical(q, alone)
        feedback = self._feedback_stage(q, mode, queued=encoding is not None)  # overlap: after encode
        dense = self._dense_stage(q, encoding)
        if feedback is not None:
            q.results["bm25_feedback"], q.head, q.timings["feedback"] = feedback.result()
        dense_s = dense["dense_papers"].scores if "dense_papers" in dense else None
        kind = QueryKindConfig.of(self.settings, getattr(self.encoder, "description", {}).get("query_kind"))
        topic = is_topic(kind, q.text, q.paper_s, q.ph, self.passages, self.passage_scale, dense_s, q.first10)
        q.head = 0 if topic else q.head  # a topic's first page may move (openxiv.indexer.engine.query_kind)
        q.results.update(dense)  # after feedback either way: the sides' (and signals') order stays
        q.timings.update(q.dense_ms)
        if encoding is not None and not q.dense_ms:
            encoding.cancel()  # no paper to rank by vector: a started encoding just ends unused
        check_deadline(q.deadline, "fuse")
        t = time.perf_counter()
        rows, scores = self._fuse(q, method)
        rows, scores = self._with_prior(rows, scores, mode, keep_head=not topic)
        q.timings["fuse"] = ms_since(t)
        return Block(q.depth, rows, scores, q)

    def query_profile(self, query: str) -> QueryProfile:
        """The query-kind profile (`openxiv.indexer.engine.query_kind`) of ``query`` without a filter,
        from the sides a hybrid search runs: what benchmarks measure the rule by, not re-derived."""
        depth, paper_s = self.settings.candidates, self.bm25_papers.masked_scores(query, None)
        lexical, tops = paper_s > 0, [top_k_rows(paper_s, depth)[0]]
        ph = None if self.passages is None else self.passages.search(query, depth, None)
        if ph is not None:
            lexical, tops = lexical | (ph.paper_scores > 0), [*tops, ph.papers]
        dense = None
        if "dense_papers" in self.dense and lexical.any():
            known = np.unique(np.concatenate(tops))  # the lexical sides' rows, as the engine passes them
            qvec, _ = self._encode(query)
            dense = self._dense_side(
                "dense_papers", qvec, depth, None if lexical.all() else lexical, known
            ).scores
        return query_profile(query, paper_s, ph, self.passages, self.passage_scale, dense)

    # --- the stages of one search --------------------------------------------------------------------
    def _filter(self, q: QueryState, filters: SearchFilters | None) -> None:
        """The filter mask every side is restricted by before its top-k cut."""
        check_deadline(q.deadline, "filters")
        t = time.perf_counter()
        q.allowed = self.meta.mask(filters)
        q.timings["filter"] = ms_since(t)

    def _start_encoding(self, q: QueryState) -> Future[tuple[np.ndarray, float]] | None:
        """The query's encoding on the overlap's helper thread, when the mode also runs BM25."""
        if (
            q.qvec is not None
            or not q.dense_sides(self.dense)
            or not any(s.startswith("bm25") for s in q.sides)
        ):
            return None
        check_deadline(q.deadline, "encode")
        return self.overlap.submit(lambda: self._encode(q.text))

    def _lexical(self, q: QueryState, alone: bool = False) -> None:
        """The BM25 sides; ``lexical`` marks the papers matching a query term (after filters). When
        ``alone`` (the overlap), the passage side runs on the helper thread beside the paper side."""
        check_deadline(q.deadline, "bm25")
        t = time.perf_counter()
        passage_hits = self._passage_side(q, alone)
        if "bm25_papers" in q.sides:
            q.paper_s = self.bm25_papers.masked_scores(q.text, q.allowed)
            q.rows, q.scores = top_k_rows(q.paper_s, q.depth)
            q.results["bm25_papers"] = SideResult(q.rows, q.scores)
            q.lexical = q.paper_s > 0
        if passage_hits is not None:
            ph = passage_hits()
            q.ph, q.passage_scores = ph, ph.passage_scores
            winners = dict(zip(ph.papers.tolist(), ph.passage_ids.tolist(), strict=True))
            q.results["bm25_passages"] = SideResult(ph.papers, ph.scores, winners)
            q.lexical = ph.paper_scores > 0 if q.lexical is None else q.lexical | (ph.paper_scores > 0)
        q.timings["bm25"] = ms_since(t)
        if q.paper_s is not None and q.rows is not None and q.scores is not None:  # both gates' top 10
            q.first10 = first_top(q.rows, q.scores, q.paper_s, q.ph, self.passage_scale, q.depth, 10)
        if q.lexical is not None:
            q.total = int(q.lexical.sum())
            q.dense_allowed = q.lexical if q.total < q.lexical.size else q.allowed
        else:
            q.total = self.meta.n if q.allowed is None else int(q.allowed.sum())
            q.dense_allowed = q.allowed

    def _passage_side(self, q: QueryState, alone: bool) -> Callable[[], PassageHits] | None:
        """The passage side's hits, collected after the paper side: already running on the helper
        thread when ``alone`` (the overlap) beside a paper side; ``None`` without a passage side."""
        passages = self.passages
        if "bm25_passages" not in q.sides or passages is None:
            return None

        def run() -> PassageHits:
            return passages.search(q.text, q.depth, q.allowed)

        return self.overlap.submit(run).result if alone and "bm25_papers" in q.sides else run

    def _feedback_stage(
        self, q: QueryState, mode: str | None, queued: bool
    ) -> Future[tuple[SideResult, int, float]] | None:
        """The pseudo-relevance feedback side, when the mode fuses: run now, or (``queued``) on the
        helper thread behind the encoding, returning its future."""
        if not (self.feedback.enabled and "bm25_papers" in q.sides and self._fuses(mode)):
            return None
        if queued:
            return self.overlap.submit(lambda: self._feedback(q))
        q.results["bm25_feedback"], q.head, q.timings["feedback"] = self._feedback(q)
        return None

    def _dense_stage(
        self, q: QueryState, encoding: Future[tuple[np.ndarray, float]] | None
    ) -> dict[str, SideResult]:
        """The dense sides among the lexical matches (or the filter), once the query is encoded."""
        dense: dict[str, SideResult] = {}
        dense_sides = q.dense_sides(self.dense)
        if not dense_sides or q.total <= 0:
            return dense
        if q.qvec is not None:
            qvec = q.qvec
        elif encoding is None:
            check_deadline(q.deadline, "encode")
            qvec, q.dense_ms["encode"] = self._encode(q.text)
        else:
            qvec, q.dense_ms["encode"] = encoding.result()  # its own time, not the wait for it
        check_deadline(q.deadline, "dense")
        t = time.perf_counter()
        q.qvec = qvec
        for side in dense_sides:
            dense[side] = self._dense_side(side, qvec, q.depth, q.dense_allowed, lexical_top(q))
        q.dense_ms["dense"] = ms_since(t)
        return dense

    def _fuse(self, q: QueryState, method: str) -> tuple[np.ndarray, np.ndarray]:
        """The families fused by ``method``; a confident first pass keeps its head above feedback."""
        families = self._families(q.results, q.sides)
        if q.head:  # the feedback side is the last family; the kept head comes from the others
            fed, plain_head = fuse_with_extra(
                families[:-1], families[-1], method, self.settings.rrf_k, q.head
            )
            return keep_head(plain_head, fed, q.head)
        return fuse(families, method, self.settings.rrf_k)

    def info(self) -> dict[str, Any]:
        """Live facts only: the manifest is the snapshot's record and is shown once, by whoever holds it
        (``/v1/index`` under ``manifest``); ``ranking`` is the settings this process ranks with, which
        the environment can change after the build recorded its own."""
        return {
            "path": str(self.path),
            "sides": list(self.sides),
            "papers": self.meta.n,
            "passages": self.passages.n_passages if self.passages is not None else 0,
            "ranking": self.ranking_info(),
        }

    def close(self) -> None:
        self.overlap.close()
        self.dense.clear()
        self.passages = None

    # --- internals ---------------------------------------------------------------------------------
    def _feedback(self, q: QueryState) -> tuple[SideResult, int, float]:
        """The feedback side (the expanded query's BM25 pass over the papers), the head a confident
        first pass keeps (`_confident_head`), and the milliseconds both took. Reads only what the
        lexical stage set, so it may run on the helper thread beside the later stages."""
        assert q.paper_s is not None and q.rows is not None and q.scores is not None and q.first10 is not None
        t = time.perf_counter()
        ranked = (q.rows, q.scores)
        side = SideResult(*feedback_list(self._paper_terms(), q.paper_s, self.feedback, q.depth, ranked))
        return side, self._confident_head(q.text, q.first10, q.ph), ms_since(t)

    def _encode(self, query: str) -> tuple[np.ndarray, float]:
        """The query's vector (one row) and the milliseconds encoding it took, waiting for the
        encoder's lock included."""
        t = time.perf_counter()
        with self._encode_lock:
            qvec = np.asarray(self.encoder.encode_query(query), dtype=np.float32).reshape(1, -1)  # type: ignore[union-attr]
        return qvec, ms_since(t)

    def _paper_terms(self) -> DocTerms:
        """The per-paper term view feedback needs: the snapshot's, memory-mapped, or (a snapshot
        built before the build wrote it) made now; once, shared by `tuned` views."""
        with self._terms_lock:
            if "bm25_papers" not in self._doc_terms:
                stored = DocTerms.load(self.bm25_papers, self.path / layout.BM25_PAPERS)  # the build's
                self._doc_terms["bm25_papers"] = stored or DocTerms(self.bm25_papers)
            return self._doc_terms["bm25_papers"]

    def _confident_head(self, query: str, top: tuple[np.ndarray, np.ndarray], ph: Any) -> int:
        """``feedback.head`` when the first pass is confident (`openxiv.indexer.engine.prf`), else 0: its best
        BM25 score stands out (paper text or passage), or the best paper's best passage holds the
        query's words. ``top``: the first pass's best 10 (`openxiv.indexer.engine.first_pass`)."""
        if confident_top(top[1], self.feedback.gate):
            return self.feedback.head
        if ph is None or self.passages is None or not top[0].size:
            return 0
        best = int(top[0][0])
        covered = passage_coverage(self.passages, best, ph.passage_scores, query)
        return self.feedback.head if covered >= self.feedback.coverage else 0

    def _dense_side(
        self, side: str, qvec: np.ndarray, depth: int, allowed: np.ndarray | None, known: np.ndarray | None
    ) -> SideResult:
        index = self.dense[side]
        if side == "dense_papers":
            deep = self.settings.hnsw_deep if known is not None else 0  # a dense mode alone: the filter
            s, r = search_among(index, qvec, depth, allowed, known, deep)
            return SideResult(r, s)
        assert self.passages is not None
        return SideResult(*passages_among(index, self.passages, qvec, depth, allowed))
