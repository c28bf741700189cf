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
query. Order is deterministic: score, then arxiv_id ascending. Nothing per query is stored on the
backend (the stages hand each other `openxiv.indexer.engine.query_state`'s types), so one instance
serves many threads; only the query encoder is called under a lock (tokenizers are not thread-safe).
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
from openxiv.indexer.encoders.vectors import EncoderUnavailable
from openxiv.indexer.engine.dense_lexical import passages_among, search_among
from openxiv.indexer.engine.doc_terms import DocTerms
from openxiv.indexer.engine.first_pass import first_top
from openxiv.indexer.engine.meta import PaperMeta
from openxiv.indexer.engine.navigation import Navigation
from openxiv.indexer.engine.overlap import Overlap
from openxiv.indexer.engine.pages import page_hits
from openxiv.indexer.engine.paper_pass import paper_pass
from openxiv.indexer.engine.prf import confident_head, feedback_list
from openxiv.indexer.engine.prior import CategoryPrior
from openxiv.indexer.engine.query_kind import QueryKindConfig, QueryProfile, is_topic, query_profile
from openxiv.indexer.engine.query_state import Dense, Explained, Feedback, Lexical, Query, Ranked
from openxiv.indexer.engine.ranking import BM25_PASSAGE_SCALE, Ranking, SideResult, encoder_for, ms_since
from openxiv.indexer.engine.similar import VectorSimilar
from openxiv.indexer.engine.sparse import PassageHits, PassageIndex, SparseIndex
from openxiv.indexer.engine.tiling import Block, pin, tile, title_rows
from openxiv.indexer.manifest import Manifest

__all__ = ["HybridBackend"]


class HybridBackend(VectorSimilar, Navigation, Ranking):
    supports_feedback = True
    calibrates_passages = True

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
        # compile the numba kernels now (the pruned ones too when on), not on the first request
        paper_pass(self.bm25_papers, "warm up", 1, None, settings.bm25_pruning)
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
        """`search` as named stages: filter, then the ranking at the first depth (`_rank`: lexical ->
        feedback -> dense -> fuse -> prior), exact titles pinned and deeper blocks tiled
        (`openxiv.indexer.engine.tiling`, each a `_rank` reusing the mask and the vector) -> page.

        The overlap (`openxiv.indexer.engine.overlap`) shows here: when ``alone`` and the mode runs
        both families, the query's encoding starts on the helper thread before the lexical stage,
        the passage side queues behind it beside the paper side, and the feedback stage queues
        last, beside the FAISS search."""
        t0 = time.perf_counter()
        check_page(top_k, offset)
        sides, method = self._plan(mode)
        asked = Query(query, sides, deadline)
        allowed, filter_ms = self._filter(asked, filters)
        first = self._rank(asked, self.settings.candidates, allowed, None, method, mode, alone)
        timings = {"filter": filter_ms, **first.timings}
        shown, total = first.lexical.shown, first.lexical.total
        titled = title_rows(self.titles, self.meta.row_of, query, shown) if self._fuses(mode) else None
        pinned = pin(first.block, titled) if titled is not None else None

        left_out = first.dense_left_out  # the encoder failed: deeper blocks leave the dense sides out too
        lexical_only = Query(query, tuple(s for s in sides if not s.startswith("dense")), deadline)

        def rank_at(depth: int) -> Block:  # a deeper block: the same query, its vector and mask reused
            again = lexical_only if left_out else asked
            deeper = self._rank(again, depth, allowed, first.query_vector, method, mode, alone=False)
            for k, ms in deeper.timings.items():
                timings[k] = round(timings.get(k, 0.0) + ms, 3)
            return deeper.block

        tiled = tile(first.block, rank_at, offset + top_k, total, pinned)
        t = time.perf_counter()
        hits = page_hits(self.meta, self.passages, tiled, offset, offset + top_k)
        timings["fuse"] = round(timings["fuse"] + ms_since(t), 3)
        timings["total"] = ms_since(t0)
        notes = [f"dense ranking left out: {left_out}"] if left_out else []
        return SearchResult(hits=hits, total_count=total, timings_ms=timings, notes=notes)

    def _rank(
        self,
        asked: Query,
        depth: int,
        allowed: np.ndarray | None,
        query_vector: np.ndarray | None,
        method: str,
        mode: str | None,
        alone: bool,
    ) -> Ranked:
        """The fused ranking at ``depth`` within the filter mask ``allowed``: lexical -> feedback ->
        dense -> fuse -> prior; ``query_vector``: the one an earlier block of the same search made."""
        encoding = self._start_encoding(asked) if alone and query_vector is None else None  # overlap
        lexical = self._lexical(asked, depth, allowed, alone)
        feedback = self._feedback_stage(asked, depth, lexical, mode, queued=encoding is not None)
        dense = self._dense_stage(asked, depth, lexical, query_vector, encoding)
        sides, timings, head = dict(lexical.sides), {"bm25": lexical.ms}, 0
        if feedback is not None:  # after the dense stage: queued, it ran beside the FAISS search
            fed = feedback()
            sides["bm25_feedback"], head, timings["feedback"] = fed.side, fed.head, fed.ms
        topic = self._is_topic(asked, lexical, dense)
        head = 0 if topic else head  # a topic's first page may move (openxiv.indexer.engine.query_kind)
        sides.update(dense.sides)  # after feedback either way: the sides' (and signals') order stays
        timings.update(dense.ms)
        if encoding is not None and not dense.ms:
            encoding.cancel()  # no paper to rank by vector: a started encoding just ends unused
        check_deadline(asked.deadline, "fuse")
        t = time.perf_counter()
        rows, scores = self._fuse(sides, asked.sides, method, head, lexical.passage_factor)
        rows, scores = self._with_prior(rows, scores, mode, keep_head=not topic)
        timings["fuse"] = ms_since(t)
        explained = Explained(asked.text, sides, lexical.passage_scores)
        block = Block(depth, rows, scores, explained)
        return Ranked(block, lexical, dense.query_vector, timings, dense_left_out=dense.left_out)

    # --- the stages of one search --------------------------------------------------------------------
    def _filter(self, asked: Query, filters: SearchFilters | None) -> tuple[np.ndarray | None, float]:
        """The filter mask every side is restricted by before its top-k cut, and its milliseconds."""
        check_deadline(asked.deadline, "filters")
        t = time.perf_counter()
        return self.meta.mask(filters), ms_since(t)

    def _start_encoding(self, asked: Query) -> Future[tuple[np.ndarray, float]] | None:
        """The query's encoding on the overlap's helper thread, when the mode also runs BM25."""
        if not asked.dense_sides(self.dense) or not any(s.startswith("bm25") for s in asked.sides):
            return None
        check_deadline(asked.deadline, "encode")
        return self.overlap.submit(lambda: self._encode(asked.text))

    def _lexical(self, asked: Query, depth: int, allowed: np.ndarray | None, alone: bool = False) -> Lexical:
        """The BM25 sides at ``depth`` within ``allowed``, and the papers matching a query term. When
        ``alone`` (the overlap), the passage side runs on the helper thread beside the paper side."""
        check_deadline(asked.deadline, "bm25")
        t = time.perf_counter()
        passage_side = self._passage_side(asked, depth, allowed, alone)
        sides: dict[str, SideResult] = {}
        papers = matches = hits = first10 = None
        if "bm25_papers" in asked.sides:
            papers = paper_pass(self.bm25_papers, asked.text, depth, allowed, self.settings.bm25_pruning)
            sides["bm25_papers"] = SideResult(papers.rows, papers.scores)
            matches = papers.matches
        factor = self.passage_scale
        if passage_side is not None:
            hits, factor = self.calibration.calibrate(
                asked.text, papers, passage_side(), self.bm25_papers, self.passages
            )
            winners = dict(zip(hits.papers.tolist(), hits.passage_ids.tolist(), strict=True))
            sides["bm25_passages"] = SideResult(hits.papers, hits.scores, winners)
            matches = hits.paper_scores > 0 if matches is None else matches | (hits.paper_scores > 0)
        ms = ms_since(t)
        if papers is not None:  # both gates' top 10
            first10 = first_top(papers.rows, papers.scores, papers, hits, factor, depth, 10)
        shown = matches if matches is not None else allowed
        total = self.meta.n if shown is None else int(shown.sum())
        dense_among = shown if matches is not None and total < matches.size else allowed
        return Lexical(sides, papers, hits, shown, total, dense_among, first10, ms, factor)

    def _passage_side(
        self, asked: Query, depth: int, allowed: np.ndarray | None, alone: bool
    ) -> Callable[[], PassageHits] | None:
        """The passage side's hits, collected after the paper side: already running on the helper
        thread when ``alone`` (the overlap) beside a paper side; ``None`` without a passage side."""
        passages = self.passages
        if "bm25_passages" not in asked.sides or passages is None:
            return None

        def run() -> PassageHits:
            return passages.search(asked.text, depth, allowed)

        return self.overlap.submit(run).result if alone and "bm25_papers" in asked.sides else run

    def _feedback_stage(
        self, asked: Query, depth: int, lexical: Lexical, mode: str | None, queued: bool
    ) -> Callable[[], Feedback] | None:
        """The pseudo-relevance feedback side, when the mode fuses: run now, or (``queued``) on the
        helper thread behind the encoding; collected by calling what this returns."""
        if not (self.feedback.enabled and "bm25_papers" in asked.sides and self._fuses(mode)):
            return None
        if queued:
            return self.overlap.submit(lambda: self._feedback(asked, depth, lexical)).result
        fed = self._feedback(asked, depth, lexical)
        return lambda: fed

    def _dense_stage(
        self,
        asked: Query,
        depth: int,
        lexical: Lexical,
        query_vector: np.ndarray | None,
        encoding: Future[tuple[np.ndarray, float]] | None,
    ) -> Dense:
        """The dense sides among the lexical matches (or the filter), once the query is encoded."""
        dense_sides = asked.dense_sides(self.dense)
        if not dense_sides or lexical.total <= 0:
            return Dense({}, query_vector)
        ms: dict[str, float] = {}
        if query_vector is None:  # the helper's encoding reports its own time, not the wait for it
            if encoding is None:
                check_deadline(asked.deadline, "encode")
            try:
                encoded = encoding.result() if encoding is not None else self._encode(asked.text)
            except EncoderUnavailable as exc:  # a model server down: the lexical sides answer alone
                if not any(s.startswith("bm25") for s in asked.sides):
                    raise
                return Dense({}, None, left_out=str(exc))
            query_vector, ms["encode"] = encoded
        check_deadline(asked.deadline, "dense")
        t = time.perf_counter()
        known = lexical.ranked_rows()
        sides = {s: self._dense_side(s, query_vector, depth, lexical.dense_among, known) for s in dense_sides}
        ms["dense"] = ms_since(t)
        return Dense(sides, query_vector, ms)

    def _is_topic(self, asked: Query, lexical: Lexical, dense: Dense) -> bool:
        """Whether the query is a topic whose first page may move (`openxiv.indexer.engine.query_kind`)."""
        dense_scores = dense.sides["dense_papers"].scores if "dense_papers" in dense.sides else None
        kind = QueryKindConfig.of(self.settings, getattr(self.encoder, "description", {}).get("query_kind"))
        return is_topic(
            kind, asked.text, lexical.papers, lexical.passage_hits, self.passages,
            lexical.passage_factor, dense_scores, lexical.first10,
        )  # fmt: skip

    def query_profile(self, query: str) -> QueryProfile:
        """The query-kind profile (`openxiv.indexer.engine.query_kind`) of ``query`` without a filter, from
        the stages a search runs (of the dense sides, the paper vectors'): what benchmarks measure."""
        asked = Query(query, tuple(s for s in self.sides if s != "dense_passages"), None)
        depth = self.settings.candidates
        lexical = self._lexical(asked, depth, None)
        dense = self._dense_stage(asked, depth, lexical, None, None).sides.get("dense_papers")
        assert lexical.papers is not None
        return query_profile(
            query, lexical.papers, lexical.passage_hits, self.passages, lexical.passage_factor,
            dense.scores if dense is not None else None, lexical.first10,
        )  # fmt: skip

    def query_vector_wanted(self, mode: str | None) -> bool:
        """Whether a search in ``mode`` embeds its query (a front may fetch the vector beforehand)."""
        try:
            sides, _ = self._plan(mode)
        except (ModeUnavailable, ValueError):
            return False
        return any(s in self.dense for s in sides)

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
    def _feedback(self, asked: Query, depth: int, lexical: Lexical) -> Feedback:
        """The feedback side (the expanded query's BM25 pass over the papers), the head a confident
        first pass keeps (`openxiv.indexer.engine.prf.confident_head`), and the milliseconds both took. Reads only what the
        lexical stage made, so it may run on the helper thread beside the later stages."""
        papers, top = lexical.papers, lexical.first10
        assert papers is not None and top is not None
        t = time.perf_counter()
        config = self.feedback
        side = SideResult(*feedback_list(self._paper_terms(), papers, config, depth))
        head = confident_head(config, asked.text, top, self.passages, lexical.passage_scores)
        return Feedback(side, head, ms_since(t))

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
