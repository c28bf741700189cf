"""What one search of `openxiv.indexer.engine.hybrid.HybridBackend` carries from stage to stage.

A search runs filter -> lexical -> feedback -> dense -> fuse -> prior over one `QueryState`; a deeper
block of the same search (`openxiv.indexer.engine.tiling`) reuses its vector and filter mask. Nothing
of it is kept on the backend, so one backend serves many threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from openxiv.indexer.engine.ranking import SideResult

__all__ = ["QueryState", "lexical_top"]


@dataclass
class QueryState:
    """What one search's stages hand each other (nothing per query is kept on the backend)."""

    text: str
    sides: tuple[str, ...]
    depth: int
    deadline: float | None
    timings: dict[str, float] = field(default_factory=dict)
    allowed: np.ndarray | None = None
    """The filter mask (``None``: every paper)."""
    results: dict[str, SideResult] = field(default_factory=dict)
    paper_s: np.ndarray | None = None
    """BM25 scores of every paper (the lexical paper side)."""
    rows: np.ndarray | None = None
    scores: np.ndarray | None = None
    ph: Any = None
    """The passage side's hits, when it ran."""
    passage_scores: np.ndarray | None = None
    passage_factor: float = 1.0
    """The factor on this query's passage scores before they meet paper-text scores
    (`openxiv.indexer.engine.passage_calibration`), set by the lexical stage when a passage side runs."""
    first10: tuple[np.ndarray, np.ndarray] | None = None
    """The first pass's best 10 papers (rows, scores; `openxiv.indexer.engine.first_pass.first_top`):
    what feedback's confident head and the query-kind profile both read."""
    lexical: np.ndarray | None = None
    """Papers matching at least one query term on a lexical side the mode runs (after filters)."""
    total: int = 0
    dense_allowed: np.ndarray | None = None
    head: int = 0
    """Places of the ranking without feedback kept on top (a confident first pass, `openxiv.indexer.engine.prf`)."""
    dense_ms: dict[str, float] = field(default_factory=dict)
    qvec: np.ndarray | None = None
    """The query's vector once encoded (a deeper block of the same search reuses it)."""

    def dense_sides(self, dense: dict[str, Any]) -> list[str]:
        return [s for s in self.sides if s in dense]


def lexical_top(q: QueryState) -> np.ndarray | None:
    """The papers the lexical sides ranked (``None``: the mode runs none): the dense side scores
    them exactly (`openxiv.indexer.engine.dense_lexical`)."""
    tops = [res.rows for name, res in q.results.items() if name in ("bm25_papers", "bm25_passages")]
    return np.unique(np.concatenate(tops)) if tops else None
