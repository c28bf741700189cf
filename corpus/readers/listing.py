"""Reader for arXiv daily-listing JSON lines (``listing-*.jsonl.gz``).

Each line: ``{"id", "title", "abstract", "authors": [...], "categories": [...], "comment",
"first_seen": "YYYY-MM-DD"}``; the first category is the primary one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openxiv.corpus.readers.fields import opt_text, str_list
from openxiv.corpus.readers.jsonl import parse_date, parse_id, read_json_records
from openxiv.corpus.records import PaperRecord, ReadError

__all__ = ["FORMAT", "parse_listing", "read_listing"]

FORMAT = "listing"


def parse_listing(obj: dict[str, Any], source: str) -> PaperRecord:
    """One listing object -> record; raises `InvalidArxivId` or `ValueError` with the reason."""
    arxiv_id, version = parse_id(obj.get("id"))
    title = opt_text(obj, "title")
    if not title:
        raise ValueError("missing title")
    return PaperRecord(
        arxiv_id=arxiv_id,
        source=source,
        version=version,
        title=title,
        abstract=opt_text(obj, "abstract"),
        authors=str_list(obj, "authors"),
        categories=str_list(obj, "categories"),
        first_seen=parse_date(obj.get("first_seen")),
        comment=opt_text(obj, "comment"),
    )


def read_listing(path: str | Path) -> Iterator[PaperRecord | ReadError]:
    return read_json_records(path, FORMAT, parse_listing)
