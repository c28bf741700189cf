"""The open index, shared by all requests, swapped atomically on reload.

`IndexHolder` keeps one open snapshot (`openxiv.indexer.snapshot.OpenIndex`: backend + read-only
store). Requests borrow it with ``with holder.acquire() as index:``; the borrow counts as *in
flight*. `IndexHolder.reload` opens whatever ``INDEX_DIR/CURRENT`` points to now, swaps the reference
under a lock, and closes the previous snapshot only when its last in-flight request has finished, so
a reload never fails or slows a request that is already running.

While a snapshot is open this process holds its lease (`openxiv.indexer.locks.SnapshotLease`, taken
by `open_index`), so no build prunes it; the lease goes with the retired snapshot's `close`.
``CURRENT`` and manifests are read through `openxiv.indexer.snapshot`, the one reader of both.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool

from openxiv.corpus.settings.model import Settings
from openxiv.indexer import layout
from openxiv.indexer.manifest import Manifest
from openxiv.indexer.manifest import read as read_manifest
from openxiv.indexer.snapshot import BadIndexError, OpenIndex, current_snapshot, missing_parts
from openxiv.indexer.warm import Warmer, WarmState
from openxiv.service.errors import NotReady

__all__ = ["IndexHolder", "default_opener", "reload_triggers", "serve_threads"]

log = logging.getLogger("openxiv.service")


Opener = Callable[[Path, Settings, OpenIndex | None], OpenIndex]


def serve_threads(settings: Settings) -> int:
    """Intra-op threads for query encoding while serving (``settings.serve_threads``, at least 1)."""
    return max(1, settings.serve_threads)


def default_opener(index_root: Path, settings: Settings, previous: OpenIndex | None = None) -> OpenIndex:
    """`open_index`, reusing the previous snapshot's query encoder when it was built the same way.

    Query encoding and dense search run with `serve_threads` torch/OpenMP threads (``openxiv serve``
    also sets ``OMP_NUM_THREADS``): one query gains little from intra-op parallelism, and spinning
    worker threads slow every concurrent request down (docs/service.md, «Concurrency and tuning»).
    """
    from openxiv.indexer.snapshot import open_index  # heavy imports (torch, FAISS) only when serving

    encoder = None
    if previous is not None:
        same = _encoder_key(previous.manifest) == _encoder_key(_manifest_of(index_root))
        encoder = (
            getattr(previous.backend, "encoder", None) if same and _encoder_key(previous.manifest) else None
        )
    index = open_index(index_root, settings, encoder=encoder)
    threads = serve_threads(settings)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    if "faiss" in sys.modules:
        sys.modules["faiss"].omp_set_num_threads(threads)
    return index


def _encoder_key(manifest: Manifest | None) -> tuple[Any, ...] | None:
    return None if manifest is None else manifest.embedding.encoder_key


def _manifest_of(index_root: Path) -> Manifest | None:
    snap = current_snapshot(index_root)
    if snap is None:
        return None
    with contextlib.suppress(BadIndexError):
        return read_manifest(snap)
    return None


@dataclass
class _Entry:
    index: OpenIndex
    loaded_at: datetime
    active: int = 0
    retired: bool = False

    @property
    def snapshot(self) -> str:
        return Path(self.index.path).name


class IndexHolder:
    def __init__(
        self, index_root: Path, settings: Settings, opener: Opener = default_opener, warm: str = "off"
    ) -> None:
        """``warm``: `Settings.serve_warm` for a server (`openxiv.indexer.warm`); ``off`` for the
        other holders (the CLI, scripts), which answer a few searches and leave."""
        self.index_root = Path(index_root)
        self.settings = settings
        self._opener = opener
        self._lock = threading.Lock()
        self._reload_lock = threading.Lock()
        self._entry: _Entry | None = None
        self.reloads = 0
        self.warm = warm
        self._warmer: Warmer | None = None

    # ------------------------------------------------------------------ lifecycle
    def load(self) -> None:
        """Open the current snapshot (at startup)."""
        self.reload(force=True)

    def close(self) -> None:
        """Stop serving; the snapshot closes now or when its last request finishes."""
        if self._warmer is not None:
            self._warmer.stop()
        with self._lock:
            entry, self._entry = self._entry, None
        if entry is not None:
            self._retire(entry)

    @property
    def ready(self) -> bool:
        return self._entry is not None

    @property
    def warm_state(self) -> WarmState | None:
        """The served snapshot's warm-up (``None``: warming is off)."""
        return self._warmer.state() if self._warmer is not None else None

    @property
    def warming_blocks_ready(self) -> bool:
        """Whether ``/readyz`` waits: warm-before-ready and the warm-up still running."""
        state = self.warm_state
        return self.warm == "before-ready" and state is not None and state.state == "warming"

    @property
    def snapshot(self) -> str | None:
        entry = self._entry
        return entry.snapshot if entry else None

    def missing_files(self) -> list[str]:
        """Parts of the served snapshot that are gone from disk (deleted behind the server's back);
        empty while it is intact or when nothing is loaded."""
        entry = self._entry
        if entry is None:
            return []
        return missing_parts(Path(entry.index.path), entry.index.manifest)

    @property
    def loaded_at(self) -> datetime | None:
        entry = self._entry
        return entry.loaded_at if entry else None

    # ------------------------------------------------------------------ borrowing
    @contextmanager
    def acquire(self) -> Iterator[OpenIndex]:
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
                if target is not None and target.resolve() == Path(previous.index.path).resolve():
                    return {"status": "unchanged", "snapshot": previous.snapshot, "previous": None}
            index = self._opener(self.index_root, self.settings, previous.index if previous else None)
            self._start_warming(Path(index.path), swapping=previous is not None)
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

    def _start_warming(self, snapshot: Path, swapping: bool) -> Warmer | None:
        """The new snapshot's warm-up: on a thread (``background``, and a first start in
        ``before-ready``, whose ``/readyz`` waits for it), or here before the swap (a reload in
        ``before-ready``: the previous snapshot serves until the new one is warm)."""
        if self.warm not in ("background", "before-ready"):
            return None
        if self._warmer is not None:
            self._warmer.stop()
        warmer = Warmer(snapshot)
        if swapping and self.warm == "before-ready":
            warmer.run()
        else:
            warmer.start()
        self._warmer = warmer
        return warmer

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


