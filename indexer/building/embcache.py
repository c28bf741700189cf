"""A content-addressed store of embeddings, shared by every index build.

A vector is keyed by ``(model fingerprint, max_tokens, sha256(text))``: the same text embedded by the
same weights at the same truncation is never encoded twice, whichever snapshot asked for it. The
store is one SQLite file (default ``<data_dir>/embcache.sqlite``) in WAL mode; it lives outside the
snapshots, and copying the file to another machine carries the work with it (e.g. vectors computed
on a GPU box). Vectors are stored as raw little-endian float32 bytes.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from openxiv.indexer.encoders.embed import Encoder

__all__ = ["CacheKey", "EmbeddingCache", "cache_keys", "encode_cached", "text_sha256"]

log = logging.getLogger("openxiv.indexer")
LOG_EVERY_S = 30.0
"""Seconds between the INFO lines of a long encoding (`openxiv index build` in a container's log)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    max_tokens INTEGER NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY (model, max_tokens, text_sha256)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS probes (
    family TEXT NOT NULL,
    n INTEGER NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY (family, n)
) WITHOUT ROWID;
"""


class CacheKey(NamedTuple):
    model: str
    """`Encoder.fingerprint`."""
    max_tokens: int
    text_sha256: str
    """Hex sha256 of the UTF-8 text."""


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_keys(encoder: Encoder, texts: Iterable[str]) -> list[CacheKey]:
    fp, mt = encoder.fingerprint, int(encoder.max_tokens)
    return [CacheKey(fp, mt, text_sha256(t)) for t in texts]


class EmbeddingCache:
    """``get_many`` / ``put_many`` over a SQLite file. Safe to share between processes (WAL)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self.written = 0
        """Vectors `put_many` stored through this connection: a build's count of what it encoded,
        where ``count`` before and after scanned every vector of the file twice."""

    def _rows(self, model: str, max_tokens: int, shas: Sequence[str]) -> Iterator[tuple[str, np.ndarray]]:
        """``(sha, vector view)`` of the cached ones among the distinct ``shas``, 900 per query (SQLite's
        host-parameter limit); a stored vector whose length disagrees with its ``dim`` is skipped."""
        for start in range(0, len(shas), 900):
            part = shas[start : start + 900]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                f"SELECT text_sha256, dim, vec FROM vectors WHERE model=? AND max_tokens=? "
                f"AND text_sha256 IN ({marks})",
                (model, max_tokens, *part),
            )
            for sha, dim, blob in rows:
                vec = np.frombuffer(blob, dtype="<f4")
                if vec.shape[0] == dim:
                    yield sha, vec

    def get_many(self, keys: Sequence[CacheKey]) -> dict[CacheKey, np.ndarray]:
        """The cached vectors among ``keys`` (missing keys are simply absent)."""
        out: dict[CacheKey, np.ndarray] = {}
        groups: dict[tuple[str, int], list[str]] = {}
        for k in keys:
            groups.setdefault((k.model, int(k.max_tokens)), []).append(k.text_sha256)
        for (model, mt), shas in groups.items():
            for sha, vec in self._rows(model, mt, list(dict.fromkeys(shas))):
                out[CacheKey(model, mt, sha)] = vec.astype(np.float32)
        return out

    def fill(self, keys: Sequence[CacheKey], out: np.ndarray) -> np.ndarray:
        """Write the cached vector of ``keys[i]`` into ``out[i]`` (in place, no per-vector copy);
        returns a boolean mask of the rows found. ``out`` must have one row per key and the vectors'
        width; rows of missing keys are left as they were."""
        found = np.zeros(len(keys), dtype=bool)
        groups: dict[tuple[str, int], dict[str, list[int]]] = {}
        for i, k in enumerate(keys):
            groups.setdefault((k.model, int(k.max_tokens)), {}).setdefault(k.text_sha256, []).append(i)
        for (model, mt), rows_of in groups.items():
            # in key order: each probe of the primary key lands beside the last one's pages
            for sha, vec in self._rows(model, mt, sorted(rows_of)):
                if vec.shape[0] != out.shape[1]:
                    continue
                for i in rows_of[sha]:
                    out[i] = vec
                    found[i] = True
        return found

    def put_many(self, keys: Sequence[CacheKey], vectors: np.ndarray) -> None:
        """Store ``vectors[i]`` under ``keys[i]`` (one transaction; existing keys are overwritten)."""
        vecs = np.ascontiguousarray(vectors, dtype="<f4")
        if vecs.ndim != 2 or vecs.shape[0] != len(keys):
            raise ValueError(f"put_many: {len(keys)} keys but vectors of shape {vecs.shape}")
        dim = int(vecs.shape[1])
        rows = [
            (k.model, int(k.max_tokens), k.text_sha256, dim, vecs[i].tobytes()) for i, k in enumerate(keys)
        ]
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)", rows)
        self.written += len(rows)

    def probe_class(self, family: str, probe: np.ndarray, min_cos: float) -> int:
        """Which of the servers seen under ``family`` (a model server's name and width) answered the
        probe text like ``probe`` (cosine ≥ ``min_cos``): its number, or a new one recorded now. A
        model server's vectors are keyed by ``family~n`` (`openxiv.indexer.encoders.remote`)."""
        vec = np.ascontiguousarray(probe, dtype="<f4")
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            rows = self._db.execute("SELECT n, vec FROM probes WHERE family=? ORDER BY n", (family,))
            known = [(int(n), np.frombuffer(blob, dtype="<f4")) for n, blob in rows]
            for n, seen in known:
                if seen.shape == vec.shape and float(seen @ vec) >= min_cos:
                    return n
            n = len(known)
            self._db.execute("INSERT INTO probes VALUES (?, ?, ?)", (family, n, vec.tobytes()))
        return n

    def count(self, model: str | None = None) -> int:
        if model is None:
            return int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
        return int(self._db.execute("SELECT COUNT(*) FROM vectors WHERE model=?", (model,)).fetchone()[0])

    def models(self) -> list[tuple[str, int, int]]:
        """``(model fingerprint, max_tokens, vectors)`` for each group in the cache."""
        rows = self._db.execute(
            "SELECT model, max_tokens, COUNT(*) FROM vectors GROUP BY model, max_tokens ORDER BY 1, 2"
        )
        return [(str(m), int(t), int(n)) for m, t, n in rows]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def encode_cached(
    encoder: Encoder,
    texts: Sequence[str],
    cache: EmbeddingCache | None,
    progress: bool = True,
    chunk_size: int = 2048,
    batch_size: int | None = None,
) -> np.ndarray:
    """Vectors of ``texts`` (row i for text i), encoding only what ``cache`` lacks.

    Misses are deduplicated, sorted longest first (batches of similar length waste no padding) and
    encoded ``chunk_size`` at a time; each chunk is written to the cache before the next starts, so
    an interrupted build keeps everything it encoded.
    """
    n = len(texts)
    if cache is None:
        return encoder.encode(texts, batch_size=batch_size, progress=progress)
    keys = cache_keys(encoder, texts)
    out = np.empty((n, encoder.dim), dtype=np.float32)
    found = cache.fill(keys, out)  # straight into the result: no second copy of the vectors
    first_of: dict[CacheKey, int] = {}
    for i in np.flatnonzero(~found).tolist():
        first_of.setdefault(keys[i], i)
    if first_of:
        missing = sorted(first_of.values(), key=lambda i: (-len(texts[i]), i))
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(missing), desc=f"embed ({encoder.name})", unit="text", smoothing=0.05)
        log.info("embedding %d texts (%d of %d vectors from the cache)", len(missing), int(found.sum()), n)
        t0 = last = time.perf_counter()
        try:
            for start in range(0, len(missing), chunk_size):
                idx = missing[start : start + chunk_size]
                vecs = encoder.encode([texts[i] for i in idx], batch_size=batch_size)
                cache.put_many([keys[i] for i in idx], vecs)
                out[idx] = vecs
                if bar is not None:
                    bar.update(len(idx))
                if time.perf_counter() - last >= LOG_EVERY_S:
                    last = time.perf_counter()
                    done = start + len(idx)
                    log.info("embedded %d/%d texts (%.0f texts/s)", done, len(missing), done / (last - t0))
        finally:
            if bar is not None:
                bar.close()
        # duplicates of an encoded text copy its vector
        for i, k in enumerate(keys):
            j = first_of.get(k)
            if j is not None and j != i:
                out[i] = out[j]
    return out
