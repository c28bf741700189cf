"""Plain records that cross package boundaries inside openxiv.

The metadata of a paper is declared once, in `PaperFields`; every record of a paper extends it:

- `PaperRecord` is what a reader knows about one paper from one input (with that input's full
  text), or a `ReadError` for input it had to skip;
- `Paper` is a paper as the store holds it, after every record about it was merged: the one record
  that flows store -> indexer (`Store.iter_papers`) -> service (`Store.get_paper`), where
  `openxiv.service.views` turns it into API answers;
- `Section` and `Passage` are its full text as stored.

All are frozen and carry no database session, so they are safe to pass between threads. The
mapping between them and the database rows is in `openxiv.corpus.reads` (`paper_from_row`) and
`openxiv.corpus.writer` (the rows written).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import date
from operator import attrgetter
from typing import Any, Literal

from openxiv.corpus.ids import id_month

__all__ = [
    "FIELD_NAMES",
    "REFERENCE_CHARS",
    "TITLE_SOURCES",
    "DatePrecision",
    "Paper",
    "PaperFields",
    "PaperRecord",
    "Passage",
    "ReadError",
    "Reference",
    "Section",
    "SectionRecord",
    "TitleSource",
    "best_date",
    "field_values",
]

DatePrecision = Literal["day", "month"]
"""How much of a paper's date is known: the day (a v1 date or a listing day) or only the month
(from the arXiv id, whose ``YYMM`` is the month of v1)."""

TitleSource = Literal["metadata", "text", "derived"]
"""Where a paper's title comes from: the metadata of a listing, OAI record, unarXive record or PDF;
the text (the opening of a plain text, the title block of a PDF page); or ``derived`` from the
paper's first real sentence because no title was found (`openxiv.corpus.titles`)."""
TITLE_SOURCES: tuple[TitleSource, ...] = ("metadata", "text", "derived")
"""Best first: a title from a better source replaces one from a worse source (`openxiv.corpus.merge`)."""


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


@dataclass(frozen=True)
class PaperFields:
    """The metadata of one paper, declared once. Unknown values are ``None`` or empty, never invented."""

    arxiv_id: str
    """Canonical, version-free id (see `openxiv.corpus.ids`)."""
    version: int | None = None
    """Latest version known."""
    title: str | None = None
    abstract: str | None = None
    authors: Sequence[str] = ()
    categories: Sequence[str] = ()
    """Primary category first."""
    published: date | None = None
    """Date of v1."""
    updated: date | None = None
    """Date of the latest version known."""
    first_seen: date | None = None
    """Day the paper first appeared in a daily listing."""
    comment: str | None = None
    license: str | None = None
    journal_ref: str | None = None
    """Where the paper was published, as arXiv metadata states it (the venue filter reads it)."""
    doi: str | None = None
    title_source: TitleSource | None = None
    """Where ``title`` comes from (`TitleSource`); a reader that gives a title without saying is
    read as ``metadata``. Every stored paper has a title and its source."""

    @property
    def date(self) -> date | None:
        """The date served and filtered by (see `best_date`)."""
        return best_date(self.arxiv_id, self.published, self.first_seen)[0]

    @property
    def date_precision(self) -> DatePrecision | None:
        """``month``: only the month of `date` is known (`date` is its first day)."""
        return best_date(self.arxiv_id, self.published, self.first_seen)[1]


FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(PaperFields))
"""The names of the `PaperFields` fields, in order (asked once: ``dataclasses.fields`` per record
was a tenth of a listing ingest's CPU)."""


_get_fields = attrgetter(*FIELD_NAMES)


def field_values(record: PaperFields) -> dict[str, Any]:
    """The `PaperFields` values of any paper record, by name (shallow: nothing is copied)."""
    return dict(zip(FIELD_NAMES, _get_fields(record), strict=True))


@dataclass(frozen=True)
class SectionRecord:
    """One section of a paper's full text, in reading order."""

    name: str
    text: str
    number: str | None = None
    """The section number as printed (``"3.2"``), when the source has one."""


@dataclass(frozen=True)
class Reference:
    """One entry of a paper's bibliography: the arXiv id it resolves to, its text as printed, or both."""

    arxiv_id: str | None
    """Canonical, version-free id of the cited paper; ``None`` when the entry resolves to none."""
    text: str | None
    """The entry as the source prints it (whitespace folded, at most `REFERENCE_CHARS` characters)."""
    context: str | None = None
    """The body sentence that cites the entry (`openxiv.corpus.bibliography`); ``None`` when unknown
    (no marker found, or an unArXive input, whose entries are kept as they come)."""


REFERENCE_CHARS = 1000
"""Longest reference text kept (a bibliography entry longer than this is a parsing accident)."""


@dataclass(frozen=True)
class PaperRecord(PaperFields):
    """What a reader knows about one paper from one input."""

    source: str = field(kw_only=True)
    """Where the record came from, e.g. ``listing:listing-cs-2503-2606.jsonl.gz:17``."""
    authors: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    """Primary category first."""
    sections: list[SectionRecord] = field(default_factory=list)
    """Full text by section; empty when the source has metadata only."""
    references: list[Reference] = field(default_factory=list)
    """The bibliography in the source's order; empty when the source carries none (only unArXive
    does: `openxiv.corpus.references`)."""

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
class Paper(PaperFields):
    """A stored paper: every record about it merged (`openxiv.corpus.merge`)."""

    authors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    """Primary category first."""
    sources: tuple[str, ...] = ()
    """``format:file name`` of every input that contributed to the paper."""
    has_fulltext: bool = False
    content_hash: str | None = None
    """Hash of everything indexed for this paper (`openxiv.corpus.merge.content_hash`): an
    unchanged hash, nothing to re-index."""


@dataclass(frozen=True)
class Section:
    idx: int
    """0-based position of the section in the paper."""
    name: str
    text: str
    number: str | None = None


@dataclass(frozen=True)
class Passage:
    passage_id: int
    """Stable primary key in the corpus database."""
    arxiv_id: str
    section_idx: int | None
    """`Section.idx` the passage comes from; ``None`` for the paper-level text (title + abstract)."""
    section_name: str | None
    ordinal: int
    """Position of the passage within the paper (0-based)."""
    text: str
    char_start: int
    char_end: int
    """Offsets of the passage in its section's text."""
