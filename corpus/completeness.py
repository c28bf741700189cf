"""How complete the corpus metadata is: per field, the share of papers that have it.

`completeness(conn)` answers on any corpus database, old or new. On a database made before
``papers.date_precision`` existed it reports what that schema served: the date then was the v1
date, else the listing day, else the date of the latest version the input showed, all to the day.

Fields: ``title``, ``abstract``, ``authors`` (at least one), ``date`` (and ``date_day`` /
``date_month``: known to the day, or only to the month from the arXiv id), ``categories`` (at
least one) and ``fulltext``. ``authors_title_block`` restricts the authors share to papers that
came with a title block, i.e. from at least one input other than a plain-text full text
(listing, OAI and unarXive metadata, PDFs); the plain texts of ``../shared`` mostly start with the
title alone, so their authors are counted in ``authors`` only.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

__all__ = ["completeness"]

_FIELDS = {
    "title": "title IS NOT NULL AND title != ''",
    "abstract": "abstract IS NOT NULL AND abstract != ''",
    "authors": "authors_json != '[]'",
    "categories": "categories_json != '[]'",
    "fulltext": "has_fulltext",
}
_TITLE_BLOCK = (
    "EXISTS (SELECT 1 FROM paper_sources s WHERE s.paper_id = papers.id AND s.source NOT LIKE 'plaintext:%')"
)


def _share(n: int, total: int) -> float:
    return round(n / total, 6) if total else 0.0


def completeness(conn: Connection) -> dict[str, Any]:
    """``{"papers": N, "<field>": {"papers": n, "share": n / N}, ...}`` (see the module docstring)."""
    columns = {r[1] for r in conn.exec_driver_sql("PRAGMA table_info(papers)")}
    exprs = dict(_FIELDS)
    if "date_precision" in columns:
        exprs["date"] = "date_precision IS NOT NULL"
        exprs["date_day"] = "date_precision = 'day'"
        exprs["date_month"] = "date_precision = 'month'"
    else:
        exprs["date"] = "COALESCE(published, first_seen, updated) IS NOT NULL"
        exprs["date_day"] = exprs["date"]
        exprs["date_month"] = "0"
    sums = ", ".join(f"SUM(CASE WHEN {e} THEN 1 ELSE 0 END)" for e in exprs.values())
    row = conn.exec_driver_sql(f"SELECT COUNT(*), {sums} FROM papers").one()
    total = int(row[0])
    out: dict[str, Any] = {"papers": total}
    for name, n in zip(exprs, row[1:], strict=True):
        out[name] = {"papers": int(n or 0), "share": _share(int(n or 0), total)}
    block = conn.exec_driver_sql(
        f"SELECT COUNT(*), SUM(CASE WHEN authors_json != '[]' THEN 1 ELSE 0 END) FROM papers WHERE {_TITLE_BLOCK}"
    ).one()
    with_block, with_authors = int(block[0]), int(block[1] or 0)
    out["authors_title_block"] = {
        "papers": with_authors,
        "of": with_block,
        "share": _share(with_authors, with_block),
    }
    return out
