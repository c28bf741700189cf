"""Bring an existing corpus database up to the current models, in place.

`Base.metadata.create_all` makes missing *tables* but never touches existing ones, so a database
written by an older openxiv lacks the columns added since. `add_missing_columns` adds each one with
``ALTER TABLE ... ADD COLUMN`` (cheap in SQLite: existing rows are not rewritten) and then runs the
column's entry in `BACKFILL`, if any, to give old rows a true value (SQL, or a function of the
connection when the value is computed in Python). A new column needs nothing here unless its old
rows need more than its server default: then add one `BACKFILL` entry. A database opened read-only
is not migrated: `missing_columns` tells the store which columns to leave out of its queries.

Only additive changes are handled this way; anything else needs a `SCHEMA_VERSION` bump.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from sqlalchemy import Column, Connection, Engine, MetaData, inspect, select

__all__ = ["BACKFILL", "add_missing_columns", "missing_columns"]


def _backfill_date_precision(conn: Connection) -> None:
    """Date precision of every paper, and its content hash (it covers the date and its precision)."""
    from openxiv.corpus.merge import content_hash
    from openxiv.corpus.records import PaperFields
    from openxiv.corpus.writer import P

    q = select(
        P.c.id, P.c.arxiv_id, P.c.title, P.c.abstract, P.c.categories_json, P.c.authors_json,
        P.c.published, P.c.first_seen, P.c.passages_hash,
    )  # fmt: skip
    rows = []
    for r in conn.execute(q).all():
        state = PaperFields(
            arxiv_id=r.arxiv_id,
            title=r.title,
            abstract=r.abstract,
            categories=tuple(json.loads(r.categories_json)),
            authors=tuple(json.loads(r.authors_json)),
            published=r.published,
            first_seen=r.first_seen,
        )
        rows.append((state.date_precision, content_hash(state, r.passages_hash or ""), r.id))
    if rows:
        conn.exec_driver_sql("UPDATE papers SET date_precision = ?, content_hash = ? WHERE id = ?", rows)


BACKFILL: dict[tuple[str, str], str | Callable[[Connection], None]] = {
    # Runs of the old code that never wrote finished_at were cut short (Ctrl-C, kill).
    ("ingest_runs", "status"): "UPDATE ingest_runs SET status = 'interrupted' WHERE finished_at IS NULL",
    ("papers", "date_precision"): _backfill_date_precision,
}
"""``(table, column) -> SQL or function`` run once, right after the column was added to an existing table."""


def _column_ddl(engine: Engine, column: Column[object]) -> str:
    ddl = f'"{column.name}" {column.type.compile(dialect=engine.dialect)}'
    default = column.server_default
    if default is not None:
        arg = getattr(default, "arg", None)
        if not isinstance(arg, str):
            raise TypeError(f"{column}: only string server defaults can be migrated")
        ddl += " DEFAULT '" + arg.replace("'", "''") + "'"
    if not column.nullable:
        if default is None:
            raise TypeError(f"{column}: a NOT NULL column needs a server default to be added in place")
        ddl += " NOT NULL"
    return ddl


def missing_columns(engine: Engine, metadata: MetaData) -> list[Column[object]]:
    """Model columns that the existing tables of the database lack (empty for a current database)."""
    inspector = inspect(engine)
    existing_tables = set(inspector.get_table_names())
    missing: list[Column[object]] = []
    for table in metadata.sorted_tables:
        if table.name in existing_tables:
            have = {c["name"] for c in inspector.get_columns(table.name)}
            missing.extend(c for c in table.columns if c.name not in have)
    return missing


def add_missing_columns(engine: Engine, metadata: MetaData) -> list[str]:
    """Add every model column the database lacks; returns ``table.column`` for each one added."""
    missing = missing_columns(engine, metadata)
    with engine.begin() as conn:
        for column in missing:
            table = column.table.name
            conn.exec_driver_sql(f'ALTER TABLE "{table}" ADD COLUMN {_column_ddl(engine, column)}')
            fill = BACKFILL.get((table, column.name))
            if isinstance(fill, str):
                conn.exec_driver_sql(fill)
            elif fill is not None:
                fill(conn)
    return [f"{c.table.name}.{c.name}" for c in missing]
