"""The one interface between the search service and whatever engine answers queries.

The embedded default (`openxiv.indexer.engine.hybrid.HybridBackend`: bm25s + FAISS over a snapshot
directory) implements it; a distributed engine can replace it by implementing the same three
methods. The service never touches BM25 matrices or FAISS objects directly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "DeadlineExceeded",
    "FacetCounts",
    "Navigable",
    "NoVectors",
    "PaperHit",
    "PassageHit",
    "PassageResult",
    "SearchBackend",
    "SearchFilters",
    "SearchResult",
    "UnknownPapers",
    "UnsupportedFilter",
    "check_deadline",
    "check_page",
]


class UnsupportedFilter(ValueError):
    """A filter this snapshot cannot answer (e.g. venues on a snapshot built before they were indexed)."""


class NoVectors(LookupError):
    """The snapshot holds no paper vectors (built with ``--embed none`` or ``passages``), so nothing can
    be ranked by a paper's own vector (`SearchBackend.similar`)."""


class UnknownPapers(LookupError):
    """Seed papers of `SearchBackend.similar` that are not in the snapshot (``args[0]``: their ids)."""


class DeadlineExceeded(TimeoutError):
    """The request's time budget ran out between two stages of a search."""


def check_deadline(deadline: float | None, stage: str) -> None:
    """Raise `DeadlineExceeded` when ``time.monotonic()`` has passed ``deadline`` (``None``: no budget)."""
    if deadline is not None and time.monotonic() > deadline:
        raise DeadlineExceeded(f"time budget exhausted before {stage}")


def check_page(top_k: int, offset: int) -> None:
    """The engine's own invariant on a page: ``top_k >= 1`` and ``offset >= 0``. The service's
    limits (`openxiv.service.params.TOP_K_MAX`, ``OFFSET_MAX``) are stricter and checked at the HTTP
    edge, so a violation here is a caller's bug (a 500 through the API), not a bad request."""
    if top_k < 1 or offset < 0:
        raise ValueError(f"top_k must be >= 1 and offset >= 0 (got top_k={top_k}, offset={offset})")


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions applied to the candidate set *before* the top-k is cut."""

    categories: tuple[str, ...] = ()
    """Keep papers with any of these categories (``cs.CL``) or archives (``cs`` matches ``cs.*``)."""
    authors: tuple[str, ...] = ()
    """Keep papers with an author matching any of these names (rule: `openxiv.indexer.engine.postings`)."""
    venues: tuple[str, ...] = ()
    """Keep papers whose journal reference names any of these venues (a phrase, case-insensitive)."""
    venue_year: int | None = None
    """Keep papers whose journal reference mentions this year."""
    date_from: date | None = None
    """Inclusive lower bound on the paper date."""
    date_to: date | None = None
    """Inclusive upper bound on the paper date."""
    min_citation: int | None = None
    """Keep papers cited by at least this many papers of this corpus (in-corpus counts only)."""

    @property
    def empty(self) -> bool:
        return not (
            self.categories
            or self.authors
            or self.venues
            or self.venue_year is not None
            or self.date_from
            or self.date_to
            or self.min_citation is not None
        )


@dataclass(frozen=True)
class PaperHit:
    arxiv_id: str
    score: float
    """Fused score; higher is better. Comparable only within one result list."""
    passage_id: int | None = None
    """The paper's evidence passage: the winner of a passage side, else its best BM25 passage when
    that holds a query term; ``None`` otherwise (then `openxiv.indexer.engine.evidence` picks an abstract
    sentence or the title)."""
    signals: dict[str, Any] = field(default_factory=dict)
    """Per-side diagnostics, e.g. ``{"bm25_rank": 3, "dense_rank": 12}``."""


@dataclass(frozen=True)
class SearchResult:
    hits: list[PaperHit]
    """The requested page, best first, one hit per paper, deterministic order."""
    total_count: int
    """How many papers the query matches after filters, the same for every page.

    With a lexical side in the mode (the default hybrid, ``bm25``, ``bm25_*``): the papers holding at
    least one query term in their title + abstract or in a full-text passage (on the sides the mode
    uses); hybrid results are drawn from exactly these papers, so paging to the end yields
    ``total_count`` hits and a query none of whose words occur gives 0. With a dense side alone
    (``dense``, ``dense_papers``, ``dense_passages``): every paper passing the filters, since each has
    a similarity (the list itself still ends at the candidate depth)."""
    timings_ms: dict[str, float] = field(default_factory=dict)
    """Time spent in each stage (``encode``, ``dense``, ``bm25``, ``fuse``...)."""
    notes: list[str] = field(default_factory=list)
    """What the caller should know about this answer (e.g. a ``total_count`` that is a lower bound);
    the service passes them on in the response's ``warnings``."""


