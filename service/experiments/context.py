"""What the use cases know about the call they serve: its tags, its question's date ceiling, and the
leaks they count (papers after the ceiling they held back).

The experiments middleware (`openxiv.service.experiments.asgi`) sets a `CallState` for a tagged call;
the use cases read it with `current` (``None`` when nothing is set: the plain server). A context
variable, so the threadpool a route computes in sees it (anyio copies the context into the thread).

A use case holds a read to the ceiling with `beyond_cutoff` (one paper asked for: answer as if the
corpus did not hold it) or `within_cutoff` (papers about to be shown: the later ones left out); both
count what they hold back as the call's leaks. `after_cutoff` only says which papers lie after it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import date

from openxiv.corpus.records import Paper
from openxiv.indexer.backend import SearchFilters

__all__ = ["CallState", "after_cutoff", "beyond_cutoff", "current", "in_call", "within_cutoff"]


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


def after_cutoff(papers: Mapping[str, Paper]) -> set[str]:
    """The ids of ``papers`` dated after the ceiling of the call being served (none without one);
    not counted as leaks (the caller counts the ones it would have shown)."""
    state = _STATE.get()
    if state is None or state.ceiling is None:
        return set()
    return {aid for aid, paper in papers.items() if state.after(paper.date)}


def within_cutoff(papers: Mapping[str, Paper]) -> dict[str, Paper]:
    """``papers`` (in their order) without those after the ceiling of the call being served, each
    of those counted as a leak; all of them without a ceiling."""
    later = after_cutoff(papers)
    if later:
        state = _STATE.get()
        assert state is not None
        state.leak(aid for aid in papers if aid in later)
    return {aid: paper for aid, paper in papers.items() if aid not in later}
