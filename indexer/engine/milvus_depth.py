"""How deep a Milvus-backed search asks Milvus, which places of a shallow answer are exact, and the count.

milvus-lite (3.x, an engine written in Python) pays for every hit it returns: each hit's row is read
back column by column before the projection, and a search grouped by paper reads ten passages per
group asked (BENCHMARKS.md, "Milvus search stages"). Asking every side for the tiling's first block
(``candidates``, 1,000 places) for a page of 10 was most of a BM25 query's time. So:

- **A mode that does not fuse** (one family, ``bm25`` or ``dense``, or one side) ranks by the family's
  own scores (a paper's best of its text and its passages), so the ranking at any depth is a prefix of
  the ranking at a deeper one, up to the papers a side left out. A side that returned as many hits as
  it was asked may have left papers out, each scoring at most the lowest score it returned (its
  *floor*); a side that returned fewer holds every match. The places of a shallow ranking scoring
  strictly above every floor are therefore the places of the ranking at depth ``candidates``
  (`certain`). The search asks for twice the page's end (at least `SHALLOW_MIN`) and doubles until
  those places cover the page or the depth reaches ``candidates`` (`shallow_depths`); the places,
  scores and evidence are those of the full-depth ranking, and deeper pages tile as before.
- **The fusion modes** (``weighted``, ``zscore``, ``rrf``) normalise each side over its whole candidate
  list, add RRF shares only where lists overlap and re-sort the head by the category prior: their
  order depends on the depth, so no shallow answer is the deep one's prefix. They ask each side
  ``candidates`` deep, or ``OPENXIV_MILVUS_FUSION_DEPTH`` when set (the ranking's first block,
  `openxiv.indexer.engine.milvus_fused`).

BM25 over passages is asked ungrouped, `GROUP_OVERFETCH` passages per paper wanted, and grouped here
(best passage per paper): the same candidates milvus-lite reads for a grouped search, but a list that
came back shorter than asked is observably complete, which a grouped answer is not (milvus-lite
groups only the passages it read).

``total_count`` is exact when every lexical side holds all its matches; otherwise it is the papers in
the lists asked (a lower bound, said in ``warnings``) unless ``OPENXIV_MILVUS_EXACT_COUNT`` counts the
matches inside Milvus (`exact_total`: a ``TEXT_MATCH`` scan, seconds on milvus-lite).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from openxiv.indexer.engine.ranking import SideResult

__all__ = [
    "GROUP_OVERFETCH",
    "SHALLOW_MIN",
    "MilvusSide",
    "certain",
    "exact_total",
    "lower_bound_note",
    "per_paper",
    "shallow_depths",
    "side",
]

SHALLOW_MIN = 20
"""Smallest depth a shallow search asks for (a first page of 10 asks for 20)."""
GROUP_OVERFETCH = 10
"""Passages read per paper wanted from the BM25 passage side (milvus-lite's own factor for a grouped
search, so a search at ``candidates`` reads what it read before)."""
MAX_TOPK = 16384
"""Milvus' largest ``limit`` per search or query."""


@dataclass
class MilvusSide(SideResult):
    floor: float | None = None
    """Score at or below which this side may have left papers out (``None``: it holds every match)."""


def side(pairs: list[tuple[int, float]], full: bool) -> MilvusSide:
    """A side's candidates in the backend's order (score descending, then row ascending); ``full``:
    Milvus returned as many as asked, so papers scoring at most the lowest may be missing."""
    if not pairs:
        return MilvusSide(np.zeros(0, np.int64), np.zeros(0, np.float32))
    rows = np.asarray([p[0] for p in pairs], dtype=np.int64)
    scores = np.asarray([p[1] for p in pairs], dtype=np.float32)
    order = np.lexsort((rows, -scores))
    out = MilvusSide(rows[order], scores[order])
    out.floor = float(out.scores[-1]) if full else None
    return out


