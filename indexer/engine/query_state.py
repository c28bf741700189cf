"""What the stages of one `openxiv.indexer.engine.hybrid.HybridBackend` search hand each other.

A search ranks at one depth per block (`openxiv.indexer.engine.tiling`): lexical -> feedback -> dense
-> fuse -> prior (``HybridBackend._rank``), within the filter mask made once per search. Each stage
takes what it reads and returns what it makes, one type each:

- `Query`: what every stage reads (the text, the sides the mode runs, the deadline);
- `Lexical`: the BM25 sides, the papers matching a query term, their number, the first pass's best 10;
- `Feedback`: the pseudo-relevance feedback side and the head it leaves in place;
- `Dense`: the dense sides and the query's vector (a deeper block reuses it);
- `Ranked`: one depth's fused ranking (a `Block` whose context is `Explained`, what
  `openxiv.indexer.engine.pages` reads to explain its hits) with its lexical stage and timings.

Nothing of a search is kept on the backend, so one backend serves many threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from openxiv.indexer.engine.paper_pass import PaperPass
from openxiv.indexer.engine.ranking import SideResult
from openxiv.indexer.engine.sparse import PassageHits
from openxiv.indexer.engine.tiling import Block

__all__ = ["Dense", "Explained", "Feedback", "Lexical", "Query", "Ranked"]


@dataclass(frozen=True)
class Query:
    """What every stage of one search reads."""

    text: str
    sides: tuple[str, ...]
    """The sides the mode runs (`openxiv.indexer.engine.ranking.Ranking._plan`)."""
    deadline: float | None
    """``time.monotonic()`` past which a stage raises `DeadlineExceeded` (``None``: no budget)."""

    def dense_sides(self, dense: dict[str, object]) -> list[str]:
        """The dense sides of the mode that the snapshot has (``dense``: the backend's, by side)."""
        return [s for s in self.sides if s in dense]


@dataclass(frozen=True)
class Lexical:
    """What the lexical stage makes at one depth (every array over the snapshot's paper rows)."""

    sides: dict[str, SideResult]
    """The BM25 sides the mode runs, ``bm25_papers`` then ``bm25_passages``, each cut at the depth."""
    papers: PaperPass | None
    """The BM25 pass over every paper's title + abstract: its ranked list, the papers it matches
    within the filter, any paper's score on demand (``None``: no paper side)."""
    passage_hits: PassageHits | None
    """The passage side's hits (``None``: no passage side)."""
    shown: np.ndarray | None
    """The papers this search may show: those holding a query term on a lexical side the mode runs,
    after filters; the filter mask when the mode runs no lexical side (``None``: every paper)."""
    total: int
    """How many papers ``shown`` holds (``total_count``)."""
    dense_among: np.ndarray | None
    """The mask the dense sides rank within: the lexical matches when they leave any paper out, else
    the filter mask (``None``: every paper)."""
    first10: tuple[np.ndarray, np.ndarray] | None
    """The first pass's best 10 papers (rows, scores; `openxiv.indexer.engine.first_pass.first_top`):
    what feedback's confident head and the query-kind profile both read (``None``: no paper side)."""
    ms: float
    """The BM25 sides' time."""
    passage_factor: float = 1.0
    """The factor on this query's passage scores before they meet paper-text scores
    (`openxiv.indexer.engine.passage_calibration`; the backend's fixed scale without a passage side)."""

    @property
    def passage_scores(self) -> np.ndarray | None:
        """Every passage's BM25 score, when the passage side ran."""
        return self.passage_hits.passage_scores if self.passage_hits is not None else None

    def ranked_rows(self) -> np.ndarray | None:
        """The papers the lexical sides ranked (``None``: the mode runs none): the dense side scores
        them exactly (`openxiv.indexer.engine.dense_lexical`)."""
        tops = [side.rows for side in self.sides.values()]
        return np.unique(np.concatenate(tops)) if tops else None


@dataclass(frozen=True)
class Feedback:
    """What the feedback stage makes (`openxiv.indexer.engine.prf`)."""

    side: SideResult
    """The expanded query's BM25 list over the papers (``bm25_feedback``)."""
    head: int
    """Places of the ranking without feedback kept on top (a confident first pass; 0: none)."""
    ms: float


@dataclass(frozen=True)
class Dense:
    """What the dense stage makes."""

    sides: dict[str, SideResult]
    """The dense sides, by name (empty when none ran: no dense side, or nothing matches)."""
    query_vector: np.ndarray | None
    """The query's vector (one row), encoded here or given by an earlier block (``None``: not needed)."""
    ms: dict[str, float] = field(default_factory=dict)
    """``encode`` (when it encoded) and ``dense`` (when its sides ran)."""
    left_out: str | None = None
    """Why the dense sides were left out (the query encoder unavailable: a model server down); the
    answer says so in its notes, and a deeper block of the same search leaves them out too."""


@dataclass
class Explained:
    """What a block's hits are explained by (`openxiv.indexer.engine.pages`)."""

    text: str
    """The query."""
    sides: dict[str, SideResult]
    """Every side's list at the block's depth, in the order the hits' signals name them."""
    passage_scores: np.ndarray | None = None
    """Every passage's BM25 score: the passage side's, else computed by `pages` on first need and
    kept here for the page's other hits."""


@dataclass(frozen=True)
class Ranked:
    """One depth's fused ranking, with what a deeper block and the page read from it."""

    block: Block
    """The fused rows and scores; its ``context`` is the `Explained`."""
    lexical: Lexical
    query_vector: np.ndarray | None
    """The query's vector when the dense stage needed it (a deeper block reuses it)."""
    timings: dict[str, float]
    """Each stage's milliseconds: ``bm25``, ``feedback``, ``encode``, ``dense``, ``fuse``."""
    dense_left_out: str | None = None
    """`Dense.left_out` of this depth."""
