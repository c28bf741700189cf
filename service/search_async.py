"""The search use case on the event loop: a model server is awaited outside every compute slot.

The network fronts compute in worker threads whose tokens are the compute slots
(``serve_concurrency``: FastAPI's threadpool, the MCP SDK's ``to_thread`` for sync tools). A search
whose snapshot embeds queries through a model server, or whose fine rerank asks a ``/rerank`` or
chat server, would hold a slot while doing nothing but wait. Every network front (``POST /search``,
``GET /arxiv/?type=retrieve``, ``/v1/search``, the web page, ``POST /retrieve``, the agent search,
the MCP tool ``search_papers``) therefore calls `deepxiv_search_async` or `search_async`, which run
the same use case as `openxiv.service.search` in three steps on one borrowed snapshot:

1. the query vectors are fetched on the event loop (`RemoteEncoder.prefetch`; the search finds them,
   or the failure, and answers with its lexical sides and a warning);
2. with a network reranker, the first stage's heads and their texts are computed in one slot
   (`openxiv.service.search.stage_heads`), then their scores awaited on the event loop
   (`openxiv.service.fine_rerank.Staged.fetch`);
3. the rest (the pages, hydration) in one slot.

In-process encoders and rerankers skip steps 1 and 2: their search is step 3 alone, as before.
Step 1's fetch (`prefetch_texts`) is also how similar papers with a ``facet`` await the vector of
the facet's text (`openxiv.service.similar.similar_async`).
``openxiv search`` (no event loop, no slots) calls `openxiv.service.search` directly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial

import anyio.to_thread

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.snapshot import OpenIndex
from openxiv.service.fine_rerank import FineRerank, Staged, network_reranker
from openxiv.service.holder import IndexHolder
from openxiv.service.models import SearchResponse
from openxiv.service.params import check_work
from openxiv.service.search import Outcome, deadline_for, deepxiv_on, search_on, stage_heads
from openxiv.service.spec import SearchSpec

__all__ = ["deepxiv_search_async", "prefetch_query_vectors", "prefetch_texts", "search_async"]


def _prefetch_of(index: OpenIndex) -> Callable[..., Awaitable[None]] | None:
    """The snapshot's query encoder's ``prefetch`` (a model server's), ``None`` for in-process ones."""
    prefetch: Callable[..., Awaitable[None]] | None = getattr(
        getattr(index.backend, "encoder", None), "prefetch", None
    )
    return prefetch


async def prefetch_texts(index: OpenIndex, texts: Sequence[str], settings: Settings) -> None:
    """Fetch the query encodings of ``texts`` from the snapshot's model server now, on the event
    loop, for the backend's ``encode_query`` to find (`RemoteEncoder.prefetch`), within the request
    budget. A no-op for in-process encoders; a failure is kept by the encoder for the use case to
    turn into a warning. Searches call it through `prefetch_query_vectors`; similar papers with a
    ``facet`` for the facet's text (`openxiv.service.similar.similar_async`)."""
    prefetch = _prefetch_of(index)
    if prefetch is None:
        return
    await prefetch([t for t in texts if t.strip()], settings.request_budget_s or None)


async def prefetch_query_vectors(
    index: OpenIndex, queries: Sequence[str], mode: str | None, settings: Settings
) -> None:
    """Fetch the query vectors a search will need from a model server now, on the event loop
    (`prefetch_texts`). A no-op for in-process encoders and modes without a dense side; a failure
    is kept by the encoder for the search to turn into a warning (or a 503 for a dense mode alone)."""
    wanted = getattr(index.backend, "query_vector_wanted", None)
    if _prefetch_of(index) is None or wanted is None or not wanted(mode):
        return
    await prefetch_texts(index, queries, settings)


def _stage(
    index: OpenIndex, spec: SearchSpec, plan: FineRerank, settings: Settings
) -> tuple[float | None, list[Staged | None]]:
    deadline = deadline_for(settings)  # started in the slot, as the search's own is
    return deadline, stage_heads(index, spec, plan, deadline, settings.request_budget_s)


async def _waits(
    index: OpenIndex, spec: SearchSpec, settings: Settings, plan: FineRerank | None
) -> tuple[float | None, list[Staged | None] | None]:
    """Steps 1 and 2 (module docstring). With a network reranker: the request's deadline, started
    when its first slot did, and the staged heads with their scores; else ``(None, None)`` (step 3
    starts the deadline in its slot, as a search always did)."""
    await prefetch_query_vectors(index, spec.queries, spec.mode, settings)
    reranker = network_reranker(plan)
    if reranker is None or plan is None:
        return None, None
    deadline, staged = await anyio.to_thread.run_sync(_stage, index, spec, plan, settings)
    for q, s in zip(spec.queries, staged, strict=True):
        if s is not None:
            await s.fetch(reranker, q)  # on the event loop: no slot held
    return deadline, staged


async def _plan(settings: Settings, spec: SearchSpec) -> FineRerank | None:
    """The reranker plan, loaded (once per process) in a worker thread when the request asks one."""
    if not spec.fine_rerank:
        return None
    return await anyio.to_thread.run_sync(FineRerank.of, settings, True)


async def deepxiv_search_async(
    holder: IndexHolder, spec: SearchSpec, *, settings: Settings, warnings: list[str] | None = None
) -> tuple[SearchResponse, dict[str, float]]:
    """`openxiv.service.search.deepxiv_search` with its network waits outside the compute slots."""
    check_work(list(spec.queries), spec.filters)
    plan = await _plan(settings, spec)
    with holder.acquire() as index:
        deadline, staged = await _waits(index, spec, settings, plan)
        run = partial(
            deepxiv_on,
            index,
            spec,
            settings=settings,
            warnings=warnings,
            plan=plan,
            deadline=deadline,
            staged=staged,
        )
        return await anyio.to_thread.run_sync(run)


async def search_async(holder: IndexHolder, spec: SearchSpec, *, settings: Settings) -> Outcome:
    """`openxiv.service.search.search` with its network waits outside the compute slots."""
    check_work([spec.query], spec.filters)
    plan = await _plan(settings, spec)
    with holder.acquire() as index:
        deadline, staged = await _waits(index, spec, settings, plan)
        run = partial(search_on, index, spec, settings=settings, plan=plan, deadline=deadline, staged=staged)
        return await anyio.to_thread.run_sync(run)