def per_paper(hits: list[tuple[int, int, float]], depth: int, full: bool) -> MilvusSide:
    """The best passage per paper of passage hits ``(paper_row, pid, score)``, best first, cut to
    ``depth`` papers; ``full``: the hits are as many as were asked (so a paper's best passage may lie
    below the last one)."""
    best: dict[int, tuple[float, int]] = {}
    for row, pid, score in hits:
        if row not in best or score > best[row][0]:
            best[row] = (score, pid)
    ranked = side([(r, s) for r, (s, _) in best.items()], False)
    floor = min(s for _, _, s in hits) if full and hits else None
    if ranked.rows.size > depth:
        cut = float(ranked.scores[depth - 1])
        floor = cut if floor is None else max(floor, cut)
        ranked = MilvusSide(ranked.rows[:depth], ranked.scores[:depth])
    ranked.floor = floor
    ranked.passages = {r: best[r][1] for r in ranked.rows.tolist()}
    return ranked


def shallow_depths(need: int, candidates: int) -> list[int]:
    """Depths to try, shallowest first, for a page ending at place ``need`` before the full
    ``candidates``: ``max(SHALLOW_MIN, 2·need)`` doubled while below ``candidates``."""
    out = []
    depth = max(SHALLOW_MIN, 2 * need)
    while depth < candidates:
        out.append(depth)
        depth *= 2
    return out


def certain(scores: np.ndarray, floors: Iterable[float | None]) -> int:
    """Leading places of a single-family ranking (``scores`` descending) that every deeper ranking
    shares: those scoring strictly above every side's floor (all of them when no side has one)."""
    known = [f for f in floors if f is not None]
    if not known:
        return int(scores.size)
    return int(np.count_nonzero(scores > max(known)))


def lower_bound_note(total: int) -> str:
    return (
        f"total_count: at least {total} papers match; this Milvus backend does not count past the "
        "candidate lists it asked for (OPENXIV_MILVUS_EXACT_COUNT=1 counts them, seconds per query on "
        "milvus-lite)"
    )


def _and(*terms: str | None) -> str:
    return " and ".join(f"({t})" for t in terms if t)


def count(client: Any, collection: str, expr: str | None) -> int:
    res = client.query(collection, filter=expr or "", output_fields=["count(*)"])
    return int(res[0]["count(*)"])


def exact_total(
    client: Any, collections: dict[str, str], words: str, expr: str | None, sides: tuple[str, ...]
) -> int:
    """Papers (after the filter ``expr``) matching a query term (``words``: a ``TEXT_MATCH``) on the
    lexical sides of ``sides``, counted inside Milvus."""
    total = 0
    if "bm25_papers" in sides:
        total += count(client, collections["papers"], _and(expr, words))
    if "bm25_passages" in sides:
        total += len(_passage_papers(client, collections, words, expr, exclude_text="bm25_papers" in sides))
    return total


def _passage_papers(
    client: Any, collections: dict[str, str], words: str, expr: str | None, exclude_text: bool
) -> set[int]:
    """Papers (after filters) with a passage matching a query term; with ``exclude_text``, only those
    whose title + abstract does not match (counted separately)."""
    rows: set[int] = set()
    it = client.query_iterator(
        collections["passages"], batch_size=MAX_TOPK, filter=_and(expr, words), output_fields=["paper_row"]
    )
    try:
        while batch := it.next():
            rows.update(int(r["paper_row"]) for r in batch)
    finally:
        it.close()
    if not exclude_text or not rows:
        return rows
    ordered = sorted(rows)
    for i in range(0, len(ordered), MAX_TOPK):
        chunk = ordered[i : i + MAX_TOPK]
        found = client.query(
            collections["papers"],
            filter=_and(f"row in {chunk}", words),
            output_fields=["row"],
            limit=len(chunk),
        )
        rows -= {int(r["row"]) for r in found}
    return rows
