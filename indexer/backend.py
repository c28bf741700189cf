"""The one interface between the search service and whatever engine answers queries.

The embedded default (`openxiv.indexer.hybrid.HybridBackend`: bm25s + FAISS over a snapshot
directory) implements it; a distributed engine can replace it by implementing the same three
methods. The service never touches BM25 matrices or FAISS objects directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol, runtime_checkable

__all__ = ["PaperHit", "SearchBackend", "SearchFilters", "SearchResult"]


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions applied to the candidate set *before* the top-k is cut."""

    categories: tuple[str, ...] = ()
    """Keep papers with any of these categories (``cs.CL``) or archives (``cs`` matches ``cs.*``)."""
    authors: tuple[str, ...] = ()
    """Keep papers with an author matching any of these names (case- and accent-insensitive)."""
    date_from: date | None = None
    """Inclusive lower bound on the paper date."""
    date_to: date | None = None
    """Inclusive upper bound on the paper date."""

    @property
    def empty(self) -> bool:
        return not (self.categories or self.authors or self.date_from or self.date_to)


@dataclass(frozen=True)
class PaperHit:
    arxiv_id: str
    score: float
    """Fused score; higher is better. Comparable only within one result list."""
    passage_id: int | None = None
    """Corpus passage that best matches the query for this paper (evidence), when there is one."""
    signals: dict[str, Any] = field(default_factory=dict)
    """Per-side diagnostics, e.g. ``{"bm25_rank": 3, "dense_rank": 12}``."""


@dataclass(frozen=True)
class SearchResult:
    hits: list[PaperHit]
    """The requested page, best first, one hit per paper, deterministic order."""
    total_count: int
    """How many papers matched (after filters), as far as the engine ranked them."""
    timings_ms: dict[str, float] = field(default_factory=dict)
    """Time spent in each stage (``encode``, ``dense``, ``bm25``, ``fuse``...)."""


@runtime_checkable
class SearchBackend(Protocol):
    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        offset: int = 0,
        filters: SearchFilters | None = None,
        mode: str | None = None,
    ) -> SearchResult:
        """Rank papers for ``query``. ``mode`` overrides the fusion (``bm25``, ``dense``, ``rrf``...)."""
        ...

    def info(self) -> dict[str, Any]:
        """The snapshot manifest plus live facts (for ``/v1/index`` and ``/readyz``)."""
        ...

    def close(self) -> None: ...
