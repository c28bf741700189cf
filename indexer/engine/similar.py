"""Similar papers: rank papers by a seed paper's own stored vector (no query, no encoder).

`SearchBackend.similar` for both backends, as mixins their classes take in: `VectorSimilar` for the
embedded `HybridBackend` (the FAISS paper index), `MilvusSimilar` for `MilvusBackend` (the papers
collection's ``dense`` field). The seed vector is the paper's stored vector, or for several seeds
their mean re-normalised to unit length (cosine to the centroid direction). The seeds are left out
of the candidates and the filters apply before the cut, exactly as a search's filter mask, so a page
of k asked gets k whenever k other papers pass the filters. ``total_count`` is every paper passing
the filters but the seeds: each has a similarity, as with ``mode=dense``. Order: score, then row
(= arxiv_id) ascending.

Steering (issue 39): ``toward`` is a text (a seed's sentences of one facet) whose query encoding is
added to the seeds' centroid before re-normalising, so the ranking leans to that part of the seeds;
``negative_ids`` are papers ruled out, Rocchio-style: the query vector is the positive direction
minus `NEGATIVE_WEIGHT` times the negatives' centroid, re-normalised, and the negatives are left out
of the candidates like the seeds.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from openxiv.indexer.backend import (
    NoVectors,
    PaperHit,
    SearchFilters,
    SearchResult,
    UnknownPapers,
    check_deadline,
    check_page,
)
from openxiv.indexer.engine.meta import PaperMeta
from openxiv.indexer.engine.milvus_common import filter_expr
from openxiv.indexer.engine.ranking import ms_since

__all__ = ["NEGATIVE_WEIGHT", "MilvusSimilar", "VectorSimilar", "centroid", "query_vector", "seed_rows"]

NO_VECTORS = (
    "this snapshot has no paper vectors (it was built with --embed none or passages): similar papers "
    "need them; rebuild with `openxiv index build --embed papers` (or both)"
)


def seed_rows(meta: PaperMeta, arxiv_ids: tuple[str, ...]) -> list[int]:
    """The snapshot rows of the seeds, in order and without repeats; `UnknownPapers` naming those the
    snapshot lacks."""
    rows = {a: meta.row_of(a) for a in arxiv_ids}
    missing = [a for a, r in rows.items() if r is None]
    if missing:
        raise UnknownPapers(missing)
    return list(dict.fromkeys(int(r) for r in rows.values() if r is not None))


def centroid(vectors: np.ndarray) -> np.ndarray:
    """The mean of unit vectors, back to unit length: one row, float32. A zero mean (two opposite
    seeds) stays the plain mean, which scores every paper 0."""
    mean = np.asarray(vectors, dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm > 0 else mean).reshape(1, -1).astype(np.float32)


NEGATIVE_WEIGHT = 0.25
"""Rocchio's weight of the ruled-out papers' centroid against the seeds' direction (which weighs 1):
the classic ratio (0.25 beside 0.75-1 for the positives). On CSFCube, whose ruled-out papers are
hard negatives (on the query's topic, not its facet), any weight costs the rest of the ranking a
little (BENCHMARKS.md, «CSFCube»): it is kept mild."""


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return (v / norm if norm > 0 else v).astype(np.float32)


def query_vector(
    seeds: np.ndarray, toward: np.ndarray | None = None, negatives: np.ndarray | None = None
) -> np.ndarray:
    """One unit row: the seeds' centroid, plus the ``toward`` vector (re-normalised), minus
    `NEGATIVE_WEIGHT` times the negatives' centroid (re-normalised)."""
    q = centroid(seeds)[0]
    if toward is not None:
        q = _unit(q + np.asarray(toward, dtype=np.float32).reshape(-1))
    if negatives is not None and len(negatives):
        q = _unit(q - NEGATIVE_WEIGHT * centroid(negatives)[0])
    return q.reshape(1, -1).astype(np.float32)


class _Similar:
    """`similar` itself: the page, the seeds, the steering and the checks; a backend supplies
    `_has_vectors`, `_vectors` (stored paper vectors by row) and `_nearest` (the ranked rows and
    scores for one query vector, and the count of papers passing the filters but the left-out rows)."""

    meta: PaperMeta

    def _has_vectors(self) -> bool:
        raise NotImplementedError

    def _vectors(self, rows: list[int]) -> np.ndarray:
        raise NotImplementedError

    def _nearest(
        self,
        qvec: np.ndarray,
        left_out: list[int],
        k: int,
        filters: SearchFilters | None,
        deadline: float | None,
    ) -> tuple[list[tuple[int, float]], int]:
        raise NotImplementedError

    def similar(
        self,
        arxiv_ids: tuple[str, ...],
        *,
        top_k: int = 10,
        offset: int = 0,
        filters: SearchFilters | None = None,
        deadline: float | None = None,
        negative_ids: tuple[str, ...] = (),
        toward: str | None = None,
    ) -> SearchResult:
        t0 = time.perf_counter()
        check_page(top_k, offset)
        if not self._has_vectors():
            raise NoVectors(NO_VECTORS)
        rows = seed_rows(self.meta, arxiv_ids)
        negatives = seed_rows(self.meta, negative_ids) if negative_ids else []
        check_deadline(deadline, "filters")
        steer = None
        if toward:
            encoder = getattr(self, "encoder", None)  # the backend's query encoder (set with paper vectors)
            steer = (
                np.asarray(encoder.encode_query(toward), dtype=np.float32) if encoder is not None else None
            )
        neg = self._vectors(negatives) if negatives else None
        qvec = query_vector(self._vectors(rows), steer, neg)
        check_deadline(deadline, "dense")
        left_out = list(dict.fromkeys(rows + negatives))
        ranked, total = self._nearest(qvec, left_out, offset + top_k, filters, deadline)
        hits = [
            PaperHit(str(self.meta.arxiv_ids[r]), float(s), None, {"dense_papers_rank": offset + i + 1})
            for i, (r, s) in enumerate(ranked[offset : offset + top_k])
        ]
        return SearchResult(hits=hits, total_count=total, timings_ms={"total": ms_since(t0)})


class VectorSimilar(_Similar):
    """`similar` over the embedded backend's FAISS paper vectors (``self.dense["dense_papers"]``)."""

    dense: dict[str, Any]

    def _has_vectors(self) -> bool:
        return "dense_papers" in self.dense

    def _vectors(self, rows: list[int]) -> np.ndarray:
        return np.asarray(
            self.dense["dense_papers"].reconstruct(np.asarray(rows, dtype=np.int64)), dtype=np.float32
        )

    def _nearest(
        self,
        qvec: np.ndarray,
        left_out: list[int],
        k: int,
        filters: SearchFilters | None,
        deadline: float | None,
    ) -> tuple[list[tuple[int, float]], int]:
        mask = self.meta.mask(filters)  # a cached array: copied before the left-out rows are taken out
        allowed = np.ones(self.meta.n, dtype=bool) if mask is None else mask.copy()
        allowed[left_out] = False
        scores, ids = self.dense["dense_papers"].search(qvec, k, allowed=allowed)
        keep = ids[0] >= 0
        return list(zip(ids[0][keep].tolist(), scores[0][keep].tolist(), strict=True)), int(allowed.sum())


class MilvusSimilar(_Similar):
    """`similar` over a Milvus papers collection: the seeds' ``dense`` field read back by primary key
    (the row), then one vector search with the filter expression and ``row not in [seeds]``."""

    client: Any
    collections: dict[str, str]
    manifest: Any

    def _has_vectors(self) -> bool:
        return bool(self.manifest.counts.paper_vectors)

    def _vectors(self, rows: list[int]) -> np.ndarray:
        got = self.client.get(self.collections["papers"], ids=rows, output_fields=["dense"])
        return np.asarray([g["dense"] for g in got], dtype=np.float32)  # order is not needed: a centroid

    def _nearest(
        self,
        qvec: np.ndarray,
        left_out: list[int],
        k: int,
        filters: SearchFilters | None,
        deadline: float | None,
    ) -> tuple[list[tuple[int, float]], int]:
        expr = " and ".join(
            f"({e})" for e in (filter_expr(self.meta, filters), f"row not in {left_out}") if e
        )
        name = self.collections["papers"]
        total = int(self.client.query(name, filter=expr, output_fields=["count(*)"])[0]["count(*)"])
        check_deadline(deadline, "dense")
        found = self.client.search(
            name,
            data=[qvec[0].tolist()],
            anns_field="dense",
            limit=k,
            filter=expr,
            search_params={"metric_type": "IP"},
        )[0]
        pairs = ((int(h["id"] if "id" in h else h.get("row")), float(h["distance"])) for h in found)
        ranked = sorted(pairs, key=lambda p: (-p[1], p[0]))  # the primary key is the row
        return ranked, total
