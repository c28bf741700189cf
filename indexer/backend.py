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
    "FAMILIES",
    "FUSION_METHODS",
    "MODES",
    "MODE_ALIASES",
    "SIDES",
    "DeadlineExceeded",
    "ModeUnavailable",
    "PaperHit",
    "SearchBackend",
    "SearchFilters",
    "SearchResult",
    "UnknownMode",
    "UnsupportedFilter",
    "check_deadline",
    "check_page",
    "mode_help",
    "parse_mode",
]


FUSION_METHODS = ("rrf", "weighted", "zscore")
"""Ways to fuse the two families into one list (`openxiv.indexer.engine.fusion`)."""
SIDES = ("bm25_papers", "bm25_passages", "dense_papers", "dense_passages")
"""Candidate lists one snapshot can hold; a mode naming one side runs it alone (diagnostics)."""
FAMILIES = {"bm25": ("bm25_papers", "bm25_passages"), "dense": ("dense_papers", "dense_passages")}
"""Sides sharing a score scale (merged by max); a mode naming a family runs that family alone."""
MODES = (*FUSION_METHODS, *FAMILIES, *SIDES)
"""Every canonical ranking mode the engine runs."""
MODE_ALIASES: dict[str, str | None] = {"hybrid": None, "vector": "dense"}
"""Other accepted spellings: ``hybrid`` is the configured default (``None``), ``vector`` is ``dense``."""


class UnknownMode(ValueError):
    """A ranking mode outside the vocabulary (`MODES` and `MODE_ALIASES`)."""


class ModeUnavailable(UnknownMode):
    """A known mode that needs a side this snapshot lacks (``dense`` on an ``--embed none`` build)."""


def parse_mode(text: str | None) -> str | None:
    """The canonical mode for ``text`` (case and surrounding space ignored); ``None`` (blank or
    ``hybrid``) means the configured default. Anything else raises `UnknownMode`."""
    if text is None or not text.strip():
        return None
    key = text.strip().lower()
    if key in MODE_ALIASES:
        return MODE_ALIASES[key]
    if key in MODES:
        return key
    raise UnknownMode(f"unknown mode {text!r}: expected one of {', '.join(sorted((*MODES, *MODE_ALIASES)))}")


def mode_help(default: str = "the configured default, OPENXIV_FUSION") -> str:
    """One line naming every mode, for API and CLI descriptions (generated, so it cannot drift)."""
    return (
        f"Ranking: hybrid ({default}); fusion {', '.join(FUSION_METHODS)}; one family "
        f"{', '.join(FAMILIES)} (vector = dense); one side {', '.join(SIDES)}."
    )


class UnsupportedFilter(ValueError):
    """A filter this snapshot cannot answer (e.g. venues on a snapshot built before they were indexed)."""


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

    @property
    def empty(self) -> bool:
        return not (
            self.categories
            or self.authors
            or self.venues
            or self.venue_year is not None
            or self.date_from
            or self.date_to
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

    def info(self) -> dict[str, Any]:
        """Live facts of the loaded engine (sides, counts, ranking settings) for ``/v1/index``; not the
        manifest, which ``/v1/index`` shows once on its own."""
        ...

    def close(self) -> None: ...
