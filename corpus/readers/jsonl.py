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
from typing import IO, Any, TypeAlias

import orjson

from openxiv.corpus.ids import InvalidArxivId, parse_arxiv_id
from openxiv.corpus.readers.fields import FieldError, check_limits
from openxiv.corpus.readers.limits import MAX_LINE_BYTES
from openxiv.corpus.records import PaperRecord, ReadError

__all__ = [
    "Parse",
    "Span",
    "iter_json_lines",
    "parse_date",
    "parse_id",
    "read_json_records",
]

Parse = Callable[[dict[str, Any], str], PaperRecord]
"""``parse(object, source) -> record``; raises `ValueError` (or `FieldError`) with the reason."""
Span: TypeAlias = tuple[int, int, int]
"""``(start, end, first line)``: the lines of a file from byte ``start`` (a line's start) to byte
``end`` (just after a newline, or the end of the file), the first of them numbered ``first line``
(`openxiv.corpus.readers.split` cuts a big file into such ranges for a parallel ingest)."""

_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
"""19 digits in a row, once every digit reads 0: a number orjson may read as a float where ``json``
gives an int (a translation and a substring test, cheaper per line than a ``\\d{19}`` regex)."""


def _orjson_reads_as_json(line: bytes) -> bool:
    """False when orjson could read ``line`` differently from ``json``: a surrogate escape (orjson
    has its own message for a lone one) or a number of 19 digits or more."""
    return not _ESCAPED_SURROGATE.search(line) and _LONG_NUMBER not in line.translate(_DIGITS_TO_ZERO)


_BLOCK = 1 << 18
"""Bytes read (and, for gzip, decompressed) at a time."""
_OUT_BLOCK = 1 << 20
"""Most decompressed bytes one step of `_inflate` gives (a listing file packs ~6 to 1)."""
_GZIP_MAGIC = b"\x1f\x8b"
_TRUNCATED = "Compressed file ended before the end-of-stream marker was reached"
"""`gzip.GzipFile`'s message for a truncated file, kept so reports read as they did."""


def _blocks(raw: IO[bytes]) -> Iterator[bytes]:
    """The bytes of ``raw`` block by block, gunzipped when it starts with the gzip magic bytes."""
    if isinstance(raw, io.BufferedReader) and raw.peek(2)[:2] == _GZIP_MAGIC:
        yield from _gunzip(raw)
        return
    while block := raw.read(_BLOCK):
        yield block


def _span_blocks(raw: IO[bytes], span: Span) -> Iterator[bytes]:
    """The bytes of ``raw`` from ``span``'s start to its end, block by block (never gunzipped: a gzip
    file is not cut into spans)."""
    start, end, _ = span
    raw.seek(start)
    left = end - start
    while left > 0 and (block := raw.read(min(_BLOCK, left))):
        left -= len(block)
        yield block


def _gunzip(raw: IO[bytes]) -> Iterator[bytes]:
    """The decompressed data of a gzip file (every member), block by block.

    What `gzip.GzipFile` does, by ``zlib`` in blocks of `_BLOCK` (``GzipFile`` reads its output 8 KiB
    at a time through Python code and checksums it a second time: a third of a listing file's
    decompression): zero padding between members is skipped, anything else there is "not a
    gzipped file", and a file that stops inside a member ends with ``EOFError`` once every byte
    before the break is out. Damaged data (``zlib.error``) ends it too, after the output before
    the damage (the block is decompressed again in small steps from a copy of the decoder taken
    before it), so every whole line before the damage is read.
    """
    decoder: Any = zlib.decompressobj(wbits=31)
    pending = b""
    while True:
        data = pending or raw.read(_BLOCK)
        pending = b""
        if not data:
            if decoder is not None:
                raise EOFError(_TRUNCATED)
            return
        if decoder is None:  # between members: zero padding, then the next member or the end
            data = data.lstrip(b"\x00")
            if not data:
                continue
            if len(data) < 2:
                data += raw.read(1)
            if data[:2] != _GZIP_MAGIC:
                raise gzip.BadGzipFile(f"Not a gzipped file ({data[:2]!r})")
            decoder = zlib.decompressobj(wbits=31)
        yield from _inflate(decoder, data)
        if decoder.eof:
            pending, decoder = decoder.unused_data, None


