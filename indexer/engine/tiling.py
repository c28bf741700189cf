"""One ranking per query, whatever page is asked: fixed-depth blocks, and exact titles pinned first.

A fused ranking depends on how deep its sides are cut: min-max and z-score normalise over the
candidate lists, RRF adds a second side's share only to papers both lists reach, feedback and the
category prior re-sort the fused list. Cutting every side at ``max(candidates, offset + top_k)`` (the
rule before issue 21) gave every deep page its own ranking: ten pages of 10 at offset 990 showed 47
papers twice and 57 never against one page of 100.

`tile` makes the order a pure function of the query. The ranking is computed at fixed depths
``D_0 = candidates``, ``D_k = 2^k · D_0`` (only as deep as the page asked needs), and assembled in
blocks:

- block 0 is the first ``D_0`` places of the ranking at depth ``D_0`` (so every page within the
  first ``candidates`` places is what it was before);
- block ``k`` holds places ``D_{k-1}`` to ``D_k``: the ranking at depth ``D_k`` with the papers of the
  earlier blocks taken out, in its order;

so a deeper request only adds blocks and never changes an earlier one. A block's scores are shifted
to sit just below the last score of the block above (`BLOCK_STEP`), keeping their differences, so
scores never increase down the list. The blocks stop when a ranking holds every candidate
(``total_count`` of them, the same on every page): paged to its end the list holds each match once.

`pin` puts papers first whose normalised title equals the normalised query (`openxiv.corpus.normalize.
normalize_title`, the rule of ``papers.title_norm``): a known item asked by its exact title. Only
papers the ranking may show are pinned (after filters; among the lexical matches when the mode runs
a lexical side), at most `PIN_MAX`, in their order in block 0 (then by row). It sits above every
other stage, the kept head of feedback and the prior included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["BLOCK_STEP", "PIN_MAX", "Block", "Tiled", "block_depths", "pin", "tile", "title_rows"]

BLOCK_STEP = 1e-6
"""How far a block's best score sits below the last score of the block above (any positive gap)."""
PIN_MAX = 10
"""Papers of one exact title pinned at most (duplicates and versions of one title are a handful)."""


@dataclass
class Block:
    """The fused ranking at one depth and what its hits are explained by (the search's state)."""

    depth: int
    rows: np.ndarray
    scores: np.ndarray
    context: Any = None


@dataclass
class Tiled:
    """The assembled ranking as deep as asked: rows, scores and each row's block (its context)."""

    rows: np.ndarray
    scores: np.ndarray
    block: np.ndarray
    """Index into ``blocks`` of the block each row was placed from (pinned rows: block 0)."""
    blocks: list[Block] = field(default_factory=list)


def block_depths(first: int) -> Iterator[int]:
    """``first``, ``2·first``, ``4·first``... (``first`` at least 1)."""
    depth = max(1, first)
    while True:
        yield depth
        depth *= 2


def title_rows(
    titles: Callable[[str], Sequence[str]] | None,
    row_of: Callable[[str], int | None],
    query: str,
    shown: np.ndarray | None,
) -> np.ndarray:
    """Rows of the papers whose normalised title is the query's (``titles``: the snapshot store's
    ``find_by_title``; ``None``: no pin) among ``shown`` (a mask; ``None``: every paper)."""
    if titles is None:
        return np.zeros(0, np.int64)
    rows = [r for r in map(row_of, titles(query)) if r is not None and (shown is None or shown[r])]
    return np.asarray(rows, dtype=np.int64)


def pin(block0: Block, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``wanted`` (distinct, allowed) in block 0's order, then by row, at most `PIN_MAX`, and
    their scores: each a step above the next, the last a step above the best unpinned score."""
    if wanted.size == 0:
        return wanted.astype(np.int64), np.zeros(0, np.float64)
    place = {r: i for i, r in enumerate(block0.rows[: block0.depth].tolist())}
    order = sorted(set(wanted.tolist()), key=lambda r: (place.get(r, len(place)), r))[:PIN_MAX]
    rows = np.asarray(order, dtype=np.int64)
    rest = block0.scores[: block0.depth][~np.isin(block0.rows[: block0.depth], rows)]
    base = float(rest[0]) if rest.size else 0.0
    scores = base + BLOCK_STEP * np.arange(rows.size, 0, -1, dtype=np.float64)
    return rows, scores


def tile(
    first: Block,
    rank_at: Callable[[int], Block],
    need: int,
    total: int,
    pinned: tuple[np.ndarray, np.ndarray] | None = None,
) -> Tiled:
    """The first ``need`` places of the query's one ranking (fewer when it holds fewer): ``first`` is
    the ranking at depth ``D_0``, ``rank_at(D)`` the ranking at depth ``D``, ``total`` the number of
    candidates; ``pinned`` (rows, scores) go first (`pin`)."""
    pin_rows, pin_scores = pinned if pinned is not None else (np.zeros(0, np.int64), np.zeros(0))
    if pin_rows.size and np.array_equal(first.rows[: pin_rows.size], pin_rows):
        pin_rows, pin_scores = pin_rows[:0], pin_scores[:0]  # already first: nothing moves
    rows: list[np.ndarray] = [pin_rows.astype(np.int64)]
    scores: list[np.ndarray] = [pin_scores.astype(np.float64)]
    owner: list[np.ndarray] = [np.zeros(pin_rows.size, np.int64)]
    blocks: list[Block] = []
    count = pin_rows.size
    for depth in block_depths(first.depth):
        block = first if not blocks else rank_at(depth)
        blocks.append(block)
        new = np.flatnonzero(~np.isin(block.rows, np.concatenate(rows)))[: max(0, depth - count)]
        take_rows, take_scores = block.rows[new].astype(np.int64), block.scores[new].astype(np.float64)
        if len(blocks) > 1 and take_rows.size and count:
            last = float(np.concatenate(scores)[-1])
            take_scores = last - BLOCK_STEP - (float(take_scores[0]) - take_scores)
        rows.append(take_rows)
        scores.append(take_scores)
        owner.append(np.full(take_rows.size, len(blocks) - 1, np.int64))
        count += take_rows.size
        if count >= need or block.rows.size < depth or depth >= total:
            break
    return Tiled(np.concatenate(rows), np.concatenate(scores), np.concatenate(owner), blocks)
