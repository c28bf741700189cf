"""The hits of one page of a tiled ranking (`openxiv.indexer.engine.tiling`): ids, scores, evidence
passages and each side's rank, read from the search state of the block each hit was placed from."""

from __future__ import annotations

import numpy as np

from openxiv.indexer.backend import PaperHit
from openxiv.indexer.engine.meta import PaperMeta
from openxiv.indexer.engine.query_state import Explained
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
        why: Explained = tiled.blocks[b].context  # what the block's hits are explained by
        if b not in ranks:
            ranks[b] = {n: ranks_of(r.rows, page_rows) for n, r in why.sides.items()}
        pid: int | None = None
        for name in ("bm25_passages", "dense_passages"):
            if name in why.sides and row in why.sides[name].passages:
                pid = why.sides[name].passages[row]
                break
        if pid is None and passages is not None and passages.has_passages(np.array([row]))[0]:
            if why.passage_scores is None:
                why.passage_scores = passages.sparse.scores(passages.sparse.query_tokens(why.text))
            pid = passages.best_passage(row, why.passage_scores)
        signals = {f"{n}_rank": ranks[b][n].get(row) for n in why.sides}
        hits.append(PaperHit(str(meta.arxiv_ids[row]), float(score), pid, signals))
    return hits
