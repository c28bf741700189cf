"""Reader for the arXiv OAI / Kaggle metadata snapshot (``arxiv-metadata-oai-snapshot.json``).

One JSON object per line: ``id, submitter, authors`` (one string), ``authors_parsed``
(``[[last, first, suffix], ...]``), ``title, comments, journal-ref, doi, categories`` (space
separated, primary first), ``license, abstract, versions [{version, created}], update_date``.
``published`` is the date of v1, ``updated`` that of the latest version, ``version`` its number.
Titles and abstracts have their hard line breaks and indentation collapsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

from openxiv.corpus.readers.fields import FieldError, json_type, opt_str, opt_text, str_list, text_value
from openxiv.corpus.readers.jsonl import parse_date, parse_id, read_json_records
from openxiv.corpus.records import PaperRecord, ReadError

__all__ = ["FORMAT", "parse_authors", "parse_oai", "parse_versions", "read_oai"]

FORMAT = "oai"

_AUTHOR_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")


def parse_authors(authors: object, authors_parsed: object) -> list[str]:
    """``"First Last"`` names, from ``authors_parsed`` when present, else the ``authors`` string.

    Raises `FieldError` when either has the wrong JSON type.
    """
    out: list[str] = []
    if authors_parsed is not None and not isinstance(authors_parsed, list):
        raise FieldError(f"authors_parsed: expected an array, got {json_type(authors_parsed)}")
    for i, entry in enumerate(authors_parsed or []):
        if not isinstance(entry, list):
            raise FieldError(f"authors_parsed[{i}]: expected an array of strings, got {json_type(entry)}")
        parts = [text_value(p, f"authors_parsed[{i}]") or "" for p in entry]
        last = parts[0] if parts else ""
        first = parts[1] if len(parts) > 1 else ""
        suffix = parts[2] if len(parts) > 2 else ""
        name = " ".join(p for p in (first, last, suffix) if p)
        if name:
            out.append(name)
    if out:
        return out
    text = text_value(authors, "authors")
    if not text:
        return []
    return [n for n in (x.strip() for x in _AUTHOR_SPLIT.split(text)) if n]


def parse_versions(versions: object) -> tuple[int | None, date | None, date | None]:
    """``(latest version number, date of v1, date of the latest version)`` from ``versions``."""
    if not isinstance(versions, list):
        return None, None, None
    dated: list[tuple[int, date | None]] = []
    for v in versions:
        if not isinstance(v, dict):
            continue
        m = re.fullmatch(r"v?(\d+)", str(v.get("version", "")).strip())
        if m:
            dated.append((int(m.group(1)), parse_date(v.get("created"))))
    if not dated:
        return None, None, None
    dated.sort(key=lambda x: x[0])
    return dated[-1][0], dated[0][1], dated[-1][1]


def parse_oai(obj: dict[str, Any], source: str) -> PaperRecord:
    """One metadata object -> record; raises `ValueError` (incl. `InvalidArxivId`) with the reason."""
    arxiv_id, id_version = parse_id(obj.get("id"))
    title = opt_text(obj, "title")
    if not title:
        raise ValueError("missing title")
    version, published, updated = parse_versions(obj.get("versions"))
    if updated is None:
        updated = parse_date(obj.get("update_date"))
    categories = obj.get("categories")
    cats = categories.split() if isinstance(categories, str) else str_list(obj, "categories")
    return PaperRecord(
        arxiv_id=arxiv_id,
        source=source,
        version=version or id_version,
        title=title,
        abstract=opt_text(obj, "abstract"),
        authors=parse_authors(obj.get("authors"), obj.get("authors_parsed")),
        categories=list(dict.fromkeys(cats)),
        published=published,
        updated=updated,
        comment=opt_text(obj, "comments"),
        license=opt_str(obj, "license"),
        journal_ref=opt_text(obj, "journal-ref"),
        doi=opt_str(obj, "doi"),
    )


def read_oai(path: str | Path) -> Iterator[PaperRecord | ReadError]:
    return read_json_records(path, FORMAT, parse_oai)
