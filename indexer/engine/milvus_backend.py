"""`MilvusBackend`: the `SearchBackend` over a snapshot whose indexes live in Milvus collections.

Same sides, same rules as `openxiv.indexer.engine.hybrid.HybridBackend` (shared `Ranking`: mode -> sides,
max-merge within a family, fusion by ``weighted``/``zscore``/``rrf`` with the same weights and kept head,
the category prior `openxiv.indexer.engine.prior` below the head; in the fusion modes the feedback
query, the query-kind rule and the passage calibration: `openxiv.indexer.engine.milvus_fused`), only the
candidate lists come from Milvus:

- ``bm25_papers``: the built-in BM25 function over title + abstract (sparse inverted index);
- ``bm25_passages``: BM25 over passages, the best passage per paper (grouped here:
  `openxiv.indexer.engine.milvus_depth.per_paper`);
- ``dense_papers`` / ``dense_passages``: inner product over the vectors of the same embedding cache.

Every side runs with the filter expression (`openxiv.indexer.engine.milvus_common.filter_expr`, resolved
against the snapshot's metadata so filters mean what they mean on the embedded backend).
The text fields hold terms analysed by openxiv's own tokenizer (`openxiv.indexer.engine.milvus_common.analyse`),
so both backends score the same terms. ``total_count`` is, as there, the papers holding at least one
query term after filters on the sides the mode runs: when every BM25 side returned fewer matches
than it was asked for, those are all of them; otherwise the papers in the lists (a lower bound, said
in the answer's notes) or, with ``milvus_exact_count``, a ``TEXT_MATCH`` ``count(*)`` over papers plus
the papers matching only through a passage. Dense sides rank only among those papers when a lexical
side runs. How deep each side is asked: `openxiv.indexer.engine.milvus_depth` (the fusion modes:
`openxiv.indexer.engine.milvus_fusion`). The service fuses the
candidate lists itself (`openxiv.indexer.engine.fusion`) rather than with Milvus' ``hybrid_search``
rankers: those offer RRF and weighted sums of raw scores, not min-max or z-score fusion, nor the
max-merge of a paper's text with its best passage, so the ranking would differ between backends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.modes import SIDES, UnknownMode
from openxiv.corpus.settings.sources import ConfigError
from openxiv.indexer import layout
from openxiv.indexer.backend import PaperHit, SearchFilters, SearchResult, check_deadline, check_page
from openxiv.indexer.engine.evidence import stemmer_of
from openxiv.indexer.engine.fusion import fuse
from openxiv.indexer.engine.meta import PaperMeta
from openxiv.indexer.engine.milvus_common import analyse, connect, filter_expr, match_expr
from openxiv.indexer.engine.milvus_depth import (
    GROUP_OVERFETCH,
    MAX_TOPK,
    MilvusSide,
    certain,
    exact_total,
    lower_bound_note,
    per_paper,
    shallow_depths,
    side,
)
from openxiv.indexer.engine.milvus_fused import FusedRanking, MilvusQuery, add_ms
from openxiv.indexer.engine.milvus_fusion import kept_hits
from openxiv.indexer.engine.milvus_terms import load_terms
from openxiv.indexer.engine.prior import CategoryPrior
from openxiv.indexer.engine.ranking import (
    BM25_PASSAGE_SCALE,
    PASSAGE_OVERFETCH,
    SideResult,
    encoder_for,
    ms_since,
    ranks_of,
)
from openxiv.indexer.engine.similar import MilvusSimilar
from openxiv.indexer.engine.tiling import Block, Tiled, tile
from openxiv.indexer.manifest import BadIndexError, Manifest, MilvusInfo

__all__ = ["MilvusBackend", "collection_counts"]

PASSAGES_FIRST = 3
"""BM25 passages first asked per paper wanted (`MilvusBackend._bm25_passages`)."""

Keep = Callable[[list[int]], set[int]]
"""Which of some paper rows a dense side may rank (those holding a query term)."""


def _and(*terms: str | None) -> str:
    return " and ".join(f"({t})" for t in terms if t)


def collection_counts(spec: MilvusInfo, settings: Settings | None = None) -> dict[str, int]:
    """Entities in the snapshot's collections (``papers``, ``passages``)."""
    settings = settings or Settings.from_env()
    client = connect(settings.milvus_uri or spec.uri, settings.milvus_token)
    try:
        out = {}
        for key, name in spec.collections.items():
            if not client.has_collection(name):
                raise BadIndexError(f"Milvus collection {name} is gone from {spec.uri}; rebuild the index")
            out[key] = int(client.get_collection_stats(name)["row_count"])
        return out
    finally:
        client.close()


