"""The one line loop every JSON-lines reader shares: streaming, ``.gz``, per-line errors, checks.

`read_json_records(path, format, parse)` is a whole reader: it reads ``path`` line by line and
turns each line into a `PaperRecord` with ``parse`` or into a `ReadError` that says why it could
not (invalid UTF-8, a lone surrogate, invalid JSON, not an object, a wrong type, a value over its
size limit, whatever ``parse`` raises as `ValueError`). A bad line costs only itself.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Callable, Iterator
from datetime import date, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO, Any

import orjson

from openxiv.corpus.ids import InvalidArxivId, parse_arxiv_id
from openxiv.corpus.readers.fields import FieldError, check_limits
from openxiv.corpus.readers.limits import MAX_LINE_BYTES
from openxiv.corpus.records import PaperRecord, ReadError

__all__ = [
    "Parse",
    "iter_json_lines",
    "open_binary",
    "parse_date",
    "parse_id",
    "read_json_records",
]

Parse = Callable[[dict[str, Any], str], PaperRecord]
"""``parse(object, source) -> record``; raises `ValueError` (or `FieldError`) with the reason."""

_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
"""19 digits in a row, once every digit reads 0: a number orjson may read as a float where ``json``
gives an int (a translation and a substring test, cheaper per line than a ``\\d{19}`` regex)."""


def _orjson_reads_as_json(line: bytes) -> bool:
    """False when orjson could read ``line`` differently from ``json``: a surrogate escape (orjson
    has its own message for a lone one) or a number of 19 digits or more."""
    return not _ESCAPED_SURROGATE.search(line) and _LONG_NUMBER not in line.translate(_DIGITS_TO_ZERO)


def open_binary(path: Path) -> IO[bytes]:
    """Open a file for reading bytes, transparently gunzipping ``*.gz`` (by magic bytes, not name)."""
    raw = path.open("rb")
    magic = raw.peek(2)[:2] if isinstance(raw, io.BufferedReader) else b""
    if magic == b"\x1f\x8b":
        # not wrapped in a larger io.BufferedReader (0.1 CPU s less on the shared listings): its
        # read-ahead would lose the last whole lines before the break of a truncated file
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    return raw


def _lines(fh: IO[bytes]) -> Iterator[bytes | None]:
    """The lines of ``fh``; ``None`` for a line longer than `MAX_LINE_BYTES` (read past, not kept)."""
    while True:
        line = fh.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = fh.readline(MAX_LINE_BYTES)
            yield None
        else:
            yield line


def _lone_surrogate(value: Any, where: str = "") -> str | None:
    """Where in ``value`` a string holds a lone UTF-16 surrogate (``\\ud800`` escapes), else ``None``."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where or "a value"
        return None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        inner = (f"{where}.{key}" if where else key) if isinstance(key, str) else f"{where}[{key}]"
        found = _lone_surrogate(item, inner)
        if found:
            return found
    return None


def _json_object(line: bytes) -> dict[str, Any]:
    """One line -> object; raises `FieldError` saying what is wrong with it.

    orjson parses the line when it can (half the CPU of ``json.loads`` of the decoded text, and
    parsing was the largest part of reading a listing); any line it refuses, and any line with a
    surrogate escape or a 19-digit number (`_orjson_reads_as_json`), goes through
    `_json_object_slow`, so the objects and the error messages are ``json``'s.
    """
    if _orjson_reads_as_json(line):
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
        else:
            if isinstance(obj, dict):
                return obj
    return _json_object_slow(line)


def _json_object_slow(line: bytes) -> dict[str, Any]:
    """`_json_object` by the standard library: what each message of a bad line comes from."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FieldError(f"invalid UTF-8: byte 0x{line[exc.start]:02x} at column {exc.start + 1}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FieldError(f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise FieldError(f"expected a JSON object, got {type(obj).__name__}")
    if _ESCAPED_SURROGATE.search(line):  # cheap test first: only escapes can make lone surrogates
        where = _lone_surrogate(obj)
        if where:
            raise FieldError(f"{where}: a lone surrogate (\\ud800-\\udfff escape) is not text")
    return obj


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]] | ReadError]:
    """``(line number, object)`` for each non-blank line, or a `ReadError` for the bad ones.

    A file that cannot be opened, stops mid-stream (truncated gzip) or is damaged (corrupt deflate
    data) ends with one `ReadError`; the lines before the break are kept.
    """
    name = path.name
    lineno = 0
    try:
        with open_binary(path) as fh:
            for lineno, line in enumerate(_lines(fh), 1):
                if line is None:
                    yield ReadError(name, f"line {lineno}", f"line longer than {MAX_LINE_BYTES:,} bytes")
                    continue
                if not line.strip():
                    continue
                try:
                    yield lineno, _json_object(line)
                except FieldError as exc:
                    yield ReadError(name, f"line {lineno}", str(exc))
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
        where = "file" if lineno == 0 else f"line {lineno + 1}"
        what = f"corrupt gzip data ({exc})" if isinstance(exc, zlib.error) else str(exc)
        yield ReadError(name, where, f"cannot read file: {what}")


def read_json_records(path: str | Path, fmt: str, parse: Parse) -> Iterator[PaperRecord | ReadError]:
    """Every line of ``path`` through ``parse``; records carry the source ``fmt:file name:line``.

    Type and size problems, and whatever ``parse`` raises as `ValueError`, are per-line `ReadError`s;
    so is a `TypeError`/`AttributeError` from a value shaped in a way the parser never expected.
    """
    path = Path(path)
    prefix = f"{fmt}:{path.name}:"
    for item in iter_json_lines(path):
        if isinstance(item, ReadError):
            yield item
            continue
        lineno, obj = item
        try:
            record = parse(obj, f"{prefix}{lineno}")
            check_limits(record)
        except ValueError as exc:
            yield ReadError(path.name, f"line {lineno}", str(exc))
            continue
        except (TypeError, AttributeError) as exc:  # an unforeseen shape must not end the file
            yield ReadError(path.name, f"line {lineno}", f"unexpected value: {type(exc).__name__}: {exc}")
            continue
        yield record


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
