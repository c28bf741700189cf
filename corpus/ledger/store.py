"""The ledger on disk: a folder of SQLite segments in WAL mode, appended by the server, read by anyone.

Layout: ``LEDGER/ledger-000001.sqlite``, ``ledger-000002.sqlite``, ...; each segment is
self-contained (its calls and the response bodies they name). Per segment:

- ``meta(key, value)``: ``ledger_version``;
- ``calls(seq, time, run, question, kind, status, request_key, body_sha256, record)``: one row per
  call, ``record`` the whole `LedgerRecord` as JSON (the other columns are copies for indexes);
- ``bodies(sha256, encoding, body)``: each distinct response body once, ``zlib`` or ``raw``.

Why SQLite in WAL mode rather than JSONL: a call and its body land in one transaction (a crash
leaves both or neither, never a torn line to repair), several server processes (``--workers``)
append to one file under SQLite's own locking, bodies are stored once however often they are
returned, and readers (``openxiv eval``, ``openxiv runs``, ``--replay``) read a live ledger without
stopping the writer. A transaction commits before the client gets its answer, so a server killed
with -9 loses no call whose answer was sent (the WAL is in the operating system's page cache);
``sync=True`` (the default) also fsyncs each commit, so a power cut loses none either.

Bounded: a segment is closed once it passes ``segment_bytes`` and the next one is started; with
``keep`` > 0 only the newest ``keep`` segments stay (older ones are deleted, and said in the log).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from openxiv.corpus.ledger.records import LEDGER_VERSION, LedgerRecord

__all__ = ["LedgerError", "LedgerReader", "LedgerWriter", "RunSummary", "body_sha256", "segments"]

log = logging.getLogger("openxiv.ledger")

SEGMENT = re.compile(r"^ledger-(\d{6})\.sqlite$")
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY,
    time TEXT NOT NULL,
    run TEXT,
    question TEXT,
    kind TEXT NOT NULL,
    status INTEGER NOT NULL,
    request_key TEXT NOT NULL,
    body_sha256 TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_run_question ON calls (run, question);
CREATE INDEX IF NOT EXISTS calls_request ON calls (request_key);
CREATE TABLE IF NOT EXISTS bodies (sha256 TEXT PRIMARY KEY, encoding TEXT NOT NULL, body BLOB NOT NULL);
"""
COMPRESS_FROM = 512
"""Bodies of at least this many bytes are stored zlib-compressed (level 1: cheap, about 4x on JSON)."""


class LedgerError(Exception):
    """A ledger that cannot be opened: missing, not a ledger, or written by a later version."""


def body_sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def segment_name(number: int) -> str:
    return f"ledger-{number:06d}.sqlite"


def segments(path: Path) -> list[Path]:
    """The segments of a ledger folder, oldest first; a single segment file is its own list."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise LedgerError(f"ledger {path}: no such folder or file")
    return sorted(p for p in path.iterdir() if SEGMENT.match(p.name))


def _number(path: Path) -> int:
    match = SEGMENT.match(path.name)
    return int(match.group(1)) if match else 0


class LedgerWriter:
    """Appends records to the ledger folder ``root`` (created when missing). Thread-safe; each
    `append` is one committed transaction. Several processes may write one folder."""

    def __init__(self, root: Path, *, segment_bytes: int = 256 << 20, keep: int = 0, sync: bool = False):
        self.root = root
        self.segment_bytes = segment_bytes
        self.keep = keep
        self.sync = sync
        self._lock = threading.Lock()
        root.mkdir(parents=True, exist_ok=True)
        existing = segments(root)
        self._path = existing[-1] if existing else root / segment_name(1)
        self._conn = self._open(self._path)
        self._rotate_if_full()

    def _open(self, path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={'FULL' if self.sync else 'NORMAL'}")
        conn.executescript(SCHEMA)
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('ledger_version', ?)", (str(LEDGER_VERSION),)
        )
        return conn

    @property
    def path(self) -> Path:
        """The segment written now."""
        return self._path

    def append(self, record: LedgerRecord, body: bytes) -> None:
        """Write one call and its response body (``record.body_sha256`` must name ``body``)."""
        row = (
            record.time,
            record.run,
            record.question,
            record.kind,
            record.status,
            record.request_key,
            record.body_sha256,
            json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":")),
        )
        stored = zlib.compress(body, 1) if len(body) >= COMPRESS_FROM else body
        encoding = "zlib" if stored is not body else "raw"
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    "INSERT OR IGNORE INTO bodies (sha256, encoding, body) VALUES (?, ?, ?)",
                    (record.body_sha256, encoding, stored),
                )
                conn.execute(
                    "INSERT INTO calls (time, run, question, kind, status, request_key, body_sha256, record)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            self._rotate_if_full()

    def _rotate_if_full(self) -> None:
        if _size(self._conn) < self.segment_bytes:
            return
        newest = segments(self.root)[-1]
        target = None
        if newest != self._path:
            with sqlite3.connect(newest, timeout=30) as probe:
                target = newest if _size(probe) < self.segment_bytes else None
        if target is None:
            target = self.root / segment_name(_number(newest) + 1)
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._conn.close()
        self._path = target
        self._conn = self._open(target)
        log.info("ledger: segment %s started", target.name)
        self._prune()

    def _prune(self) -> None:
        if self.keep <= 0:
            return
        for old in segments(self.root)[: -self.keep]:
            for part in (old, old.with_name(old.name + "-wal"), old.with_name(old.name + "-shm")):
                part.unlink(missing_ok=True)
            log.warning("ledger: segment %s deleted (OPENXIV_LEDGER_KEEP=%d)", old.name, self.keep)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _size(conn: sqlite3.Connection) -> int:
    """The segment's size in bytes as its committed pages (those still in the WAL included)."""
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    return int(pages) * int(page_size)


