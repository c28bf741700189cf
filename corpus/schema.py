"""The corpus database: SQLAlchemy 2.x declarative models on SQLite.

The row classes are named ``*Row`` (`PaperRow`, `AuthorRow`, ...): `openxiv.corpus.records.Paper` is
the record the rest of openxiv reads; `openxiv.corpus.reads` maps a row to a record, `openxiv.corpus.writer`
a record to a row.

One row per paper (canonical arXiv id, unique), with its ordered authors and categories in child
tables (for filtering) and, denormalised on the paper row, as JSON arrays (so a paper reads in one
query). Full text is stored as ordered sections and the passages cut from them at ingest time.
A paper's bibliography (unArXive, plain-text and PDF inputs) is in ``paper_references``.
Every input the readers had to skip lands in ``ingest_errors`` with the run that met it.

Connections run with ``PRAGMA foreign_keys=ON``; writable databases use WAL journaling.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    Boolean,
    Date,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "SCHEMA_VERSION",
    "UNINDEXED",
    "AuthorRow",
    "Base",
    "CategoryRow",
    "IngestError",
    "IngestInput",
    "IngestRun",
    "PaperRow",
    "PassageRow",
    "ReferenceRow",
    "SectionRow",
    "SourceRow",
]

SCHEMA_VERSION = 1

UNINDEXED = ("papers.published", "paper_authors.name_norm", "paper_categories.category")
"""Columns that had an index no query of openxiv uses (issue 13): the date, author and category
filters are answered from the snapshot's arrays and postings, and every SQL query on these tables
looks papers up by id or arXiv id (``EXPLAIN QUERY PLAN``, docs/corpus.md «Speed»). Building those
three indexes was 0.7 of the 10 CPU seconds of a first listing load. Databases made before keep
them (they are only look-up structures)."""


class Base(DeclarativeBase):
    pass


class PaperRow(Base):
    __tablename__ = "papers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    arxiv_id: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    """Canonical, version-free id (``2301.00001``, ``hep-th/9901001``)."""
    version: Mapped[int | None] = mapped_column(Integer)
    """Latest version known from any source."""
    title: Mapped[str | None] = mapped_column(Text)
    title_source: Mapped[str | None] = mapped_column(String(8))
    """``metadata``, ``text`` or ``derived``: where the title comes from
    (`openxiv.corpus.records.TitleSource`). Added by a migration to older databases, which also
    derives a title for each paper stored without one."""
    title_norm: Mapped[str | None] = mapped_column(Text, index=True)
    """`openxiv.corpus.normalize.normalize_title` of the title, for exact title look-ups."""
    abstract: Mapped[str | None] = mapped_column(Text)
    primary_category: Mapped[str | None] = mapped_column(String(32), index=True)
    authors_json: Mapped[str] = mapped_column(Text, nullable=False, default="[]")
    categories_json: Mapped[str] = mapped_column(Text, nullable=False, default="[]")
    published: Mapped[date | None] = mapped_column(Date)
    updated: Mapped[date | None] = mapped_column(Date)
    first_seen: Mapped[date | None] = mapped_column(Date)
    date_precision: Mapped[str | None] = mapped_column(String(8))
    """``day`` or ``month``: how much of the served date is known (`openxiv.corpus.records.best_date`:
    v1 date or listing day, else the month of the id). Added by a migration to older databases."""
    comment: Mapped[str | None] = mapped_column(Text)
    license: Mapped[str | None] = mapped_column(Text)
    journal_ref: Mapped[str | None] = mapped_column(Text)
    doi: Mapped[str | None] = mapped_column(Text)
    has_fulltext: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    sections_hash: Mapped[str | None] = mapped_column(String(64))
    """Hash of the stored sections; an identical full text from another source changes nothing."""
    passages_hash: Mapped[str | None] = mapped_column(String(64))
    """Hash of the passage texts, part of the content hash."""
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    """Hash of everything indexed: title, abstract, categories, authors, date, passages."""


class AuthorRow(Base):
    __tablename__ = "paper_authors"
    __table_args__ = ({"sqlite_with_rowid": False},)

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, nullable=False)
    name_norm: Mapped[str] = mapped_column(Text, nullable=False)
    """Lowercase, accents and punctuation removed: what the author filters match (through the
    index's author postings, not SQL; see `UNINDEXED` on why this column has no index)."""


class CategoryRow(Base):
    __tablename__ = "paper_categories"
    __table_args__ = ({"sqlite_with_rowid": False},)

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    """0 is the primary category."""
    category: Mapped[str] = mapped_column(String(32), nullable=False)


class SourceRow(Base):
    __tablename__ = "paper_sources"
    __table_args__ = (UniqueConstraint("paper_id", "source"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), nullable=False)
    source: Mapped[str] = mapped_column(Text, nullable=False)
    """``format:file name`` of an input that contributed to the paper."""


class SectionRow(Base):
    __tablename__ = "sections"
    __table_args__ = (UniqueConstraint("paper_id", "idx"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), nullable=False)
    idx: Mapped[int] = mapped_column(Integer, nullable=False)
    number: Mapped[str | None] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(Text, nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)


class PassageRow(Base):
    __tablename__ = "passages"
    __table_args__ = (UniqueConstraint("paper_id", "ordinal"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), nullable=False)
    section_idx: Mapped[int] = mapped_column(Integer, nullable=False)
    ordinal: Mapped[int] = mapped_column(Integer, nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    char_start: Mapped[int] = mapped_column(Integer, nullable=False)
    char_end: Mapped[int] = mapped_column(Integer, nullable=False)


class ReferenceRow(Base):
    """One entry of a paper's bibliography, in its order (`openxiv.corpus.references`): unArXive inputs
    carry theirs, the plain-text and PDF readers parse theirs (`openxiv.corpus.bibliography`); a
    database made before this table gets it empty on its next writable open, and re-ingesting fills it."""

    __tablename__ = "paper_references"
    __table_args__ = ({"sqlite_with_rowid": False},)

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    cited_id: Mapped[str | None] = mapped_column(String(64))
    """Canonical arXiv id of the cited paper (in the corpus or not); null when the entry resolves to none."""
    text: Mapped[str | None] = mapped_column(Text)
    """The entry as printed."""
    context: Mapped[str | None] = mapped_column(Text)
    """The body sentence citing the entry (plain-text and PDF inputs; `openxiv.corpus.bibliography`).
    Added by a migration to older databases (null there)."""


class IngestRun(Base):
    """One `Store.ingest` call: how it ended and what it did (``openxiv.corpus.runs``)."""

    __tablename__ = "ingest_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    started_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    """When the run ended (finished, interrupted or failed); null while running or after a kill -9."""
    status: Mapped[str] = mapped_column(String(16), nullable=False, server_default="finished")
    """``running``, ``finished``, ``interrupted`` (Ctrl-C, SIGTERM) or ``failed`` (an error). A run
    left ``running`` by a process that no longer exists was killed; `openxiv stats` counts it as
    interrupted. Rows written before this column existed are ``finished``, or ``interrupted`` when
    they have no ``finished_at``."""
    pid: Mapped[int | None] = mapped_column(Integer)
    """Process id of the ingest, to tell a live ``running`` run from a killed one."""
    host: Mapped[str | None] = mapped_column(Text)
    """Host name of that process (a pid means nothing on another machine)."""
    read: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    added: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    updated: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    unchanged: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    skipped: Mapped[int] = mapped_column(Integer, nullable=False, default=0)


class IngestError(Base):
    __tablename__ = "ingest_errors"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(
        ForeignKey("ingest_runs.id", ondelete="CASCADE"), nullable=False, index=True
    )
    source: Mapped[str] = mapped_column(Text, nullable=False)
    location: Mapped[str] = mapped_column(Text, nullable=False)
    reason: Mapped[str] = mapped_column(Text, nullable=False)


class IngestInput(Base):
    """An input file an ingest read completely without error, as it was then (`openxiv.corpus.inputs`):
    ``openxiv ingest --skip-unchanged`` does not read it again while it and ``read_key`` stay the same."""

    __tablename__ = "ingest_inputs"

    path: Mapped[str] = mapped_column(Text, primary_key=True)
    """The file's resolved path."""
    size: Mapped[int] = mapped_column(Integer, nullable=False)
    mtime_ns: Mapped[int] = mapped_column(Integer, nullable=False)
    sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    read_key: Mapped[str] = mapped_column(Text, nullable=False)
    """What the records read from it depend on besides its bytes: format option, passage settings,
    openxiv version, data version (`openxiv.corpus.inputs.read_key`)."""
    run_id: Mapped[int | None] = mapped_column(Integer)
    """The ingest run that read it."""