class MilvusBackend(MilvusSimilar, FusedRanking):
    def __init__(
        self,
        path: Path,
        settings: Settings,
        manifest: Manifest,
        encoder: Any | None = None,
    ) -> None:
        self.path = Path(path)
        self.settings = settings
        self.manifest = manifest
        spec = manifest.milvus
        if spec is None:
            raise BadIndexError(f"{path}: the manifest names no Milvus collections; rebuild the index")
        self.uri = settings.milvus_uri or spec.uri
        self.collections: dict[str, str] = dict(spec.collections)
        self.meta = PaperMeta.load(self.path / layout.META)
        self.category_prior = CategoryPrior(self.meta)
        self.stemmer = stemmer_of(manifest)
        self.term_stats, self.passage_stats = load_terms(self.path)  # `openxiv.indexer.engine.milvus_terms`
        self.supports_feedback = self.calibrates_passages = self.term_stats is not None
        self.client = connect(self.uri, settings.milvus_token)
        for name in self.collections.values():
            if not self.client.has_collection(name):
                raise BadIndexError(
                    f"Milvus collection {name} does not exist on {spec.uri}: rebuild the index "
                    "(openxiv index build --backend milvus)"
                )
            self.client.load_collection(name)
        has = {
            "bm25_papers": True,
            "bm25_passages": "passages" in self.collections,
            "dense_papers": bool(manifest.counts.paper_vectors),
            "dense_passages": bool(manifest.counts.passage_vectors),
        }
        self.sides = tuple(s for s in SIDES if has[s])
        self.side_weights: dict[str, float] = {}
        self.passage_scale = BM25_PASSAGE_SCALE
        self.encoder = encoder
        if (has["dense_papers"] or has["dense_passages"]) and self.encoder is None:
            self.encoder = encoder_for(manifest, settings, self.path)
        self._encode_lock = threading.Lock()
        try:
            self._plan(settings.fusion)
        except UnknownMode as exc:
            raise ConfigError(f"OPENXIV_FUSION={settings.fusion!r}: {exc}") from exc

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
        """filter -> (per depth: lexical -> dense -> fuse -> prior) -> tile -> page. Each depth's
        ranking is computed as the embedded backend's (`openxiv.indexer.engine.tiling`), so every
        page is a slice of one ranking of the query; the query is encoded once. A mode that does not
        fuse asks Milvus only as deep as the page needs (`openxiv.indexer.engine.milvus_depth`)."""
        t0 = time.perf_counter()
        check_page(top_k, offset)
        sides, method = self._plan(mode or self.settings.fusion)
        check_deadline(deadline, "filters")
        t = time.perf_counter()
        q = MilvusQuery(
            query, analyse([query], self.stemmer)[0], filter_expr(self.meta, filters), filters, deadline
        )
        q.timings["filter"] = ms_since(t)
        first = self._first_block(q, offset + top_k, sides, method, mode)
        total, exact = first.context["total"], first.context["complete"]
        if not exact and self.settings.milvus_exact_count:
            t = time.perf_counter()
            total = exact_total(
                self.client, self.collections, match_expr("text", q.terms) or "", q.expr, sides
            )
            exact = True
            add_ms(q.timings, "count", ms_since(t))
        # a lower-bound count says nothing about where the ranking ends: deeper blocks run until a
        # ranking comes back shorter than asked (`tile`)
        tiled = tile(
            first,
            lambda depth: self._rank(q, min(depth, MAX_TOPK), sides, method, mode),
            offset + top_k,
            total if exact else self.meta.n,
        )
        t = time.perf_counter()
        hits = self._page(q, tiled, offset, offset + top_k)
        q.timings["fuse"] = round(q.timings.get("fuse", 0.0) + ms_since(t), 3)
        q.timings["total"] = ms_since(t0)
        notes = [] if exact else [lower_bound_note(total)]
        return SearchResult(hits=hits, total_count=total, timings_ms=q.timings, notes=notes)

    def _first_block(
        self, q: MilvusQuery, need: int, sides: tuple[str, ...], method: str, mode: str | None
    ) -> Block:
        """The tiling's first block (the ranking at depth ``candidates``), or, for a mode that does
        not fuse, its first places that a shallower ranking already fixes, when they cover places
        ``0:need`` (`openxiv.indexer.engine.milvus_depth.certain`)."""
        full = self.settings.candidates
        if self._fuses(mode):  # `openxiv.indexer.engine.milvus_fused`
            return self._rank(q, self.settings.milvus_fusion_depth or full, sides, method, mode)
        if not self._fuses(mode):
            for depth in shallow_depths(need, full):
                block = self._rank(q, depth, sides, method, mode)
                results = block.context["results"]
                # each floor on the family's scale, computed as `_families` scales the scores
                floors = (
                    float(np.float32(r.floor) * (self.passage_scale if n == "bm25_passages" else 1.0))
                    for n, r in results.items()
                    if r.floor is not None
                )
                sure = certain(block.scores, floors)
                if sure >= need or sure == block.rows.size:
                    return Block(full, block.rows[:sure], block.scores[:sure], block.context)
        return self._rank(q, full, sides, method, mode)

    def _rank(
        self, q: MilvusQuery, depth: int, sides: tuple[str, ...], method: str, mode: str | None
    ) -> Block:
        """The ranking at ``depth``: a fusion mode's as `FusedRanking._rank_fused`; a mode that does
        not fuse runs one family (context: the sides' results, the papers matching (a lower bound
        unless ``complete``))."""
        if self._fuses(mode):
            return self._rank_fused(q, depth, sides, method, mode)
        results: dict[str, MilvusSide] = {}
        check_deadline(q.deadline, "bm25")
        t = time.perf_counter()
        if any(s.startswith("bm25") for s in sides):
            total, _ = self._lexical(q.terms, sides, depth, q.expr, results)
            complete = all(results[s].floor is None for s in results)
        else:  # a dense side alone: every paper passing the filters
            mask = self.meta.mask(q.filters)
            total, complete = (self.meta.n if mask is None else int(mask.sum())), True
        add_ms(q.timings, "bm25", ms_since(t))
        if total > 0 and not any(s.startswith("bm25") for s in sides):
            qvec = self._query_vector(q)
            check_deadline(q.deadline, "dense")
            t = time.perf_counter()
            if "dense_papers" in sides:
                results["dense_papers"] = self._dense_papers(qvec, depth, q.expr)
            if "dense_passages" in sides:
                results["dense_passages"] = self._dense_passages(qvec, depth, q.expr, None)
            add_ms(q.timings, "dense", ms_since(t))
        check_deadline(q.deadline, "fuse")
        t = time.perf_counter()
        inputs: dict[str, SideResult] = dict(results)
        rows, scores = fuse(self._families(inputs, sides), method, self.settings.rrf_k)
        add_ms(q.timings, "fuse", ms_since(t))
        return Block(depth, rows, scores, {"results": results, "total": total, "complete": complete})

    def _query_vector(self, q: MilvusQuery) -> np.ndarray:
        """The query's vector, encoded on first use and kept for the deeper blocks."""
        if q.qvec is None:
            check_deadline(q.deadline, "encode")
            t = time.perf_counter()
            with self._encode_lock:
                q.qvec = np.asarray(self.encoder.encode_query(q.text), dtype=np.float32).reshape(-1)
            q.timings["encode"] = ms_since(t)
        return q.qvec

    def _page(self, q: MilvusQuery, tiled: Tiled, start: int, stop: int) -> list[PaperHit]:
        """Hits of places ``start:stop``: evidence and side ranks from the block each row came from."""
        page_rows = tiled.rows[start:stop].tolist()
        owners = tiled.block[start:stop].tolist()
        explained: dict[int, tuple[int | None, dict[str, int | None]]] = {}
        for b in set(owners):
            results = tiled.blocks[b].context["results"]
            rows = [r for r, o in zip(page_rows, owners, strict=True) if o == b]
            evidence = self._evidence(q.terms, rows, results)
            ranks = {n: ranks_of(r.rows, np.asarray(rows, dtype=np.int64)) for n, r in results.items()}
            for row in rows:
                explained[row] = (evidence.get(row), {f"{n}_rank": ranks[n].get(row) for n in results})
        return [
            PaperHit(str(self.meta.arxiv_ids[row]), float(score), *explained[row])
            for row, score in zip(page_rows, tiled.scores[start:stop].tolist(), strict=True)
        ]

    def info(self) -> dict[str, Any]:
        """Live facts only, as `HybridBackend.info` (the manifest, collections included, is shown once
        by ``/v1/index``)."""
        return {
            "path": str(self.path),
            "sides": list(self.sides),
            "papers": self.meta.n,
            "passages": self.manifest.counts.passages,
            "ranking": self.ranking_info(),
        }

    def close(self) -> None:
        self.client.close()

    # --- sides -------------------------------------------------------------------------------------
    def _search(self, key: str, data: Any, field: str, limit: int, expr: str | None, **kw: Any) -> list[Any]:
        """One Milvus search; hits carry their primary key and score, and only the ``output_fields``
        asked (none by default: milvus-lite reads every column of every hit otherwise, which made a
        1,000-deep list cost 3 times a 100-deep one, issue 42)."""
        params = {"metric_type": "BM25"} if field == "sparse" else {"metric_type": "IP"}
        kw.setdefault("output_fields", ["row" if key == "papers" else "pid"])
        res = self.client.search(
            self.collections[key],
            data=[data],
            anns_field=field,
            limit=limit,
            filter=expr or "",
            search_params=params,
            **kw,
        )
        return list(res[0])

    def _bm25_papers(self, terms: str, depth: int, expr: str | None) -> MilvusSide:
        hits = self._search("papers", terms, "sparse", depth, expr)
        # milvus-lite reports BM25 scores negated (best = most negative); a BM25 score is never < 0
        return side([(_pk(h), abs(float(h["distance"]))) for h in hits], len(hits) >= depth)

    def _bm25_passages(self, terms: str, depth: int, expr: str | None) -> MilvusSide:
        """The best passage per paper, grouped here (`openxiv.indexer.engine.milvus_depth.per_paper`)
        from `PASSAGES_FIRST` passages per paper asked for, then, when those were as many as asked but
        held fewer than ``depth`` papers, from `GROUP_OVERFETCH` per paper. milvus-lite's cost grows
        with the limit asked, not only the hits returned; the side is the same either way (a paper in
        a passage list holds its best passage there, and a list of ``depth`` papers ends at the
        ``depth``-th paper's score)."""
        limit, most = min(depth * PASSAGES_FIRST, MAX_TOPK), min(depth * GROUP_OVERFETCH, MAX_TOPK)
        while True:
            hits = self._search("passages", terms, "sparse", limit, expr, output_fields=["paper_row"])
            rows = [(int(h["entity"]["paper_row"]), _pk(h), abs(float(h["distance"]))) for h in hits]
            if len(hits) < limit or limit >= most or len({r for r, _, _ in rows}) >= depth:
                return per_paper(rows, depth, len(hits) >= limit)
            limit = most

    def _dense_papers(
        self, qvec: np.ndarray, depth: int, expr: str | None, keep: Keep | None = None
    ) -> MilvusSide:
        """Inner product over paper vectors; with ``keep`` (which of some papers hold a query term),
        the papers it refuses taken out here, asked deeper when they were many
        (`openxiv.indexer.engine.milvus_fusion.kept_hits`)."""

        def run(limit: int) -> list[tuple[int, float]]:
            return [
                (_pk(h), float(h["distance"]))
                for h in self._search("papers", qvec.tolist(), "dense", limit, expr)
            ]

        if keep is None:
            pairs = run(depth)
            return side(pairs, len(pairs) >= depth)
        return kept_hits(run, keep, depth)

    def _dense_passages(
        self,
        qvec: np.ndarray,
        depth: int,
        expr: str | None,
        lexical: str | None,
        keep: Keep | None = None,
    ) -> MilvusSide:
        limit = min(depth * PASSAGE_OVERFETCH, MAX_TOPK)
        hits = self._search(
            "passages",
            qvec.tolist(),
            "dense",
            limit,
            expr,
            group_by_field="paper_row",
            output_fields=["paper_row"],
        )
        best = {int(h["entity"]["paper_row"]): (float(h["distance"]), _pk(h)) for h in reversed(hits)}
        rows = list(best)
        if keep is not None and rows:  # rank only papers holding a query word, checked here
            allowed = keep(rows)
            rows = [r for r in rows if r in allowed]
        elif lexical and rows:  # rank only papers that match a query word (see the module docstring)
            found = self.client.query(
                self.collections["papers"],
                filter=_and(lexical, f"row in {rows}"),
                output_fields=["row"],
                limit=len(rows),
            )
            allowed = {int(r["row"]) for r in found}
            rows = [r for r in rows if r in allowed]
        out = side([(r, best[r][0]) for r in rows], len(rows) >= depth)
        if out.rows.size > depth:  # the floor: the last paper kept
            out = side(list(zip(out.rows[:depth].tolist(), out.scores[:depth].tolist(), strict=True)), True)
        out.passages = {r: best[r][1] for r in out.rows.tolist()}
        return out

    def _lexical(
        self,
        terms: str,
        sides: tuple[str, ...],
        depth: int,
        expr: str | None,
        results: dict[str, MilvusSide],
    ) -> tuple[int, set[int]]:
        """Run the mode's BM25 sides into ``results``; the papers they found and how many. When no
        side has a floor (each returned fewer than asked), those are every match after filters;
        otherwise the number is a lower bound."""
        matched: set[int] = set()
        if not terms:
            return 0, matched
        if "bm25_papers" in sides:
            results["bm25_papers"] = self._bm25_papers(terms, depth, expr)
            matched.update(results["bm25_papers"].rows.tolist())
        if "bm25_passages" in sides:
            results["bm25_passages"] = self._bm25_passages(terms, depth, expr)
            matched.update(results["bm25_passages"].rows.tolist())
        return len(matched), matched

    def _evidence(self, terms: str, rows: list[int], results: dict[str, MilvusSide]) -> dict[int, int]:
        """The corpus passage shown as evidence per page row: the passage side's winner, else the
        paper's best BM25 passage for the query, else its first passage (as the embedded backend)."""
        out: dict[int, int] = {}
        if "passages" not in self.collections or not rows:
            return out
        for name in ("bm25_passages", "dense_passages"):
            for row in rows:
                if name in results and row in results[name].passages and row not in out:
                    out[row] = results[name].passages[row]
        rest = [r for r in rows if r not in out]
        if rest and terms:
            hits = self._search(
                "passages",
                terms,
                "sparse",
                len(rest),
                f"paper_row in {rest}",
                group_by_field="paper_row",
                output_fields=["paper_row"],
            )
            out.update({int(h["entity"]["paper_row"]): _pk(h) for h in hits})
        rest = [r for r in rows if r not in out]
        if rest:
            first = self.client.query(
                self.collections["passages"],
                filter=f"paper_row in {rest} and seq == 0",
                output_fields=["paper_row"],
                limit=len(rest),
            )
            out.update({int(r["paper_row"]): int(r["pid"]) for r in first})
        return out


def _pk(hit: Any) -> int:
    """A search hit's primary key (``row`` of a paper, ``pid`` of a passage)."""
    return int(hit["id"] if "id" in hit else hit.get("row", hit.get("pid")))
