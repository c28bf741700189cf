"""Shared plumbing for the JSON-lines readers: streaming, ``.gz``, per-line errors, small parsers."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from datetime import date, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO, Any

from openxiv.corpus.ids import InvalidArxivId, parse_arxiv_id
from openxiv.corpus.records import ReadError

__all__ = ["iter_json_lines", "open_text", "parse_date", "parse_id", "str_or_none"]


def open_text(path: Path) -> IO[str]:
    """Open a text file, transparently gunzipping ``*.gz`` (checked by magic bytes, not name)."""
    raw = path.open("rb")
    magic = raw.peek(2)[:2] if isinstance(raw, io.BufferedReader) else b""
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.GzipFile(fileobj=raw), encoding="utf-8", errors="replace")
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace")


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]] | ReadError]:
    """``(line number, object)`` for each non-blank line, or a `ReadError` for the bad ones.

    A file that cannot be opened or stops mid-stream (truncated gzip) ends with one `ReadError`.
    """
    name = path.name
    lineno = 0
    try:
        with open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    yield ReadError(name, f"line {lineno}", f"invalid JSON: {exc.msg} (column {exc.colno})")
                    continue
                if not isinstance(obj, dict):
                    yield ReadError(
                        name, f"line {lineno}", f"expected a JSON object, got {type(obj).__name__}"
                    )
                    continue
                yield lineno, obj
    except (OSError, EOFError, UnicodeError, gzip.BadGzipFile) as exc:
        where = "file" if lineno == 0 else f"line {lineno + 1}"
        yield ReadError(name, where, f"cannot read file: {exc}")


def parse_id(value: object) -> tuple[str, int | None]:
    """Canonical id and version of a JSON ``id`` value; raises `InvalidArxivId`."""
    if value is None or value == "":
        raise InvalidArxivId("missing id")
    if not isinstance(value, str):
        raise InvalidArxivId(f"id is not a string: {value!r}")
    try:
        parsed = parse_arxiv_id(value)
    except InvalidArxivId as exc:
        raise InvalidArxivId(f"invalid id: {exc}") from exc
    return parsed.canonical, parsed.version


def str_or_none(value: object) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def parse_date(value: object) -> date | None:
    """``2025-03-18``, ``2025-03-18T...`` or an RFC 2822 date (``Thu, 22 Dec 2022 17:01:56 GMT``)."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(text).date()
    except (TypeError, ValueError, IndexError):
        pass
    try:
        return datetime.strptime(text, "%Y/%m/%d").date()
    except ValueError:
        return None
