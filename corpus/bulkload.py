"""The secondary indexes of the corpus tables, built once after a first load rather than row by row.

Into an empty database, `Store.ingest` drops the non-unique indexes of the tables it fills
(`deferred_indexes`: the title and primary-category look-ups) before
the first batch and builds them again when the run ends, however it ends. Keeping them up to date
row by row cost 1.2 of the 4.6 CPU seconds SQLite spent inserting the 88,917 shared listing lines,
sorting them once at the end costs 0.9 (BENCHMARKS.md, «Ingest»). Unique indexes stay: the
writer looks papers up by arXiv id and sources by paper while it loads.

Crash safety is that of the batches: every batch is still one transaction, the indexes are only
redundant look-up structures, and nothing the writer reads depends on them. A process killed with -9
during a first load leaves the database without them (queries by those columns are then slower,
never wrong); `ensure_indexes` runs at every writable open, so the next ingest of that database
builds them before anything else.
"""

from __future__ import annotations

from sqlalchemy import Connection, Engine, Index, MetaData

__all__ = ["deferred_indexes", "drop_indexes", "ensure_indexes"]

_FILLED_BY_INGEST = ("papers", "paper_authors", "paper_categories", "paper_sources", "sections", "passages")


def deferred_indexes(metadata: MetaData) -> list[Index]:
    """The non-unique model indexes of the tables an ingest fills, in a stable order."""
    return sorted(
        (ix for name in _FILLED_BY_INGEST if name in metadata.tables for ix in metadata.tables[name].indexes
         if not ix.unique),
        key=lambda ix: str(ix.name),
    )  # fmt: skip


def drop_indexes(conn: Connection, indexes: list[Index]) -> None:
    """Drop ``indexes`` (those that exist) inside the caller's transaction."""
    for ix in indexes:
        conn.exec_driver_sql(f'DROP INDEX IF EXISTS "{ix.name}"')


def ensure_indexes(engine: Engine, metadata: MetaData) -> list[str]:
    """Create every model index the database lacks; returns their names (empty when none was missing)."""
    created: list[str] = []
    with engine.begin() as conn:
        have = {row[0] for row in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'index'")}
        for table in metadata.sorted_tables:
            for ix in sorted(table.indexes, key=lambda ix: str(ix.name)):
                if ix.name not in have:
                    ix.create(conn, checkfirst=True)
                    created.append(str(ix.name))
    return created