@dataclass(frozen=True)
class RunSummary:
    """One run of a ledger: its questions, calls, and first and last call times."""

    run: str | None
    questions: tuple[str, ...]
    calls: int
    first: str
    last: str


class LedgerReader:
    """Reads a ledger folder (or one segment file), possibly while a server appends to it.

    ``errors`` collects the rows that could not be read (reported and skipped, the rest is read)."""

    def __init__(self, path: Path):
        self.path = path
        self.errors: list[str] = []
        self._segments = segments(path)
        for seg in self._segments:
            with self._connect(seg) as conn:
                version = _version(conn, seg)
                if version > LEDGER_VERSION:
                    raise LedgerError(
                        f"ledger segment {seg}: version {version}, this openxiv reads up to {LEDGER_VERSION}"
                    )

    @staticmethod
    def _connect(seg: Path) -> sqlite3.Connection:
        try:
            return sqlite3.connect(f"file:{seg}?mode=ro", uri=True, timeout=30)
        except sqlite3.Error as exc:
            raise LedgerError(f"ledger segment {seg}: {exc}") from exc

    def records(self, run: str | None = None, question: str | None = None) -> Iterator[LedgerRecord]:
        """Every call, oldest first; ``run`` / ``question`` keep only that tag's calls."""
        where, args = [], []
        for column, value in (("run", run), ("question", question)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = "SELECT seq, record FROM calls" + (" WHERE " + " AND ".join(where) if where else "")
        for seg in self._segments:
            with self._connect(seg) as conn:
                for seq, text in conn.execute(sql + " ORDER BY seq", args):
                    try:
                        value = json.loads(text)
                        value.update(seq=seq, segment=seg.name)
                        yield LedgerRecord.from_json(value)
                    except (ValueError, KeyError, TypeError) as exc:
                        self.errors.append(f"{seg.name} row {seq}: {type(exc).__name__}: {exc}")

    def body(self, sha256: str) -> bytes:
        """The response body named ``sha256``, exactly as it was sent."""
        for seg in reversed(self._segments):
            with self._connect(seg) as conn:
                row = conn.execute("SELECT encoding, body FROM bodies WHERE sha256 = ?", (sha256,)).fetchone()
            if row is not None:
                encoding, stored = row
                return zlib.decompress(stored) if encoding == "zlib" else bytes(stored)
        raise KeyError(f"no body {sha256} in ledger {self.path}")

    def runs(self) -> list[RunSummary]:
        """Each run tag (``None``: untagged calls) with its questions and call count."""
        calls: dict[str | None, list[str]] = {}
        questions: dict[str | None, set[str]] = {}
        counts: dict[str | None, int] = {}
        for seg in self._segments:
            with self._connect(seg) as conn:
                sql = "SELECT run, question, count(*), min(time), max(time) FROM calls GROUP BY run, question"
                for run, q, n, first, last in conn.execute(sql):
                    counts[run] = counts.get(run, 0) + n
                    calls.setdefault(run, []).extend([first, last])
                    if q is not None:
                        questions.setdefault(run, set()).add(q)
        return [
            RunSummary(
                run, tuple(sorted(questions.get(run, ()))), counts[run], min(calls[run]), max(calls[run])
            )
            for run in sorted(counts, key=lambda r: (r is None, r or ""))
        ]


def _version(conn: sqlite3.Connection, seg: Path) -> int:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'ledger_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"{seg}: not an openxiv ledger ({exc})") from exc
    if row is None:
        raise LedgerError(f"{seg}: not an openxiv ledger (no ledger_version)")
    return int(row[0])
