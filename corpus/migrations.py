"""Bring an existing corpus database up to the current models, in place.

`Base.metadata.create_all` makes missing *tables* but never touches existing ones, so a database
written by an older openxiv lacks the columns added since. `add_missing_columns` adds each one with
``ALTER TABLE ... ADD COLUMN`` (cheap in SQLite: existing rows are not rewritten) and then runs the
column's entry in `BACKFILL`, if any, to give old rows a true value. A new column needs nothing
here unless its old rows need more than its server default: then add one `BACKFILL` entry.

Only additive changes are handled this way; anything else needs a `SCHEMA_VERSION` bump.
"""

from __future__ import annotations

from sqlalchemy import Column, Engine, MetaData, inspect

__all__ = ["BACKFILL", "add_missing_columns"]

BACKFILL: dict[tuple[str, str], str] = {
    # Runs of the old code that never wrote finished_at were cut short (Ctrl-C, kill).
    ("ingest_runs", "status"): "UPDATE ingest_runs SET status = 'interrupted' WHERE finished_at IS NULL",
}
"""``(table, column) -> SQL`` run once, right after the column was added to an existing table."""


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


def add_missing_columns(engine: Engine, metadata: MetaData) -> list[str]:
    """Add every model column the database lacks; returns ``table.column`` for each one added."""
    added: list[str] = []
    inspector = inspect(engine)
    existing_tables = set(inspector.get_table_names())
    with engine.begin() as conn:
        for table in metadata.sorted_tables:
            if table.name not in existing_tables:
                continue
            have = {c["name"] for c in inspector.get_columns(table.name)}
            for column in table.columns:
                if column.name in have:
                    continue
                conn.exec_driver_sql(f'ALTER TABLE "{table.name}" ADD COLUMN {_column_ddl(engine, column)}')
                fill = BACKFILL.get((table.name, column.name))
                if fill:
                    conn.exec_driver_sql(fill)
                added.append(f"{table.name}.{column.name}")
    return added
