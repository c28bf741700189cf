"""The open index, shared by all requests, swapped atomically on reload.

`IndexHolder` keeps one open snapshot (`openxiv.indexer.snapshot.OpenIndex`: backend + read-only
store). Requests borrow it with ``with holder.acquire() as index:``; the borrow counts as *in
flight*. `IndexHolder.reload` opens whatever ``INDEX_DIR/CURRENT`` points to now, swaps the reference
under a lock, and closes the previous snapshot only when its last in-flight request has finished, so
a reload never fails or slows a request that is already running.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from openxiv.corpus.config import ConfigError, Settings
from openxiv.corpus.store import Store
from openxiv.indexer.backend import SearchBackend
from openxiv.service.errors import NotReady

__all__ = ["IndexHolder", "IndexLike", "current_snapshot", "default_opener"]

log = logging.getLogger("openxiv.service")


class IndexLike(Protocol):
    """What the service uses of `openxiv.indexer.snapshot.OpenIndex`."""

    backend: SearchBackend
    store: Store
    manifest: dict[str, Any]
    path: Path

    def close(self) -> None: ...


Opener = Callable[[Path, Settings, "IndexLike | None"], IndexLike]

SERVE_THREADS_ENV = "OPENXIV_SERVE_THREADS"
"""Intra-op threads for query encoding while serving (default 1; see docs/service.md)."""


def serve_threads() -> int:
    raw = os.environ.get(SERVE_THREADS_ENV, "").strip()
    try:
        return max(1, int(raw)) if raw else 1
    except ValueError as exc:
        raise ConfigError(f"{SERVE_THREADS_ENV}={raw!r}: expected a positive integer") from exc


def default_opener(index_root: Path, settings: Settings, previous: IndexLike | None = None) -> IndexLike:
    """`open_index`, reusing the previous snapshot's query encoder when it was built the same way.

    Query encoding and dense search run with `serve_threads` torch/OpenMP threads (``openxiv serve``
    also sets ``OMP_NUM_THREADS``): one query gains little from intra-op parallelism, and spinning
    worker threads slow every concurrent request down (measured: FAISS flat search over 101k vectors
    53 ms with 2 threads vs 14 ms with 1 on the shared 2-core machine).
    """
    from openxiv.indexer.snapshot import open_index  # heavy imports (torch, FAISS) only when serving

    encoder = None
    if previous is not None:
        same = _encoder_key(previous.manifest) == _encoder_key(_manifest_of(index_root))
        encoder = (
            getattr(previous.backend, "encoder", None) if same and _encoder_key(previous.manifest) else None
        )
    index: IndexLike = open_index(index_root, settings, encoder=encoder)
    threads = serve_threads()
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    if "faiss" in sys.modules:
        sys.modules["faiss"].omp_set_num_threads(threads)
    return index


def _encoder_key(manifest: dict[str, Any] | None) -> tuple[Any, ...] | None:
    emb = (manifest or {}).get("embedding")
    if not isinstance(emb, dict) or not emb.get("fingerprint"):
        return None
    return tuple(emb.get(k) for k in ("encoder", "fingerprint", "dim", "max_tokens"))


def _manifest_of(index_root: Path) -> dict[str, Any] | None:
    snap = current_snapshot(index_root)
    if snap is None:
        return None
    try:
        manifest = json.loads((snap / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


@dataclass
class _Entry:
    index: IndexLike
    loaded_at: datetime
    active: int = 0
    retired: bool = False

    @property
    def snapshot(self) -> str:
        return Path(self.index.path).name


def current_snapshot(index_root: Path) -> Path | None:
    """The snapshot directory ``INDEX_DIR/CURRENT`` names (a file holding its name, or a symlink)."""
    pointer = Path(index_root) / "CURRENT"
    if pointer.is_dir():
        return pointer.resolve()
    try:
        name = pointer.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not name or "\x00" in name:
        return None
    for candidate in (Path(index_root) / "snapshots" / name, Path(index_root) / name):
        if candidate.is_dir():
            return candidate.resolve()
    return None


class IndexHolder:
    def __init__(self, index_root: Path, settings: Settings, opener: Opener = default_opener) -> None:
        self.index_root = Path(index_root)
        self.settings = settings
        self._opener = opener
        self._lock = threading.Lock()
        self._reload_lock = threading.Lock()
        self._entry: _Entry | None = None
        self.reloads = 0

    # ------------------------------------------------------------------ lifecycle
    def load(self) -> None:
        """Open the current snapshot (at startup)."""
        self.reload(force=True)

    def close(self) -> None:
        """Stop serving; the snapshot closes now or when its last request finishes."""
        with self._lock:
            entry, self._entry = self._entry, None
        if entry is not None:
            self._retire(entry)

    @property
    def ready(self) -> bool:
        return self._entry is not None

    @property
    def snapshot(self) -> str | None:
        entry = self._entry
        return entry.snapshot if entry else None

    @property
    def loaded_at(self) -> datetime | None:
        entry = self._entry
        return entry.loaded_at if entry else None

    # ------------------------------------------------------------------ borrowing
    @contextmanager
    def acquire(self) -> Iterator[IndexLike]:
        with self._lock:
            entry = self._entry
            if entry is None:
                raise NotReady("the index is not loaded (starting up or shutting down)")
            entry.active += 1
        try:
            yield entry.index
        finally:
            with self._lock:
                entry.active -= 1
                close_now = entry.retired and entry.active == 0
            if close_now:
                self._close(entry)

    # ------------------------------------------------------------------ swapping
    def reload(self, force: bool = False) -> dict[str, str | None]:
        """Open the snapshot ``CURRENT`` names and swap it in; ``unchanged`` when it is already loaded.

        A failure to open leaves the loaded snapshot serving and raises.
        """
        with self._reload_lock:
            previous = self._entry
            if not force and previous is not None:
                target = current_snapshot(self.index_root)
                if target is not None and target == Path(previous.index.path).resolve():
                    return {"status": "unchanged", "snapshot": previous.snapshot, "previous": None}
            index = self._opener(self.index_root, self.settings, previous.index if previous else None)
            entry = _Entry(index=index, loaded_at=datetime.now(UTC))
            with self._lock:
                old, self._entry = self._entry, entry
                if old is not None:
                    self.reloads += 1
            if old is not None:
                self._retire(old)
            log.info("serving snapshot %s (previous: %s)", entry.snapshot, old.snapshot if old else None)
            return {
                "status": "reloaded",
                "snapshot": entry.snapshot,
                "previous": old.snapshot if old else None,
            }

    def _retire(self, entry: _Entry) -> None:
        with self._lock:
            entry.retired = True
            close_now = entry.active == 0
        if close_now:
            self._close(entry)

    @staticmethod
    def _close(entry: _Entry) -> None:
        try:
            entry.index.close()
        except Exception:  # closing must not take the service down
            log.exception("closing snapshot %s failed", entry.snapshot)
