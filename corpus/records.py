"""Plain records that cross package boundaries inside openxiv.

Readers produce `PaperRecord` (or `ReadError` for input they had to skip); the store turns records
into rows and hands out read-only views (`PaperView`, `SectionView`, `PassageView`) to the indexer
and the service. Views carry no database session, so they are safe to pass between threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from openxiv.corpus.ids import id_month

__all__ = [
    "DatePrecision",
    "IndexDoc",
    "PaperRecord",
    "PaperView",
    "PassageView",
    "ReadError",
    "SectionRecord",
    "SectionView",
    "best_date",
]

DatePrecision = Literal["day", "month"]
"""How much of a paper's date is known: the day (a v1 date or a listing day) or only the month
(from the arXiv id, whose ``YYMM`` is the month of v1)."""


def best_date(
    arxiv_id: str, published: date | None, first_seen: date | None
) -> tuple[date | None, DatePrecision | None]:
    """The date a paper is served and filtered by, with its precision.

    The v1 date, else the first listing day (both to the day), else the first day of the month the
    id encodes (to the month). The date of a later version (``updated``) is never used: a PDF of v7
    would date a 2017 paper to 2023.
    """
    if published is not None:
        return published, "day"
    if first_seen is not None:
        return first_seen, "day"
    month = id_month(arxiv_id)
    return (month, "month") if month is not None else (None, None)


@dataclass
class SectionRecord:
    """One section of a paper's full text, in reading order."""

    name: str
    text: str
    number: str | None = None
    """The section number as printed (``"3.2"``), when the source has one."""


@dataclass
class PaperRecord:
    """What a reader knows about one paper. Unknown values are ``None`` or empty, never invented."""

    arxiv_id: str
    """Canonical, version-free id (see `openxiv.corpus.ids`)."""
    source: str
    """Where the record came from, e.g. ``listing:listing-cs-2503-2606.jsonl.gz:17``."""
    version: int | None = None
    title: str | None = None
    abstract: str | None = None
    authors: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    """Primary category first."""
    published: date | None = None
    """Date of v1."""
    updated: date | None = None
    """Date of the version this record describes."""
    first_seen: date | None = None
    """Day the paper first appeared in a daily listing."""
    comment: str | None = None
    license: str | None = None
    journal_ref: str | None = None
    doi: str | None = None
    sections: list[SectionRecord] = field(default_factory=list)
    """Full text by section; empty when the source has metadata only."""

    @property
    def has_fulltext(self) -> bool:
        return any(s.text.strip() for s in self.sections)


@dataclass(frozen=True)
class ReadError:
    """Input a reader could not use: reported in the ingest report, skipped, and the batch goes on."""

    source: str
    """File name."""
    location: str
    """``line 17``, ``page 3``, or ``file``."""
    reason: str


@dataclass(frozen=True)
class SectionView:
    idx: int
    """0-based position of the section in the paper."""
    name: str
    text: str
    number: str | None = None


@dataclass(frozen=True)
class PassageView:
    passage_id: int
    """Stable primary key in the corpus database."""
    arxiv_id: str
    section_idx: int | None
    """`SectionView.idx` the passage comes from; ``None`` for the paper-level text (title + abstract)."""
    section_name: str | None
    ordinal: int
    """Position of the passage within the paper (0-based)."""
    text: str
    char_start: int
    char_end: int
    """Offsets of the passage in its section's text."""


@dataclass(frozen=True)
class PaperView:
    arxiv_id: str
    version: int | None
    title: str | None
    abstract: str | None
    authors: tuple[str, ...]
    categories: tuple[str, ...]
    published: date | None
    updated: date | None
    first_seen: date | None
    comment: str | None
    license: str | None
    journal_ref: str | None
    doi: str | None
    sources: tuple[str, ...]
    has_fulltext: bool

    @property
    def date(self) -> date | None:
        """The date served and filtered by (see `best_date`)."""
        return best_date(self.arxiv_id, self.published, self.first_seen)[0]

    @property
    def date_precision(self) -> DatePrecision | None:
        return best_date(self.arxiv_id, self.published, self.first_seen)[1]


@dataclass(frozen=True)
class IndexDoc:
    """What the indexer needs of one paper, streamed from the store in one pass."""

    arxiv_id: str
    title: str
    abstract: str
    categories: tuple[str, ...]
    authors: tuple[str, ...]
    date: date | None
    content_hash: str
    """Hash of everything indexed for this paper: unchanged hash, nothing to re-index."""
    journal_ref: str | None = None
    """Where the paper was published, as arXiv metadata states it (the venue filter reads it)."""
    date_precision: DatePrecision | None = "day"
    """``month``: only the month of ``date`` is known (``date`` is its first day)."""
