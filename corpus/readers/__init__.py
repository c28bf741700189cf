"""Readers turn input files into `PaperRecord` items (or `ReadError` for what they must skip).

Every reader streams its input in constant memory and accepts ``.gz`` files. `read_path` takes a
file or a folder (read recursively, in sorted order), detects each file's format unless one is
given, and never raises for bad input: a file that cannot be read is one `ReadError`.

Formats: ``listing`` (arXiv daily listings), ``oai`` (arXiv OAI / Kaggle metadata snapshot),
``plaintext`` (``{id, text}`` full texts), ``unarxive`` (unarXive JSONL) and ``pdf``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from openxiv.corpus.readers._jsonl import open_text
from openxiv.corpus.records import PaperRecord, ReadError

__all__ = ["FORMATS", "FormatError", "detect_format", "read_path"]

FORMATS = ("listing", "oai", "plaintext", "unarxive", "pdf")

_READERS: dict[str, str] = {
    "listing": "openxiv.corpus.readers.listing:read_listing",
    "oai": "openxiv.corpus.readers.oai:read_oai",
    "plaintext": "openxiv.corpus.readers.plaintext:read_plaintext",
    "unarxive": "openxiv.corpus.readers.unarxive:read_unarxive",
}

_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson", ".ndjson.gz", ".pdf", ".txt.gz")


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
    """``pdf`` for ``*.pdf``; for JSON lines, decided by the keys of the first object; for a folder,
    the format all its input files share. Raises `FormatError` (unknown, unreadable, mixed folder).

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
    try:
        with open_text(path) as fh:
            for i, line in enumerate(fh):
                if i >= 50:
                    break
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(obj, dict):
                    fmt = _format_of_keys(set(obj))
                    if fmt:
                        return fmt
                    raise FormatError(f"{path.name}: unknown JSON keys {sorted(obj)[:8]}")
    except (OSError, EOFError, UnicodeError) as exc:
        raise FormatError(f"{path.name}: cannot read file: {exc}") from exc
    raise FormatError(f"{path.name}: no JSON object in the first lines; give --format")


def _reader(fmt: str) -> Callable[[Path], Iterator[PaperRecord | ReadError]]:
    if fmt == "pdf":

        def read_pdf_file(path: Path) -> Iterator[PaperRecord | ReadError]:
            # Lazy import: PyMuPDF loads only when PDFs are read.
            from openxiv.corpus.readers.pdf import read_pdf

            yield read_pdf(path)

        return read_pdf_file
    if fmt not in _READERS:
        raise FormatError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    module, attr = _READERS[fmt].split(":")
    func: Callable[[Path], Iterator[PaperRecord | ReadError]] = getattr(importlib.import_module(module), attr)
    return func


def _is_input_file(path: Path) -> bool:
    name = path.name.lower()
    return not name.startswith(".") and name.endswith(_SUFFIXES)


def iter_files(path: Path) -> Iterator[Path]:
    """The input files under ``path`` (itself if a file), recursively, in sorted order."""
    if path.is_dir():
        for child in sorted(path.rglob("*")):
            if child.is_file() and _is_input_file(child):
                yield child
    else:
        yield path


def read_path(path: str | Path, format: str | None = None) -> Iterator[PaperRecord | ReadError]:
    """Records from a file or a folder; problems become `ReadError` items, never exceptions.

    In a folder, ``*.json`` files that are not JSON lines of a known format (``MANIFEST.json``)
    are passed over silently; every other unreadable file is reported.
    """
    path = Path(path)
    if format is not None and format not in FORMATS:
        raise FormatError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    if not path.exists():
        yield ReadError(path.name or str(path), "file", f"no such file or folder: {path}")
        return
    for file in iter_files(path):
        try:
            fmt = format or detect_format(file)
            reader = _reader(fmt)
        except FormatError as exc:
            if file != path and file.name.lower().endswith(".json"):
                # A plain .json document met in a folder (MANIFEST.json, a config file) is not
                # input; a .json file named on the command line is, and its problem is reported.
                continue
            yield ReadError(file.name, "file", str(exc))
            continue
        try:
            yield from reader(file)
        except Exception as exc:  # a reader bug must not lose the rest of the batch
            yield ReadError(file.name, "file", f"{fmt} reader failed: {type(exc).__name__}: {exc}")
