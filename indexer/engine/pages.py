"""The hits of one page of a tiled ranking (`openxiv.indexer.engine.tiling`): ids, scores, evidence
passages and each side's rank, read from the search state of the block each hit was placed from."""

from __future__ import annotations

from typing import Any

import numpy as np

from openxiv.indexer.backend import PaperHit
from openxiv.indexer.engine.meta import PaperMeta
from openxiv.indexer.engine.ranking import ranks_of
from openxiv.indexer.engine.sparse import PassageIndex
from openxiv.indexer.engine.tiling import Tiled

__all__ = ["page_hits"]


def page_hits(
    meta: PaperMeta, passages: PassageIndex | None, tiled: Tiled, lo: int, hi: int
) -> list[PaperHit]:
    """The hits of places ``lo:hi``: each with its winning passage (a side's, else its best BM25
    passage) and its rank on every side of its block (``<side>_rank``; ``None``: not on that side)."""
    hits = []
    ranks: dict[int, dict[str, dict[int, int]]] = {}
    page_rows = tiled.rows[lo:hi]
    places = zip(page_rows.tolist(), tiled.scores[lo:hi].tolist(), tiled.block[lo:hi].tolist(), strict=True)
    for row, score, b in places:
        q: Any = tiled.blocks[b].context  # the backend's per-search state (`query_state.QueryState`)
        if b not in ranks:
            ranks[b] = {n: ranks_of(r.rows, page_rows) for n, r in q.results.items()}
        pid: int | None = None
        for name in ("bm25_passages", "dense_passages"):
            if name in q.results and row in q.results[name].passages:
                pid = q.results[name].passages[row]
                break
        if pid is None and passages is not None and passages.has_passages(np.array([row]))[0]:
            if q.passage_scores is None:
                q.passage_scores = passages.sparse.scores(passages.sparse.query_tokens(q.text))
            pid = passages.best_passage(row, q.passage_scores)
        signals = {f"{n}_rank": ranks[b][n].get(row) for n in q.results}
        hits.append(PaperHit(str(meta.arxiv_ids[row]), float(score), pid, signals))
    return hits
