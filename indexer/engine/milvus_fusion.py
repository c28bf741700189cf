"""The fusion modes on Milvus: which dense and feedback candidates may be ranked, and exact rescoring.

A fusion mode (``weighted``, ``zscore``, ``rrf``) ranks its dense sides, and its feedback query, only
among papers holding a query term, as the embedded backend does. When the lexical lists hold every
match, those are listed (``row in [...]``); otherwise a ``TEXT_MATCH`` filter would be evaluated row by
row over the collection on milvus-lite (seconds: BENCHMARKS.md, "Milvus search stages"), so the side
searches with the filters alone and the papers no lexical side found are checked here (`term_rows`:
their analysed title + abstract read back by primary key), asked deeper when many were refused
(`kept_hits`).

With ``OPENXIV_MILVUS_FUSION_DEPTH`` below ``candidates`` each side is asked that deep (faster on
milvus-lite, `openxiv.indexer.engine.milvus_fused`); min-max and z-score then normalise over shorter
lists and RRF adds a second side's share only where the shorter lists overlap. To bring that order
closer to the deep one, the candidates one paper side found get their exact score on the other
(`rescore`: a BM25 search restricted to them, their stored vectors against the query's), so a paper
misses a side only where it scores nothing. The top-10 overlap of both depths with the embedded
backend is measured (BENCHMARKS.md, "Milvus fusion") and tested (tests/service/test_milvus_parity.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from openxiv.indexer.engine.milvus_depth import MAX_TOPK, MilvusSide, side

__all__ = ["kept_hits", "rescore", "term_rows"]


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


def kept_hits(
    run: Callable[[int], list[tuple[int, float]]], keep: Callable[[list[int]], set[int]], depth: int
) -> MilvusSide:
    """The ``depth`` best hits of ``run`` (a search: ``limit`` -> (row, score) pairs, best first)
    that ``keep`` admits (the papers holding a query term). Asked a tenth deeper first; when fewer
    than ``depth`` are kept from a full answer, asked again deeper, in proportion to the share kept
    (at least twice as deep, at most `MAX_TOPK`), so the side holds ``depth`` papers whenever Milvus
    has them, as on the embedded backend, and the common case (nearly every hit kept) costs one search."""
    limit = depth + depth // 10
    while True:
        pairs = run(limit)
        full = len(pairs) >= limit
        allowed = keep([r for r, _ in pairs])
        kept = [p for p in pairs if p[0] in allowed]
        if len(kept) >= depth or not full or limit >= MAX_TOPK:
            break
        limit = min(MAX_TOPK, max(2 * limit, (limit * depth) // max(len(kept), 1) + depth // 10))
    if len(kept) > depth:
        return side(kept[:depth], True)  # the floor: the last paper kept
    return side(kept, full)


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
