"""The corpus store: one SQLite file holding every paper, its full text and its passages.

>>> store = Store("corpus.sqlite")                      # doctest: +SKIP
>>> summary = store.ingest(read_path("listing.jsonl.gz"))  # doctest: +SKIP
>>> store.get_paper("arXiv:2503.11731v2").title           # doctest: +SKIP

Writers use `Store(path)` (WAL journal, one writer at a time); readers in other threads or
processes use `Store.open_readonly(path)`. Papers, sections and passages come back as the frozen
records of `openxiv.corpus.records`.
Merge rules for records of the same paper are in `openxiv.corpus.merge`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from sqlalchemy import (
    BindParameter,
    Engine,
    Select,
    Table,
    bindparam,
    create_engine,
    event,
    func,
    select,
)
from sqlalchemy.pool import QueuePool

from openxiv.corpus.bulkload import ensure_indexes
from openxiv.corpus.ids import try_canonical_id
from openxiv.corpus.ingest import ingest_items
from openxiv.corpus.migrations import create_or_migrate, data_version, legacy_title_norm, missing_columns
from openxiv.corpus.normalize import normalize_title
from openxiv.corpus.reads import IN_CHUNK, RECORD_COLUMNS, paper_from_row, papers_by_id, passages_by_id
from openxiv.corpus.records import Paper, PaperRecord, Passage, ReadError, Section
from openxiv.corpus.runs import IngestSummary, run_status_counts
from openxiv.corpus.schema import Base, IngestError, IngestRun, SourceRow
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.writer import PAS, SEC, P

__all__ = ["IngestSummary", "Store"]

S = SourceRow.__table__
RUNS = cast(Table, IngestRun.__table__)
ERRS = cast(Table, IngestError.__table__)


def _set_pragmas(readonly: bool) -> Callable[[sqlite3.Connection, object], None]:
    def on_connect(dbapi_conn: sqlite3.Connection, _record: object) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        if not readonly:
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA wal_autocheckpoint=16384")  # checkpoint every ~64 MiB of WAL
        cur.execute("PRAGMA cache_size=-65536")  # 64 MiB page cache per connection
        cur.close()

    return on_connect


def _ids() -> BindParameter[Any]:
    """The ``:ids`` list of a prepared ``IN`` query."""
    return bindparam("ids", expanding=True)


class Store:
    """Read and write access to one corpus database file."""

    def __init__(self, db_path: str | Path, *, _readonly: bool = False) -> None:
        self.path = Path(db_path)
        self.readonly = _readonly
        if _readonly:
            if not self.path.is_file():
                raise FileNotFoundError(f"corpus database not found: {self.path}")
            uri = f"file:{self.path.resolve()}?mode=ro"
            self.engine: Engine = create_engine(
                "sqlite://",
                creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False),
                poolclass=QueuePool,
                pool_size=8,
                max_overflow=32,
            )
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.engine = create_engine(f"sqlite:///{self.path}")
        event.listen(self.engine, "connect", _set_pragmas(_readonly))
        if not _readonly:
            self.migrated = create_or_migrate(self.engine, Base.metadata)
            """``table.column`` of each column, ``data.<n>`` of each data step this open applied to an older database."""
            self.rebuilt_indexes = ensure_indexes(self.engine, Base.metadata)
            """Indexes this open built because the database lacked them (a first ingest killed with -9)."""
            missing: set[str] = set()
            self._legacy_titles = False
        else:
            self.migrated = []
            missing = {
                c.name for c in missing_columns(self.engine, Base.metadata) if c.table.name == "papers"
            }
            with self.engine.connect() as conn:
                self._legacy_titles = data_version(conn) < 1  # data.1 refolded title_norm
                """An older database opened read-only: its ``title_norm`` follows `legacy_title_norm`."""
        # an older database opened read-only: leave the columns it lacks out of paper queries
        self._paper_columns = [P.c[name] for name in RECORD_COLUMNS if name not in missing]
        self._paper_column_names = tuple(c.name for c in self._paper_columns)
        self._prepare_reads()

    def _prepare_reads(self) -> None:
        """The lead-sections statement, built once with an expanding ``IN`` parameter: building and
        cache-keying a fresh ``select`` cost more CPU than SQLite spent answering it (BENCHMARKS.md,
        «Search service»). Papers and passages by id are read in plain SQL (`openxiv.corpus.reads`)."""
        first = (
            select(func.min(SEC.c.idx))
            .where(SEC.c.paper_id == P.c.id, func.trim(SEC.c.text) != "")
            .correlate(P)
            .scalar_subquery()
        )
        self._lead_sections = (
            select(P.c.arxiv_id, SEC.c.idx, SEC.c.name, SEC.c.text, SEC.c.number)
            .join(SEC, SEC.c.paper_id == P.c.id)
            .where(P.c.arxiv_id.in_(_ids()), SEC.c.idx == first)
        )

    @classmethod
    def open_readonly(cls, db_path: str | Path) -> Store:
        """A read-only store (``mode=ro``); one instance can be shared by many threads."""
        return cls(db_path, _readonly=True)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing
    def ingest(
        self, items: Iterable[PaperRecord | ReadError], settings: Settings | None = None
    ) -> IngestSummary:
        """Upsert every record, report every `ReadError`; one transaction per batch.

        The run is recorded in ``ingest_runs``: ``finished`` at the end; ``interrupted`` when a
        KeyboardInterrupt (Ctrl-C, or SIGTERM under `openxiv.corpus.runs.terminate_as_interrupt`)
        stops it, ``failed`` on any other error, then the exception goes on. Batches committed
        before stay; the run's counts are those of the committed batches.
        """
        if self.readonly:
            raise PermissionError("this store was opened read-only")
        return ingest_items(self.engine, items, settings or Settings.from_env())

    def copy_to(self, path: str | Path) -> Path:
        """A consistent copy of the database (``VACUUM INTO``), in rollback-journal mode."""
        dest = Path(path)
        if dest.exists():
            raise FileExistsError(f"{dest} already exists")
        dest.parent.mkdir(parents=True, exist_ok=True)
        src = sqlite3.connect(f"file:{self.path.resolve()}?mode=ro", uri=True)
        try:
            src.execute("VACUUM INTO ?", (str(dest),))
        finally:
            src.close()
        out = sqlite3.connect(dest)
        try:
            out.execute("PRAGMA journal_mode=DELETE")
        finally:
            out.close()
        return dest

    # ------------------------------------------------------------------ reading
    def get_paper(self, arxiv_id: str) -> Paper | None:
        """The paper with this id in any spelling (``arXiv:2301.00001v2``...), else ``None``."""
        canonical = try_canonical_id(arxiv_id)
        if canonical is None:
            return None
        return self._get_many([canonical]).get(canonical)

    def get_papers(self, ids: Sequence[str]) -> dict[str, Paper]:
        """Papers keyed by the ids *as given*; unknown or invalid ids are left out."""
        canon = {given: try_canonical_id(given) for given in ids}
        found = self._get_many(sorted({c for c in canon.values() if c}))
        return {given: found[c] for given, c in canon.items() if c in found}

    def _get_many(self, canonical: Sequence[str]) -> dict[str, Paper]:
        with self._cursor() as cur:
            return papers_by_id(cur, self._paper_column_names, canonical)

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        """A DB-API cursor on a connection of the engine's pool (its pragmas applied), for the plain
        SQL reads of `openxiv.corpus.reads`; the connection goes back to the pool afterwards."""
        conn = self.engine.raw_connection()
        try:
            cur = conn.cursor()
            try:
                yield cur
            finally:
                cur.close()
        finally:
            conn.close()

    def sections(self, arxiv_id: str) -> list[Section]:
        canonical = try_canonical_id(arxiv_id)
        if canonical is None:
            return []
        q = (
            select(SEC.c.idx, SEC.c.name, SEC.c.text, SEC.c.number)
            .join(P, P.c.id == SEC.c.paper_id)
            .where(P.c.arxiv_id == canonical)
            .order_by(SEC.c.idx)
        )
        with self.engine.connect() as conn:
            return [Section(r.idx, r.name, r.text, r.number) for r in conn.execute(q)]

    def lead_section(self, arxiv_id: str) -> Section | None:
        """The first section with text (what a tldr of a paper without an abstract is made from):
        one row, where `sections` would read the whole full text."""
        canonical = try_canonical_id(arxiv_id)
        if canonical is None:
            return None
        q = (
            select(SEC.c.idx, SEC.c.name, SEC.c.text, SEC.c.number)
            .join(P, P.c.id == SEC.c.paper_id)
            .where(P.c.arxiv_id == canonical, func.trim(SEC.c.text) != "")
            .order_by(SEC.c.idx)
            .limit(1)
        )
        with self.engine.connect() as conn:
            r = conn.execute(q).first()
        return None if r is None else Section(r.idx, r.name, r.text, r.number)

    def lead_sections(self, ids: Sequence[str]) -> dict[str, Section]:
        """`lead_section` of many papers in one query, keyed by the ids *as given* (papers without
        a section with text are left out): what the tldr of a page of search hits needs."""
        canon = {given: try_canonical_id(given) for given in ids}
        wanted = sorted({c for c in canon.values() if c})
        found: dict[str, Section] = {}
        with self.engine.connect() as conn:
            for i in range(0, len(wanted), IN_CHUNK):
                for r in conn.execute(self._lead_sections, {"ids": wanted[i : i + IN_CHUNK]}):
                    found[r.arxiv_id] = Section(r.idx, r.name, r.text, r.number)
        return {given: found[c] for given, c in canon.items() if c in found}

    def _passage_query(self) -> Select[Any]:
        return (
            select(
                PAS.c.id,
                P.c.arxiv_id,
                PAS.c.section_idx,
                SEC.c.name,
                PAS.c.ordinal,
                PAS.c.text,
                PAS.c.char_start,
                PAS.c.char_end,
            )
            .join(P, P.c.id == PAS.c.paper_id)
            .outerjoin(SEC, (SEC.c.paper_id == PAS.c.paper_id) & (SEC.c.idx == PAS.c.section_idx))
        )

    @staticmethod
    def _passage(r: Any) -> Passage:
        return Passage(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7])

    def passages(self, arxiv_id: str) -> list[Passage]:
        """Full-text passages of one paper, in order (``[]`` without full text)."""
        canonical = try_canonical_id(arxiv_id)
        if canonical is None:
            return []
        q = self._passage_query().where(P.c.arxiv_id == canonical).order_by(PAS.c.ordinal)
        with self.engine.connect() as conn:
            return [self._passage(r) for r in conn.execute(q)]

    def get_passages(self, passage_ids: Sequence[int]) -> dict[int, Passage]:
        with self._cursor() as cur:
            return passages_by_id(cur, passage_ids)

    def iter_papers(self) -> Iterator[Paper]:
        """Every paper, ordered by arxiv_id, streamed (what the indexer reads). Their ``sources``
        are not read (empty): no reader of this stream needs them."""
        q = select(*self._paper_columns).order_by(P.c.arxiv_id)
        with self.engine.connect() as conn:
            for r in conn.execution_options(yield_per=2000).execute(q):
                yield paper_from_row(r, ())

    def iter_passages(self) -> Iterator[Passage]:
        """Every passage ordered by (arxiv_id, ordinal), streamed."""
        q = self._passage_query().order_by(P.c.arxiv_id, PAS.c.ordinal)
        with self.engine.connect() as conn:
            for r in conn.execution_options(yield_per=2000).execute(q):
                yield self._passage(r)

    def fingerprint(self) -> str:
        """SHA-256 over every (arxiv_id, content_hash), and over the papers' references when the
        database holds any (`openxiv.corpus.references.digest`; a database without references keeps
        the fingerprint it had): changes iff indexed content changes."""
        from openxiv.corpus.references import digest

        h = hashlib.sha256()
        q = select(P.c.arxiv_id, P.c.content_hash).order_by(P.c.arxiv_id)
        with self.engine.connect() as conn:
            for aid, ch in conn.execution_options(yield_per=5000).execute(q):
                h.update(f"{aid}\t{ch}\n".encode())
            refs = digest(conn)
        if refs is not None:
            h.update(f"references\t{refs}\n".encode())
        return h.hexdigest()

    def find_by_title(self, title: str) -> list[str]:
        """Ids of papers whose `normalize_title` equals that of ``title``."""
        norm = normalize_title(title)
        if not norm:
            return []
        keys = {norm, legacy_title_norm(title)} if self._legacy_titles else {norm}
        q = select(P.c.arxiv_id).where(P.c.title_norm.in_(keys)).order_by(P.c.arxiv_id)
        with self.engine.connect() as conn:
            return list(conn.execute(q).scalars())

    def papers_containing(self, needle: str, limit: int = 5) -> list[str]:
        """Ids of papers whose stored abstract or a full-text section holds ``needle`` character for
        character (the grounding check's look-up of a quote in papers nobody cited). A scan of every
        stored text: seconds on a whole corpus, so for occasional look-ups only."""
        if not needle.strip():
            return []
        in_sections = (
            select(P.c.arxiv_id).join(SEC, SEC.c.paper_id == P.c.id).where(func.instr(SEC.c.text, needle) > 0)
        )
        in_abstracts = select(P.c.arxiv_id).where(func.instr(P.c.abstract, needle) > 0)
        found: list[str] = []
        with self.engine.connect() as conn:
            for q in (in_abstracts, in_sections):
                for pid in conn.execute(q.limit(limit)).scalars():
                    if pid not in found:
                        found.append(pid)
        return sorted(found)[:limit]

    def stats(self) -> dict[str, Any]:
        """Counts: papers, papers_with_fulltext, sections, passages, skipped (all runs), and more.

        ``interrupted_runs`` counts runs stopped by Ctrl-C or SIGTERM and runs left ``running`` by a
        process that is gone (killed with -9)."""
        with self.engine.connect() as conn:

            def count(q: Any) -> int:
                return int(conn.execute(q).scalar() or 0)

            by_source: dict[str, int] = {
                name: int(n)
                for name, n in conn.execute(
                    select(S.c.source, func.count()).group_by(S.c.source).order_by(S.c.source)
                )
            }
            return {
                "papers": count(select(func.count()).select_from(P)),
                "papers_with_fulltext": count(select(func.count()).select_from(P).where(P.c.has_fulltext)),
                "sections": count(select(func.count()).select_from(SEC)),
                "passages": count(select(func.count()).select_from(PAS)),
                "skipped": count(select(func.count()).select_from(ERRS)),
                "ingest_runs": count(select(func.count()).select_from(RUNS)),
                "interrupted_runs": run_status_counts(conn)["interrupted"],
                "categories": count(select(func.count(func.distinct(P.c.primary_category)))),
                "sources": by_source,
                "db_bytes": self.path.stat().st_size if self.path.exists() else 0,
            }