def _inflate(decoder: Any, data: bytes) -> Iterator[bytes]:
    """The output of ``decoder`` for the input ``data``, at most `_OUT_BLOCK` bytes at a time: a
    gzip file packs a gigabyte of one repeated byte into a megabyte, and decompressing a block of
    input in one call would hold all of it (issue 21; BENCHMARKS.md, «Ingest memory»);
    in pieces, `_lines` reads past a line over `MAX_LINE_BYTES` without ever holding it."""
    while True:
        before = decoder.copy()
        try:
            out = decoder.decompress(data, _OUT_BLOCK)
        except zlib.error:
            yield from _before_damage(before, data)
            raise
        if out:
            yield out
        data = decoder.unconsumed_tail
        # a full piece may leave output inside the decoder with no input left: ask again
        if decoder.eof or (not data and len(out) < _OUT_BLOCK):
            return


def _before_damage(decoder: Any, data: bytes, step: int = 1024) -> Iterator[bytes]:
    """What ``decoder`` makes of ``data`` up to the point where it fails: ``step`` bytes of input
    at a time, and the step that fails once more byte by byte (a wrong checksum in a member's
    trailer comes after all of its data)."""
    for start in range(0, len(data), step):
        piece = data[start : start + step]
        before = decoder.copy()
        try:
            out = decoder.decompress(piece)
        except zlib.error:
            if step > 1:
                yield from _before_damage(before, piece, 1)
            return
        if out:
            yield out


def _lines(blocks: Iterator[bytes]) -> Iterator[bytes | None]:
    """The lines of the bytes ``blocks`` hold; ``None`` for a line longer than `MAX_LINE_BYTES`
    (read past, never held whole in memory)."""
    parts: list[bytes] = []  # the start of the line that continues into the next block
    size = 0
    skipping = False  # inside a line already over the limit
    for block in blocks:
        start = 0
        while (end := block.find(b"\n", start)) >= 0:
            piece = block[start : end + 1]
            start = end + 1
            if skipping:
                skipping = False
            elif size + len(piece) - 1 > MAX_LINE_BYTES:
                parts.clear()
            elif parts:
                parts.append(piece)
                line = b"".join(parts)
                parts.clear()
                size = 0
                yield line
                continue
            else:
                yield piece
                continue
            size = 0
            yield None
        if start < len(block) and not skipping:
            tail = block[start:]
            size += len(tail)
            if size > MAX_LINE_BYTES:
                parts.clear()
                skipping = True
            else:
                parts.append(tail)
    if skipping:
        yield None
    elif parts:
        yield b"".join(parts)


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


def iter_json_lines(path: Path, span: Span | None = None) -> Iterator[tuple[int, dict[str, Any]] | ReadError]:
    """``(line number, object)`` for each non-blank line, or a `ReadError` for the bad ones; only
    the lines of ``span`` when one is given (numbered as in the whole file).

    A file that cannot be opened, stops mid-stream (truncated gzip) or is damaged (corrupt deflate
    data) ends with one `ReadError`; the lines before the break are kept.
    """
    name = path.name
    first = 1 if span is None else span[2]
    lineno = first - 1
    try:
        with path.open("rb") as raw:
            blocks = _blocks(raw) if span is None else _span_blocks(raw, span)
            for lineno, line in enumerate(_lines(blocks), first):
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


def read_json_records(
    path: str | Path, fmt: str, parse: Parse, span: Span | None = None
) -> Iterator[PaperRecord | ReadError]:
    """Every line of ``path`` (of ``span`` if given) through ``parse``; records carry the source
    ``fmt:file name:line``.

    Type and size problems, and whatever ``parse`` raises as `ValueError`, are per-line `ReadError`s;
    so is a `TypeError`/`AttributeError` from a value shaped in a way the parser never expected.
    """
    path = Path(path)
    prefix = f"{fmt}:{path.name}:"
    for item in iter_json_lines(path, span):
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
