"""The fusion modes on Milvus: shallow candidate lists, and which dense candidates may be ranked.

A fusion mode (``weighted``, ``zscore``, ``rrf``) asked every side for ``candidates`` (1,000) places,
and its dense sides ranked only papers holding a query term: listed (``row in [...]``) when the lexical
lists held every match, else a ``TEXT_MATCH`` filter over the whole collection. milvus-lite pays per
hit returned and evaluates ``TEXT_MATCH`` row by row (BENCHMARKS.md, "Milvus search stages" and
"Milvus fusion"), so most of a fused query's time went to the 1,000-deep lists and the ``TEXT_MATCH``
scan of the dense side.

With ``OPENXIV_MILVUS_FUSION_DEPTH`` (default 100) each side is asked that deep; the fused ranking's
first block is that deep (`openxiv.indexer.engine.tiling`: deeper pages double it, so a query still has
one ranking whatever page is asked). When the lexical lists are not complete, the dense sides search
with the filters only, `DENSE_OVERFETCH` times deeper, and the papers holding no query term are taken
out here (`term_rows`: their analysed title + abstract read back by primary key and checked against the
query's terms; papers found by a BM25 side match by definition). Min-max and z-score then normalise
over shorter lists and RRF adds a second side's share only where the shorter lists overlap, so the
order is not the embedded backend's exactly. To bring it closer, the candidates one side found get
their exact score on the other paper side (`rescore`: a BM25 search restricted to them, their stored
vectors against the query's), so a paper misses a side only where it scores nothing. The order is
still not the embedded backend's exactly (shorter lists, no feedback query on Milvus): the top-10 overlap with it is measured
(BENCHMARKS.md, "Milvus fusion") and tested (tests/service/test_milvus_parity.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from openxiv.indexer.engine.milvus_depth import MilvusSide, side

__all__ = ["DENSE_OVERFETCH", "rescore", "term_rows"]

DENSE_OVERFETCH = 2
"""Dense hits asked per place wanted when the papers holding no query term are removed here."""


def term_rows(client: Any, collection: str, rows: list[int], terms: str, known: set[int]) -> set[int]:
    """Those of paper ``rows`` whose analysed title + abstract holds one of ``terms`` (analysed query
    terms, space-separated) or that are in ``known`` (papers a lexical side found)."""
    out = {r for r in rows if r in known}
    ask = [r for r in rows if r not in known]
    words = set(terms.split())
    if not ask or not words:
        return out
    found = client.query(collection, filter=f"row in {ask}", output_fields=["row", "text"], limit=len(ask))
    out.update(int(f["row"]) for f in found if words.intersection(str(f["text"]).split()))
    return out


def rescore(
    search: Callable[..., list[Any]],
    client: Any,
    collection: str,
    results: dict[str, MilvusSide],
    terms: str,
    qvec: np.ndarray | None,
    expr: str | None,
) -> None:
    """Exact scores, on the paper sides, of the candidates another side found (``search``: the
    backend's ``_search``): BM25 over papers by a search restricted to them (``row in [...]``), dense
    by their stored vectors and the query's. A candidate then lacks a paper side's score only when it
    has none there (no query term), as in a deep list."""
    found: set[int] = set()
    for r in results.values():
        found.update(r.rows.tolist())
    bm25 = results.get("bm25_papers")
    if bm25 is not None and terms and (extra := sorted(found - set(bm25.rows.tolist()))):
        restrict = f"row in {extra}" if not expr else f"({expr}) and (row in {extra})"
        hits = search("papers", terms, "sparse", len(extra), restrict)
        results["bm25_papers"] = _extended(bm25, [(_row(h), abs(float(h["distance"]))) for h in hits])
    dense = results.get("dense_papers")
    if dense is not None and qvec is not None and (extra := sorted(found - set(dense.rows.tolist()))):
        got = client.query(
            collection, filter=f"row in {extra}", output_fields=["row", "dense"], limit=len(extra)
        )
        if got:
            vectors = np.asarray([g["dense"] for g in got], dtype=np.float32)
            scores = vectors @ qvec.astype(np.float32)
            pairs = [(int(g["row"]), float(x)) for g, x in zip(got, scores.tolist(), strict=True)]
            results["dense_papers"] = _extended(dense, pairs)


def _extended(base: MilvusSide, pairs: list[tuple[int, float]]) -> MilvusSide:
    """``base`` with the rescored ``pairs`` added, in the side's order; its floor and passages kept."""
    out = side(list(zip(base.rows.tolist(), base.scores.tolist(), strict=True)) + pairs, False)
    out.floor = base.floor
    out.passages = base.passages
    return out


def _row(hit: Any) -> int:
    return int(hit["id"] if "id" in hit else hit.get("row"))
