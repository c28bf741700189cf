"""Readers turn input files into `PaperRecord` items (or `ReadError` for what they must skip).

Every reader streams its input in constant memory and accepts ``.gz`` files. `read_path` takes a
file or a folder (read recursively, in sorted order), detects each file's format unless one is
given, and never raises for bad input: a bad line is one `ReadError` (the rest of the file is read),
a file that cannot be read or recognised is one `ReadError`.

The JSON-lines formats share one line loop (`openxiv.corpus.readers.jsonl.read_json_records`):
UTF-8, JSON, type (`openxiv.corpus.readers.fields`) and size (`openxiv.corpus.readers.limits`)
checks are the same for all of them.

Formats: ``listing`` (arXiv daily listings), ``oai`` (arXiv OAI / Kaggle metadata snapshot),
``plaintext`` (``{id, text}`` full texts), ``unarxive`` (unarXive JSONL) and ``pdf``.
"""

from __future__ import annotations

import importlib
import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from openxiv.corpus.readers.jsonl import Parse, Span, iter_json_lines, read_json_records
from openxiv.corpus.readers.walk import walk_inputs
from openxiv.corpus.records import PaperRecord, ReadError

__all__ = ["DETECT_LINES", "FORMATS", "FormatError", "detect_format", "iter_files", "read_file", "read_path"]

FORMATS = ("listing", "oai", "plaintext", "unarxive", "pdf")

DETECT_LINES = 50
"""JSON objects whose keys vote on a file's format (blank and malformed lines do not vote)."""
_DETECT_MAX_LINES = 1000
"""Lines looked at in all, so that a file of garbage is given up on quickly."""

_PARSERS: dict[str, str] = {
    "listing": "openxiv.corpus.readers.listing:parse_listing",
    "oai": "openxiv.corpus.readers.oai:parse_oai",
    "plaintext": "openxiv.corpus.readers.plaintext:parse_plaintext",
    "unarxive": "openxiv.corpus.readers.unarxive:parse_unarxive",
}


class FormatError(ValueError):
    """The format of a file cannot be recognised (or an unknown format was asked for)."""


def _format_of_keys(keys: set[str]) -> str | None:
    if "body_text" in keys or ("paper_id" in keys and "metadata" in keys):
        return "unarxive"
    if "text" in keys and "id" in keys and "title" not in keys:
        return "plaintext"
    if "versions" in keys or "authors_parsed" in keys or "update_date" in keys or "submitter" in keys:
        return "oai"
    if "id" in keys and "title" in keys:
        return "listing"
    return None


def detect_format(path: str | Path) -> str:
    """``pdf`` for ``*.pdf``; for JSON lines, the format most of the first `DETECT_LINES` objects
    look like (more than half of those that look like any); for a folder, the format all its input
    files share. Raises `FormatError` (unreadable, nothing recognisable, lines that disagree, mixed
    folder), whose message says to give ``--format``.

    One odd line (a first line without ``id``, or with an extra OAI key) therefore does not decide
    for the whole file; it is read with the others and reported on its own if it is bad.
    `read_path` detects each file of a folder on its own, so mixed folders can still be read.
    """
    path = Path(path)
    if path.is_dir():
        found = {detect_format(f) for f in iter_files(path)}
        if len(found) == 1:
            return found.pop()
        if not found:
            raise FormatError(f"{path}: no input files (.jsonl, .json, .ndjson, .pdf, optionally .gz)")
        raise FormatError(f"{path}: files of several formats ({', '.join(sorted(found))}); detected per file")
    if path.suffix.lower() == ".pdf":
        return "pdf"
    votes: Counter[str] = Counter()
    first_unknown: list[str] | None = None
    seen = 0
    for item in itertools.islice(iter_json_lines(path), _DETECT_MAX_LINES):
        if isinstance(item, ReadError):
            if item.location == "file":  # nothing could be read at all
                raise FormatError(f"{path.name}: {item.reason}")
            continue  # a bad line, or a file cut short after some lines: vote with what was read
        seen += 1
        fmt = _format_of_keys(set(item[1]))
        if fmt:
            votes[fmt] += 1
        elif first_unknown is None:
            first_unknown = sorted(item[1])[:8]
        if seen >= DETECT_LINES:
            break
    if not votes:
        if first_unknown is not None:
            raise FormatError(f"{path.name}: unknown JSON keys {first_unknown}; give --format")
        raise FormatError(f"{path.name}: no JSON object in the first lines; give --format")
    (best, n), *_ = votes.most_common()
    if 2 * n <= sum(votes.values()):
        counts = ", ".join(f"{k} {v}" for k, v in sorted(votes.items()))
        raise FormatError(
            f"{path.name}: the first {seen} JSON objects disagree on the format ({counts}); give --format"
        )
    return best


def _reader(fmt: str) -> Callable[[Path, Span | None], Iterator[PaperRecord | ReadError]]:
    if fmt == "pdf":

        def read_pdf_file(path: Path, span: Span | None) -> Iterator[PaperRecord | ReadError]:
            # Lazy import: PyMuPDF loads only when PDFs are read.
            from openxiv.corpus.readers.pdf import read_pdf

            yield read_pdf(path)

        return read_pdf_file
    if fmt not in _PARSERS:
        raise FormatError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    module, attr = _PARSERS[fmt].split(":")
    parse: Parse = getattr(importlib.import_module(module), attr)

    def read_jsonl(path: Path, span: Span | None) -> Iterator[PaperRecord | ReadError]:
        return read_json_records(path, fmt, parse, span)

    return read_jsonl


def iter_files(path: Path) -> Iterator[Path]:
    """The input files under ``path`` (itself if a file), recursively, in sorted order (`walk_inputs`
    without the parts that cannot be read, which `read_path` reports)."""
    return (p for p in walk_inputs(path) if isinstance(p, Path))


def read_path(path: str | Path, format: str | None = None) -> Iterator[PaperRecord | ReadError]:
    """Records from a file or a folder; problems become `ReadError` items, never exceptions.

    In a folder, ``*.json`` files that are not JSON lines of a known format (``MANIFEST.json``)
    are passed over silently; every other unreadable file, and every sub-folder or symbolic link
    that cannot be read (`walk_inputs`), is reported.
    """
    path = Path(path)
    if format is not None and format not in FORMATS:
        raise FormatError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    if not path.exists():
        yield ReadError(path.name or str(path), "file", f"no such file or folder: {path}")
        return
    for file in walk_inputs(path):
        if isinstance(file, ReadError):
            yield file
        else:
            yield from read_file(file, format, in_folder=file != path)


def read_file(
    file: Path, format: str | None = None, in_folder: bool = False, span: Span | None = None
) -> Iterator[PaperRecord | ReadError]:
    """Records of one input file (`read_path` reads a folder file by file with this; so do the worker
    processes of a parallel ingest). ``in_folder``: met in a folder rather than named by the user.
    ``span``: only the lines of that byte range of a JSON-lines file (`openxiv.corpus.readers.split`;
    give ``format`` with it, a range is not a file whose format can be detected)."""
    try:
        fmt = format or detect_format(file)
        reader = _reader(fmt)
    except FormatError as exc:
        if in_folder and file.name.lower().endswith(".json"):
            # A plain .json document met in a folder (MANIFEST.json, a config file) is not
            # input; a .json file named on the command line is, and its problem is reported.
            return
        yield ReadError(file.name, "file", str(exc))
        return
    try:
        yield from reader(file, span)
    except Exception as exc:  # a reader bug must not lose the rest of the batch
        yield ReadError(file.name, "file", f"{fmt} reader failed: {type(exc).__name__}: {exc}")
