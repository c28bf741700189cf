"""What the use cases know about the call they serve: its tags, its question's date ceiling, and the
leaks they count (papers after the ceiling they held back).

The experiments middleware (`openxiv.service.experiments.asgi`) sets a `CallState` for a tagged call;
the use cases read it with `current` (``None`` when nothing is set: the plain server). A context
variable, so the threadpool a route computes in sees it (anyio copies the context into the thread).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import date

from openxiv.indexer.backend import SearchFilters

__all__ = ["CallState", "beyond_cutoff", "current", "in_call"]


@dataclass
class CallState:
    """One call: its tags, the date ceiling of its question (``None``: none), the leaks counted."""

    run: str | None = None
    question: str | None = None
    ceiling: date | None = None
    leaked: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def capped(self, filters: SearchFilters | None) -> SearchFilters | None:
        """``filters`` with ``date_to`` at most the ceiling (unchanged without one)."""
        if self.ceiling is None:
            return filters
        base = filters or SearchFilters()
        if base.date_to is not None and base.date_to <= self.ceiling:
            return base
        return replace(base, date_to=self.ceiling)

    def after(self, day: date | None) -> bool:
        """Whether a paper of date ``day`` lies after the ceiling (an undated paper never does)."""
        return self.ceiling is not None and day is not None and day > self.ceiling

    def leak(self, ids: Iterable[str]) -> None:
        """Count papers held back by the ceiling (each id once per call)."""
        with self._lock:
            for aid in ids:
                if aid not in self.leaked:
                    self.leaked.append(aid)


_STATE: ContextVar[CallState | None] = ContextVar("openxiv_call_state", default=None)


def current() -> CallState | None:
    """The call being served, when the experiments middleware tagged it."""
    return _STATE.get()


@contextmanager
def in_call(state: CallState) -> Iterator[CallState]:
    token = _STATE.set(state)
    try:
        yield state
    finally:
        _STATE.reset(token)


def beyond_cutoff(arxiv_id: str, day: date | None) -> bool:
    """Whether the paper ``arxiv_id`` of date ``day`` lies after the ceiling of the call being served
    (then it is counted as a leak and the caller answers as if the corpus did not hold it)."""
    state = _STATE.get()
    if state is None or not state.after(day):
        return False
    state.leak([arxiv_id])
    return True