@dataclass(frozen=True)
class PassageHit:
    """One passage of a passage ranking (`Navigable.top_passages`)."""

    arxiv_id: str
    score: float
    """BM25 on the paper-text scale (a full-text passage's score times the query's passage factor)."""
    passage_id: int | None
    """The corpus passage; ``None``: the paper's own text (title + abstract)."""


@dataclass(frozen=True)
class PassageResult:
    hits: list[PassageHit]
    """The requested page, best first; several passages of one paper may follow each other."""
    total_count: int
    """Passages (and paper texts) holding at least one query term, after filters: the same on every page."""
    timings_ms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class FacetCounts:
    """How the papers matching a query (after filters) spread over dates, categories and authors."""

    total: int
    """Papers counted (those holding a query term, or every paper passing the filters without one)."""
    years: list[tuple[int, int]]
    """``(year, papers)``, by year."""
    months: list[tuple[str, int]]
    """``("YYYY-MM", papers)``, by month."""
    undated: int
    """Papers counted without a date."""
    categories: list[tuple[str, int]]
    """``(category, papers)``, most papers first (ties by name); every category with one."""
    authors: list[tuple[str, int, str]]
    """The top ``(folded name, papers, one arxiv_id of theirs)``, most papers first (ties by name)."""
    timings_ms: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class Navigable(Protocol):
    """What a backend offers beside ranking papers: passages as results, facets, an author's papers.
    The embedded backend has it (`openxiv.indexer.engine.navigation`); a backend without it is
    answered 409 by the service."""

    def top_passages(
        self,
        query: str,
        *,
        top_k: int = 10,
        offset: int = 0,
        filters: SearchFilters | None = None,
        within: tuple[str, ...] = (),
        deadline: float | None = None,
    ) -> PassageResult:
        """The top passages across papers for ``query`` (one ranking; every page a slice of it),
        ``filters`` applied before the cut; ``within``: only these papers (`UnknownPapers` for one
        the snapshot lacks)."""
        ...

    def facet_counts(
        self,
        query: str,
        *,
        filters: SearchFilters | None = None,
        top_authors: int = 10,
        deadline: float | None = None,
    ) -> FacetCounts:
        """Counts over the papers ``query`` matches after ``filters`` (every paper passing them for an
        empty query)."""
        ...

    def author_papers(self, name: str) -> tuple[list[str], list[str]]:
        """The folded author names ``name`` matches (the ``authors`` filter's rule) and their papers'
        ids, newest first (ties by id)."""
        ...


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
        deadline: float | None = None,
    ) -> SearchResult:
        """Rank papers for ``query``. ``mode`` overrides the fusion (``bm25``, ``dense``, ``rrf``...).

        ``deadline`` (a ``time.monotonic()`` value) is checked between stages: past it, the search
        raises `DeadlineExceeded` instead of going on."""
        ...

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
        """Papers nearest to the seeds' own stored vectors (their mean, re-normalised, for several),
        the seeds left out, ``filters`` applied before the cut; ``total_count`` is every paper passing
        the filters but the seeds (and negatives). ``toward`` (a text, encoded as a query) steers the
        direction toward it; ``negative_ids`` push it away from those papers (Rocchio) and are left
        out too (`openxiv.indexer.engine.similar`). `NoVectors` without paper vectors, `UnknownPapers`
        for a seed or negative the snapshot lacks."""
        ...

    def info(self) -> dict[str, Any]:
        """Live facts of the loaded engine (sides, counts, ranking settings) for ``/v1/index``; not the
        manifest, which ``/v1/index`` shows once on its own."""
        ...

    def close(self) -> None: ...