# ------------------------------------------------------------------ reload triggers
_background: set[asyncio.Future[None]] = set()


def _on_sighup(holder: IndexHolder) -> None:
    async def reload() -> None:
        try:
            result = await run_in_threadpool(holder.reload)
            log.info("SIGHUP reload: %s (snapshot %s)", result["status"], result["snapshot"])
        except Exception:
            log.exception("SIGHUP reload failed; still serving %s", holder.snapshot)

    task = asyncio.ensure_future(reload())
    _background.add(task)
    task.add_done_callback(_background.discard)


async def _watch(holder: IndexHolder, interval: float) -> None:
    """Reload whenever ``CURRENT`` names another snapshot (each reload is logged by the holder); a
    failure is logged once per distinct error, and the loaded snapshot keeps serving."""
    log.info("watching %s/%s every %g s", holder.index_root, layout.CURRENT, interval)
    last_error = ""
    while True:
        await asyncio.sleep(interval)
        try:
            await run_in_threadpool(holder.reload)
            last_error = ""
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            if error != last_error:
                log.warning("watch: reload failed (%s); still serving %s", error, holder.snapshot)
            last_error = error


@asynccontextmanager
async def reload_triggers(holder: IndexHolder, settings: Settings) -> AsyncIterator[None]:
    """While inside: SIGHUP reloads ``holder`` and, with ``OPENXIV_WATCH_INTERVAL`` > 0, so does a
    change of ``CURRENT``. The HTTP service and the MCP server both run under it, so they follow one
    set of reload rules."""
    loop = asyncio.get_running_loop()
    hup = False
    try:
        loop.add_signal_handler(signal.SIGHUP, _on_sighup, holder)
        hup = True
    except (NotImplementedError, RuntimeError, AttributeError, ValueError):
        log.info("SIGHUP reload not available here; use POST /v1/admin/reload (OPENXIV_ADMIN_TOKEN)")
    watcher = (
        asyncio.ensure_future(_watch(holder, settings.watch_interval))
        if settings.watch_interval > 0
        else None
    )
    try:
        yield
    finally:
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        if hup:
            loop.remove_signal_handler(signal.SIGHUP)
