"""One big JSON-lines file cut into line-aligned byte ranges, so that several processes parse it.

A parallel ingest (`openxiv.corpus.parallel`) hands each worker one input at a time. The arXiv
OAI/Kaggle metadata snapshot is one file of millions of lines: as one input it would be parsed by
one worker. A JSON-lines file larger than ``split_bytes`` (`Settings.ingest_split_bytes`) is handed
out as `spans` instead: ranges of about ``split_bytes`` that start at a line's start and end just
after a newline (the last one at the end of the file), each with the number of its first line. A
worker reads a span with ``read_file(path, format, span=span)``: exactly the lines, line numbers,
record sources and error locations the serial read of the whole file gives for them, so the spans'
items, in order, are the file's items.

The spans are cut lazily, while the workers parse the ones before: to number a span's first line,
the process that cuts them reads every byte before it once and counts the newlines (`bytes.count`:
a small fraction of what parsing the same bytes costs; docs/scale.md, «Ingest»).

Not cut, read whole as before: a gzip file (a deflate stream decodes only from its start, so a byte
offset into it is no place to begin; a ``.jsonl.gz`` snapshot is parsed by one worker: decompress
it first to spread it), a PDF, a file whose format cannot be detected (its error is the whole
file's, as in a serial read), and a file of at most ``split_bytes``. One difference remains: a
read error in the middle of a file (a disk fault) ends only the range it hits, where the serial read
ends the file there; the error is reported either way.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from openxiv.corpus.readers import FormatError, detect_format
from openxiv.corpus.readers.jsonl import Span

__all__ = ["spans", "split_format"]

_GZIP_MAGIC = b"\x1f\x8b"
_SCAN = 1 << 20
"""Bytes read at a time while counting newlines."""


def split_format(path: Path, fmt: str | None, split_bytes: int) -> str | None:
    """The format to read ``path``'s spans as (``fmt``, else the detected one), or ``None`` when the
    file is read whole: at most ``split_bytes``, gzip data (whatever its name: the readers go by the
    magic bytes), a PDF, no detectable format, or not readable now."""
    if path.suffix.lower() == ".pdf":  # before opening it: a folder of PDFs has millions of them
        return None
    try:
        with path.open("rb") as fh:
            if os.fstat(fh.fileno()).st_size <= split_bytes or fh.read(2) == _GZIP_MAGIC:
                return None
        found = fmt or detect_format(path)
    except (OSError, FormatError):
        return None
    return None if found == "pdf" else found


def spans(path: Path, split_bytes: int) -> Iterator[Span]:
    """``(start, end, first line)`` of each span of about ``split_bytes`` of ``path``, in order;
    together they cover the file. Read lazily: a span is cut when it is asked for."""
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        start, line = 0, 1
        while start < size:
            end, newlines = _span_end(fh, start, start + split_bytes)
            yield start, end, line
            start, line = end, line + newlines


def _span_end(fh: IO[bytes], start: int, target: int) -> tuple[int, int]:
    """Where the span starting at ``start`` ends: just after the first newline at or after byte
    ``target - 1``, or at the end of the file; and the newlines in it."""
    fh.seek(start)
    pos, newlines, block = start, 0, b""
    while pos < target:
        block = fh.read(min(_SCAN, target - pos))
        if not block:
            return pos, newlines  # the file ends before the target
        newlines += block.count(b"\n")
        pos += len(block)
    if block.endswith(b"\n"):
        return pos, newlines  # the target is already a line's start
    while block := fh.read(_SCAN):
        at = block.find(b"\n")
        if at >= 0:
            return pos + at + 1, newlines + 1
        pos += len(block)
    return pos, newlines
