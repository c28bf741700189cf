"""Input files already ingested, so ``openxiv ingest --skip-unchanged`` can pass them over cheaply.

After a finished run, every input file it read without a single `ReadError` is recorded in
``ingest_inputs`` with its size, mtime and SHA-256, and the `read_key` of the run. A later run with
``--skip-unchanged`` does not read a file again when its recorded key equals the run's and either its
size and mtime are the recorded ones, or its size is and its content hash too (a copy or a ``touch``
changes the mtime, not the papers). A file that changed in any way, that had errors (the broken PDFs
of ../shared are tried on every run, so the run still ends with exit 3), or that a run read while it
was being changed, is read again. Re-reading an unchanged file would change nothing (ingest is
idempotent), so skipping it leaves the database as a full run would; the saving is the parsing of
every record (docs/service.md, «Docker», has the times of both on ../shared).

The records live in the corpus database itself, so a new or replaced database starts with none.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from sqlalchemy import Engine, Table, delete, insert, select, update

from openxiv.corpus.schema import IngestInput
from openxiv.corpus.settings.model import Settings

__all__ = ["InputLedger", "file_keys", "read_key"]

INPUTS = cast(Table, IngestInput.__table__)


def read_key(
    fmt: str | None, settings: Settings, references: bool = False, bibliography: bool = False
) -> str:
    """What a file's records depend on besides its bytes: the format option, how passages are cut,
    the openxiv version (readers change with it) and the data version of the stored values; for an
    unArXive file (``references``) also the version of what its bibliographies become
    (`openxiv.corpus.references.REFERENCE_RULES`), and for a plain-text or PDF file
    (``bibliography``) the version of the bibliography parser
    (`openxiv.corpus.bibliography.BIBLIOGRAPHY_RULES`), so the key of listing and OAI files is the one
    they had before references were stored, and the full texts are read again once for theirs."""
    from importlib import metadata

    from openxiv.corpus.migrations import DATA_VERSION

    try:
        version = metadata.version("openxiv")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        version = "unknown"
    key: dict[str, object] = {
        "format": fmt,
        "passage_words": settings.passage_words,
        "passage_overlap": settings.passage_overlap,
        "openxiv": version,
        "data_version": DATA_VERSION,
    }
    if references:
        from openxiv.corpus.references import REFERENCE_RULES

        key["references"] = REFERENCE_RULES
    if bibliography:
        from openxiv.corpus.bibliography import BIBLIOGRAPHY_RULES

        key["bibliography"] = BIBLIOGRAPHY_RULES
    return json.dumps(key, sort_keys=True)


def file_keys(fmt: str | None, settings: Settings) -> Callable[[Path], str]:
    """The `read_key` of each input file: with ``references`` for the files read as unArXive, with
    ``bibliography`` for plain-text and PDF files (the ``--format`` given, else the detected one; a
    file whose format cannot be told has the plain key)."""
    from openxiv.corpus.readers import FormatError, detect_format

    keys = {
        "unarxive": read_key(fmt, settings, references=True),
        "plaintext": read_key(fmt, settings, bibliography=True),
        "pdf": read_key(fmt, settings, bibliography=True),
    }
    plain = read_key(fmt, settings)

    def key(file: Path) -> str:
        if fmt is not None:
            return keys.get(fmt, plain)
        try:
            return keys.get(detect_format(file), plain)
        except FormatError:
            return plain

    return key


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class _Seen:
    size: int
    mtime_ns: int


class InputLedger:
    """The ``ingest_inputs`` table of one (writable) corpus database."""

    def __init__(self, engine: Engine, key: str | Callable[[Path], str]) -> None:
        self.engine = engine
        self.key_of: Callable[[Path], str] = (lambda _file: key) if isinstance(key, str) else key
        """The read key of a file (`file_keys`), or one key for every file."""
        self._before: dict[str, _Seen] = {}
        """The stat of each file `split` let through, taken before it was read."""

    def split(self, files: Sequence[Path]) -> tuple[list[Path], list[Path]]:
        """``(to_read, unchanged)``: ``files`` that must be read, and those recorded as they are now."""
        with self.engine.connect() as conn:
            rows = {r.path: r for r in conn.execute(select(INPUTS))}
        to_read: list[Path] = []
        unchanged: list[Path] = []
        touched: list[tuple[str, int]] = []
        for file in files:
            name = str(file.resolve())
            st = file.stat()
            row = rows.get(name)
            same = row is not None and row.read_key == self.key_of(file) and row.size == st.st_size
            if row is not None and same and row.mtime_ns != st.st_mtime_ns:
                same = _sha256(file) == row.sha256
                if same:
                    touched.append((name, st.st_mtime_ns))
            if same:
                unchanged.append(file)
            else:
                to_read.append(file)
                self._before[name] = _Seen(st.st_size, st.st_mtime_ns)
        if touched:
            with self.engine.begin() as conn:
                for name, mtime_ns in touched:
                    conn.execute(update(INPUTS).where(INPUTS.c.path == name).values(mtime_ns=mtime_ns))
        return to_read, unchanged

    def record(self, files: Iterable[Path], failed_names: set[str], run_id: int | None) -> int:
        """Record ``files`` (read by a finished run) except those named in a `ReadError`
        (``failed_names``: file names) and those that changed since `split` saw them; returns how
        many were recorded."""
        rows = []
        for file in files:
            name = str(file.resolve())
            seen = self._before.get(name)
            if file.name in failed_names or not file.is_file():
                continue
            st = file.stat()
            if seen is not None and seen != _Seen(st.st_size, st.st_mtime_ns):
                continue  # changed while it was read: what was read is not what is there now
            digest = _sha256(file)
            rows.append(
                {
                    "path": name,
                    "size": st.st_size,
                    "mtime_ns": st.st_mtime_ns,
                    "sha256": digest,
                    "read_key": self.key_of(file),
                    "run_id": run_id,
                }
            )
        with self.engine.begin() as conn:
            if rows:
                conn.execute(delete(INPUTS).where(INPUTS.c.path.in_([r["path"] for r in rows])))
                conn.execute(insert(INPUTS), rows)
        return len(rows)
