"""Overlapping a search's independent stages while it is the only one running (`Overlap`).

A search encodes its query (ONNX) and scores BM25 (numba, numpy) before the dense search, which
needs both. The two do not depend on each other, and each spends its time in code that releases the
GIL, so on an otherwise idle server the encoding can run on a helper thread while the request's own
thread scores BM25 over the papers, and the BM25 passage side (independent of the paper side) runs
there next; likewise the pseudo-relevance feedback pass (which needs BM25's scores, not the
dense side's) runs on the helper, after the encoding, while the request's thread searches the
vectors. The request's wall time drops by what the helper does meanwhile; its CPU time does not
(the same work runs, on two cores instead of one). Under load every core already has a request of
its own, and a helper thread would only add hand-offs, so a stage is handed over only while one
search is in flight; with more, each runs its stages in turn as before. ``OPENXIV_SERVE_OVERLAP=0``
turns it off (docs/service.md, «Concurrency and tuning», has both ways measured).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["Overlap"]

T = TypeVar("T")


class Overlap:
    """Counts the searches in flight on one backend and, for a search running alone, runs a stage
    on one helper thread (made on first use, shared by every `tuned` view of the backend)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._in_flight = 0
        self._pool: ThreadPoolExecutor | None = None

    @contextmanager
    def search(self) -> Iterator[bool]:
        """Count one search for its duration; yields whether it may hand a stage over (it started
        alone, and overlapping is on)."""
        with self._lock:
            self._in_flight += 1
            alone = self._in_flight == 1
        try:
            yield alone and self.enabled
        finally:
            with self._lock:
                self._in_flight -= 1

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Run ``fn`` on the helper thread; its result (or exception) comes from the future."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="openxiv-overlap")
            pool = self._pool
        return pool.submit(fn)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
