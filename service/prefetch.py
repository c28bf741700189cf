"""A model server's query vectors fetched before a search computes, on the event loop.

A search runs in the HTTP front's threadpool, whose tokens are the compute slots
(``serve_concurrency``). Waiting there for a model server would hold a slot while doing nothing, so
the front awaits `prefetch_query_vectors` first: the snapshot's remote encoder
(`openxiv.indexer.encoders.remote.RemoteEncoder.prefetch`) asks the server with an async client and
keeps each vector (or the failure) for the search to find.
"""

from __future__ import annotations

from collections.abc import Sequence

from openxiv.corpus.settings.model import Settings
from openxiv.service.errors import ApiError
from openxiv.service.holder import IndexHolder

__all__ = ["prefetch_query_vectors"]


async def prefetch_query_vectors(
    holder: IndexHolder, queries: Sequence[str], mode: str | None, settings: Settings
) -> None:
    """Fetch the query vectors a search will need from a model server now, on the event loop, so the
    search that follows in the threadpool finds them and holds its compute slot only to compute. A
    no-op for in-process encoders, modes without a dense side and a snapshot not loaded (the search
    itself then answers as usual); a failure is kept for the search to turn into a warning."""
    try:
        with holder.acquire() as index:
            backend = index.backend
    except ApiError:
        return
    prefetch = getattr(getattr(backend, "encoder", None), "prefetch", None)
    wanted = getattr(backend, "query_vector_wanted", None)
    if prefetch is None or wanted is None or not wanted(mode):
        return
    await prefetch([q for q in queries if q.strip()], settings.request_budget_s or None)
