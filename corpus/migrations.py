"""Bring an existing corpus database up to the current models, in place.

`Base.metadata.create_all` makes missing *tables* but never touches existing ones, so a database
written by an older openxiv lacks the columns added since. `add_missing_columns` adds each one with
``ALTER TABLE ... ADD COLUMN`` (cheap in SQLite: existing rows are not rewritten) and then runs the
column's entry in `BACKFILL`, if any, to give old rows a true value (SQL, or a function of the
connection when the value is computed in Python). A new column needs nothing here unless its old
rows need more than its server default: then add one `BACKFILL` entry. A database opened read-only
is not migrated: `missing_columns` tells the store which columns to leave out of its queries.

Values computed in Python can change rule without a new column: the title and name folds did
(`openxiv.corpus.normalize`). ``PRAGMA user_version`` records the `DATA_VERSION` whose rules the
stored values follow; `migrate_data` runs each newer `DATA_MIGRATIONS` step once, in order, and a
database the store creates starts at `DATA_VERSION`. A read-only store does not migrate; it asks
`data_version` and matches old ``title_norm`` values with `legacy_title_norm`.

Only additive changes are handled this way; anything else needs a `SCHEMA_VERSION` bump.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from datetime import date

from sqlalchemy import Column, Connection, Engine, MetaData, inspect, select

from openxiv.corpus.normalize import normalize_name, normalize_title

__all__ = [
    "BACKFILL",
    "DATA_MIGRATIONS",
    "DATA_VERSION",
    "add_missing_columns",
    "create_or_migrate",
    "data_version",
    "legacy_title_norm",
    "migrate_data",
    "missing_columns",
    "set_data_version",
]


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


_TEXT_ONLY = (
    "NOT EXISTS (SELECT 1 FROM paper_sources s WHERE s.paper_id = papers.id "
    "AND s.source NOT LIKE 'plaintext:%' AND s.source NOT LIKE 'pdf:%')"
)
"""No source of the paper carries metadata: its title was read from a plain text or a PDF page."""


def _backfill_title_source(conn: Connection) -> None:
    """Where each stored title comes from, and a derived title (`openxiv.corpus.titles`) for each
    paper stored without one, with its content hash (which covers the title)."""
    from openxiv.corpus.merge import content_hash
    from openxiv.corpus.records import PaperFields
    from openxiv.corpus.titles import derive_title

    conn.exec_driver_sql(
        f"UPDATE papers SET title_source = CASE WHEN {_TEXT_ONLY} THEN 'text' ELSE 'metadata' END "
        "WHERE title IS NOT NULL AND title != ''"
    )
    q = (
        "SELECT id, arxiv_id, abstract, categories_json, authors_json, published, first_seen, "
        "passages_hash FROM papers WHERE title IS NULL OR title = ''"
    )
    rows = []
    for r in conn.exec_driver_sql(q).all():
        texts = conn.exec_driver_sql("SELECT text FROM sections WHERE paper_id = ? ORDER BY idx", (r.id,))
        title = derive_title(r.arxiv_id, r.abstract, (t for (t,) in texts))
        state = PaperFields(
            arxiv_id=r.arxiv_id,
            title=title,
            abstract=r.abstract,
            categories=tuple(json.loads(r.categories_json)),
            authors=tuple(json.loads(r.authors_json)),
            published=_date(r.published),
            first_seen=_date(r.first_seen),
        )
        rows.append((title, normalize_title(title) or None, content_hash(state, r.passages_hash or ""), r.id))
    if rows:
        conn.exec_driver_sql(
            "UPDATE papers SET title = ?, title_norm = ?, title_source = 'derived', content_hash = ? WHERE id = ?",
            rows,
        )


def _date(value: object) -> date | None:
    return date.fromisoformat(value) if isinstance(value, str) else value  # type: ignore[return-value]


BACKFILL: dict[tuple[str, str], str | Callable[[Connection], None]] = {
    # Runs of the old code that never wrote finished_at were cut short (Ctrl-C, kill).
    ("ingest_runs", "status"): "UPDATE ingest_runs SET status = 'interrupted' WHERE finished_at IS NULL",
    ("papers", "date_precision"): _backfill_date_precision,
    ("papers", "title_source"): _backfill_title_source,
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


def create_or_migrate(engine: Engine, metadata: MetaData) -> list[str]:
    """Create the tables of a new database at `DATA_VERSION`, or bring an older one up to date.

    Returns what was migrated: ``table.column`` of each column added, ``table:<name>`` of each table
    created (empty: ``paper_references`` came after the first databases), ``data.<n>`` of each data step.
    """
    existing = set(inspect(engine).get_table_names())
    metadata.create_all(engine)
    if not existing:
        with engine.begin() as conn:
            set_data_version(conn)
        return []
    tables = [f"table:{t.name}" for t in metadata.sorted_tables if t.name not in existing]
    return tables + add_missing_columns(engine, metadata) + migrate_data(engine)


def _refold_norms(conn: Connection) -> None:
    """``title_norm`` and ``name_norm`` recomputed with the one fold (anyascii transliteration)."""
    titles = conn.exec_driver_sql("SELECT id, title, title_norm FROM papers").all()
    title_rows = [(new, pid) for pid, title, old in titles if (new := normalize_title(title) or None) != old]
    if title_rows:
        conn.exec_driver_sql("UPDATE papers SET title_norm = ? WHERE id = ?", title_rows)
    names = conn.exec_driver_sql("SELECT paper_id, position, name, name_norm FROM paper_authors").all()
    name_rows = [(new, pid, pos) for pid, pos, name, old in names if (new := normalize_name(name)) != old]
    if name_rows:
        sql = "UPDATE paper_authors SET name_norm = ? WHERE paper_id = ? AND position = ?"
        conn.exec_driver_sql(sql, name_rows)


DATA_MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: _refold_norms,
}
"""``version -> step`` that brings stored values from the rules of ``version - 1`` to those of ``version``."""

DATA_VERSION = max(DATA_MIGRATIONS)
"""The rules the current code computes stored values with (``PRAGMA user_version`` of a current database)."""


def data_version(conn: Connection) -> int:
    """``PRAGMA user_version``: 0 for a database written before values were versioned."""
    return int(conn.exec_driver_sql("PRAGMA user_version").scalar_one())


def set_data_version(conn: Connection, version: int = DATA_VERSION) -> None:
    conn.exec_driver_sql(f"PRAGMA user_version = {int(version)}")


def migrate_data(engine: Engine) -> list[str]:
    """Run every data migration newer than the database's version; returns ``data.<version>`` for each."""
    done: list[str] = []
    with engine.begin() as conn:
        current = data_version(conn)
        for version in sorted(v for v in DATA_MIGRATIONS if v > current):
            DATA_MIGRATIONS[version](conn)
            set_data_version(conn, version)
            done.append(f"data.{version}")
    return done


_LEGACY_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def legacy_title_norm(title: str) -> str:
    """``title_norm`` as data version 0 stored it (NFKD marks dropped, lower, ``[\\W_]+`` to space)."""
    if not title.isascii():
        title = "".join(c for c in unicodedata.normalize("NFKD", title) if not unicodedata.combining(c))
    return _LEGACY_NON_WORD.sub(" ", title.lower()).strip()
