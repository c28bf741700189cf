"""Reader for arXiv daily-listing JSON lines (``listing-*.jsonl.gz``).

Each line: ``{"id", "title", "abstract", "authors": [...], "categories": [...], "comment",
"first_seen": "YYYY-MM-DD"}``; the first category is the primary one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openxiv.corpus.ids import InvalidArxivId
from openxiv.corpus.readers._jsonl import iter_json_lines, parse_date, parse_id, str_or_none
from openxiv.corpus.records import PaperRecord, ReadError
from openxiv.corpus.titles import normalize_whitespace

__all__ = ["FORMAT", "parse_listing", "read_listing"]

FORMAT = "listing"


def _str_list(value: object) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    out = (" ".join(str(v).split()) for v in value if v is not None)
    return [v for v in out if v]


def parse_listing(obj: dict[str, Any], source: str) -> PaperRecord:
    """One listing object -> record; raises `InvalidArxivId` or `ValueError` with the reason."""
    arxiv_id, version = parse_id(obj.get("id"))
    title = normalize_whitespace(str_or_none(obj.get("title")))
    if not title:
        raise ValueError("missing title")
    return PaperRecord(
        arxiv_id=arxiv_id,
        source=source,
        version=version,
        title=title,
        abstract=normalize_whitespace(str_or_none(obj.get("abstract"))),
        authors=_str_list(obj.get("authors")),
        categories=_str_list(obj.get("categories")),
        first_seen=parse_date(obj.get("first_seen")),
        comment=normalize_whitespace(str_or_none(obj.get("comment"))),
    )


def read_listing(path: str | Path) -> Iterator[PaperRecord | ReadError]:
    path = Path(path)
    for item in iter_json_lines(path):
        if isinstance(item, ReadError):
            yield item
            continue
        lineno, obj = item
        try:
            yield parse_listing(obj, f"{FORMAT}:{path.name}:{lineno}")
        except (InvalidArxivId, ValueError) as exc:
            yield ReadError(path.name, f"line {lineno}", str(exc))
