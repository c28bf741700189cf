"""The search use case: run a search against the open snapshot and hydrate its hits (no HTTP here).

Every front calls it: ``POST /search``, ``GET /arxiv/?type=retrieve`` and ``/v1/search`` (the HTTP
routes), the web page, the MCP tool ``search_papers`` and ``openxiv search`` (through `Library`).
They parse their own parameters (`openxiv.service.params`) into one `SearchSpec`, call one
function here with it and render what it returns:

- `deepxiv_search`: one query or a batch in the DeepXiv shape (`SearchResponse`), the batch merged
  round-robin (`merge_round_robin`); `search_json` is the exact body ``POST /search`` sends;
- `search`: one query as `Outcome` (the hydrated hits, for ``/v1/search`` and the web page);
- `run_search`: one query on an already borrowed snapshot: the backend's ranking, then `hydrate`
  (`openxiv.service.hydration`) reads the papers, passages and tldrs from the snapshot's store and
  picks each hit's evidence;
- `deepxiv_on`, `search_on`, `stage_heads`: the same on a borrowed snapshot, in parts, for the
  event-loop use case (`openxiv.service.search_async`), which every network front calls so that a
  model server is awaited outside the compute slots; ``openxiv search`` calls this module directly.

A request borrows the snapshot once (`IndexHolder.acquire`), so a reload meanwhile never mixes two
snapshots; its time budget (``OPENXIV_REQUEST_BUDGET_S``) is checked between queries and stages
and answered with `OverBudget` (503).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.modes import UnknownMode
from openxiv.indexer.backend import DeadlineExceeded, SearchResult, UnsupportedFilter
from openxiv.indexer.encoders.vectors import EncoderUnavailable
from openxiv.indexer.snapshot import OpenIndex
from openxiv.service.citations import citation_counts
from openxiv.service.errors import ApiError, BadRequest
from openxiv.service.experiments.context import current as current_call
from openxiv.service.fine_rerank import FineRerank, Staged, rank_page, stage_head
from openxiv.service.holder import IndexHolder
from openxiv.service.hydration import hydrate
from openxiv.service.models import Hit, QueryResult, SearchResponse, V1SearchResponse
from openxiv.service.params import check_work
from openxiv.service.search_params import CITATION_SORT_DEPTH
from openxiv.service.spec import SearchSpec
from openxiv.service.views import ResolvedHit, to_deepxiv_hit, to_v1_hit

__all__ = [
    "DenseUnavailable",
    "Outcome",
    "OverBudget",
    "check_deadline",
    "deadline_for",
    "deepxiv_on",
    "deepxiv_search",
    "merge_round_robin",
    "run_search",
    "search",
    "search_json",
    "search_on",
    "stage_heads",
    "v1_json",
    "v1_response",
]


@dataclass
class Outcome:
    query: str
    hits: list[ResolvedHit]
    total_count: int
    timings_ms: dict[str, float] = field(default_factory=dict)
    snapshot: str = ""
    """The name of the snapshot that answered (set by `search`)."""
    notes: list[str] = field(default_factory=list)
    """The backend's notes on this answer (`SearchResult.notes`), passed on in ``warnings``."""


class DenseUnavailable(ApiError):
    """A dense mode alone and its query encoder (a model server) cannot answer: 503, the server named."""

    status_code = 503


class OverBudget(ApiError):
    """The request ran past ``Settings.request_budget_s``: answered 503 so the worker is free again."""

    status_code = 503


def deadline_for(settings: Settings) -> float | None:
    """The ``time.monotonic()`` by which a request started now must finish (``None``: no budget)."""
    budget = settings.request_budget_s
    return time.monotonic() + budget if budget and budget > 0 else None


def _over_budget(settings_budget: float | None, where: str) -> OverBudget:
    budget = f"{settings_budget:g} s " if settings_budget else ""
    return OverBudget(
        f"request time budget {budget}(OPENXIV_REQUEST_BUDGET_S) exhausted {where}; "
        "send fewer queries or filter values per request"
    )


def check_deadline(deadline: float | None, budget: float | None, where: str) -> None:
    """Raise `OverBudget` when the request's deadline has passed."""
    if deadline is not None and time.monotonic() > deadline:
        raise _over_budget(budget, where)


# ------------------------------------------------------------------------------- one query
def _rank(index: OpenIndex, spec: SearchSpec, deadline: float | None, budget: float | None) -> SearchResult:
    """The backend's ranking of ``spec``'s query, its errors turned into the service's (`OverBudget`,
    `BadRequest`)."""
    query, mode = spec.query, spec.mode
    try:
        return index.backend.search(
            query, top_k=spec.top_k, offset=spec.offset, filters=spec.filters, mode=mode, deadline=deadline
        )
    except DeadlineExceeded as exc:
        raise _over_budget(budget, f"while searching {query[:60]!r} ({exc})") from exc
    except EncoderUnavailable as exc:  # raised only when no lexical side could answer instead
        raise DenseUnavailable(f"mode {mode or 'dense'}: the query encoder is unavailable: {exc}") from exc
    except UnsupportedFilter as exc:
        raise BadRequest(str(exc)) from exc
    except UnknownMode as exc:  # in practice `ModeUnavailable`: params checked the spelling
        if mode is None:  # the configured default failed: a server problem, not the client's
            raise
        raise BadRequest(f"mode: {exc}") from exc


def _within_cutoff(
    index: OpenIndex, spec: SearchSpec, deadline: float | None, budget: float | None
) -> SearchSpec:
    """``spec`` held to the date ceiling of the question this call is tagged with (``--cutoffs``;
    unchanged without one). The papers after it that the page would have shown are counted as the
    call's leaks (a second ranking, run only when the ceiling narrows the filters)."""
    state = current_call()
    capped = _capped(spec)
    if state is None or capped is spec:
        return spec
    free = [h.arxiv_id for h in _rank(index, spec, deadline, budget).hits]
    papers = index.store.get_papers(free) if free else {}
    state.leak(aid for aid in free if aid in papers and state.after(papers[aid].date))
    return capped


def _capped(spec: SearchSpec) -> SearchSpec:
    """``spec`` held to the date ceiling of the question this call is tagged with (itself without one)."""
    state = current_call()
    if state is None or state.ceiling is None:
        return spec
    capped = state.capped(spec.filters)
    if capped is None or capped == spec.filters:
        return spec
    return replace(spec, filters=capped)


def _first_stage(
    index: OpenIndex, spec: SearchSpec, deadline: float | None, budget: float | None
) -> Callable[[int, int], SearchResult]:
    def first_stage(k: int, start: int) -> SearchResult:
        return _rank(index, replace(spec, top_k=k, offset=start), deadline, budget)

    return first_stage


def _by_citations(
    index: OpenIndex, spec: SearchSpec, deadline: float | None, budget: float | None
) -> SearchResult:
    """``sort=citations``: the first matches by relevance, stably ordered by in-corpus citation
    count (most cited first), then the page cut from them."""
    if not index.has_citations:
        raise BadRequest("sort: this index was built before citation counts were stored; rebuild it")
    depth = max(CITATION_SORT_DEPTH, spec.offset + spec.top_k)
    ranked = _rank(index, replace(spec, top_k=depth, offset=0), deadline, budget)
    counts = citation_counts(index, [h.arxiv_id for h in ranked.hits])  # a tagged question's ceiling
    hits = sorted(ranked.hits, key=lambda h: -(counts[h.arxiv_id] or 0))
    return replace(ranked, hits=hits[spec.offset : spec.offset + spec.top_k])


def run_search(
    index: OpenIndex,
    spec: SearchSpec,
    *,
    deadline: float | None = None,
    budget: float | None = None,
    rerank: FineRerank | None = None,
    staged: Staged | None = None,
) -> Outcome:
    """``spec``'s query (one) against one snapshot: backend ranking, then papers and evidence from the store.

    ``deadline`` (``time.monotonic()``) is passed to the backend, which checks it between its stages,
    and checked again before the papers are read; ``budget`` only names the limit in the error.
    With ``rerank`` (the server's reranker, when ``spec.fine_rerank``) the page is cut from the
    reranked ranking (`openxiv.service.fine_rerank`); ``staged``: its head and scores, fetched
    beforehand (`stage_heads`)."""
    query = spec.query
    spec = _within_cutoff(index, spec, deadline, budget)
    if spec.sort == "citations":
        result = _by_citations(index, spec, deadline, budget)
    elif rerank is None:
        result = _rank(index, spec, deadline, budget)
    else:
        first_stage = _first_stage(index, spec, deadline, budget)
        result = rank_page(
            index, query, top_k=spec.top_k, offset=spec.offset, plan=rerank, rank=first_stage, staged=staged
        )
    check_deadline(deadline, budget, f"before reading the papers of {query[:60]!r}")
    t0 = time.perf_counter()
    hits = hydrate(index, query, list(result.hits), spec.contents)
    timings = {k: round(float(v), 3) for k, v in result.timings_ms.items()}
    timings["hydrate"] = round((time.perf_counter() - t0) * 1000, 3)
    out = Outcome(query=query, hits=hits, total_count=int(result.total_count), timings_ms=timings)
    out.notes = list(result.notes)
    return out


def stage_heads(
    index: OpenIndex, spec: SearchSpec, plan: FineRerank, deadline: float | None, budget: float | None
) -> list[Staged | None]:
    """Per query of ``spec``, what its reranked page needs scored (`stage_head`): the first part of
    a search whose reranker answers over the network, before its scores are awaited."""
    out = []
    for q in spec.queries:
        one = _capped(spec.one(q))  # as `run_search` will rank it (its leaks are counted there)
        first_stage = _first_stage(index, one, deadline, budget)
        out.append(stage_head(index, q, top_k=one.top_k, offset=one.offset, plan=plan, rank=first_stage))
    return out


def search(holder: IndexHolder, spec: SearchSpec, *, settings: Settings) -> Outcome:
    """``spec``'s one query, checked, against the snapshot ``holder`` serves now, within the request's
    budget (``/v1/search`` and the web page through `openxiv.service.search_async`); `Outcome.snapshot`
    names the snapshot that answered."""
    check_work([spec.query], spec.filters)
    plan = FineRerank.of(settings, spec.fine_rerank)  # loads the reranker before the budget starts
    with holder.acquire() as index:
        return search_on(index, spec, settings=settings, plan=plan)


def search_on(
    index: OpenIndex,
    spec: SearchSpec,
    *,
    settings: Settings,
    plan: FineRerank | None = None,
    deadline: float | None = None,
    staged: Sequence[Staged | None] | None = None,
) -> Outcome:
    """`search` on a borrowed snapshot (as `deepxiv_on`)."""
    out = run_search(
        index,
        spec,
        deadline=deadline if deadline is not None else deadline_for(settings),
        budget=settings.request_budget_s,
        rerank=plan,
        staged=staged[0] if staged else None,
    )
    out.snapshot = Path(index.path).name
    return out


# ------------------------------------------------------------------------------- DeepXiv shape
def deepxiv_search(
    holder: IndexHolder, spec: SearchSpec, *, settings: Settings, warnings: list[str] | None = None
) -> tuple[SearchResponse, dict[str, float]]:
    """Run one query or a batch (``spec.batch``): the DeepXiv ``{status, total_count, result}`` model
    and the summed timings. Shared by ``openxiv search`` and, through
    `openxiv.service.search_async`, the HTTP routes and the MCP server.

    The request's time budget covers the whole batch: it is checked before every query (and inside
    each search), so a batch that runs late stops at once with a 503 instead of holding the worker."""
    check_work(list(spec.queries), spec.filters)
    plan = FineRerank.of(settings, spec.fine_rerank)  # loads the reranker before the budget starts
    with holder.acquire() as index:
        return deepxiv_on(index, spec, settings=settings, warnings=warnings, plan=plan)


def deepxiv_on(
    index: OpenIndex,
    spec: SearchSpec,
    *,
    settings: Settings,
    warnings: list[str] | None = None,
    plan: FineRerank | None = None,
    deadline: float | None = None,
    staged: Sequence[Staged | None] | None = None,
) -> tuple[SearchResponse, dict[str, float]]:
    """`deepxiv_search` on a borrowed snapshot, with its reranker ``plan`` loaded; ``deadline``
    (default: the budget from now) and ``staged`` (`stage_heads`) when a first part ran before."""
    queries = spec.queries
    deadline = deadline if deadline is not None else deadline_for(settings)
    budget = settings.request_budget_s
    timings: dict[str, float] = {}
    per_query: list[QueryResult] = []
    for i, q in enumerate(queries):
        check_deadline(deadline, budget, f"after {i} of {len(queries)} queries")
        ahead = staged[i] if staged is not None else None
        out = run_search(index, spec.one(q), deadline=deadline, budget=budget, rerank=plan, staged=ahead)
        for k, v in out.timings_ms.items():
            timings[k] = timings.get(k, 0.0) + v
        hits = [to_deepxiv_hit(h, spec.contents) for h in out.hits]
        warnings = _noted(warnings, out.notes)
        per_query.append(QueryResult(query=q, total_count=out.total_count, result=hits))
    if spec.batch:
        merged = merge_round_robin(per_query)
        response = SearchResponse(total_count=len(merged), result=merged[: spec.top_k], results=per_query)
    else:
        only = per_query[0]
        response = SearchResponse(total_count=only.total_count, result=only.result)
    response.warnings = warnings or None
    return response, timings


def _noted(warnings: list[str] | None, notes: list[str]) -> list[str] | None:
    """``warnings`` with the backend's ``notes`` of one query added (each once)."""
    if not notes:
        return warnings
    out = list(warnings or [])
    out += [n for n in notes if n not in out]
    return out


def merge_round_robin(results: list[QueryResult]) -> list[Hit]:
    """Best hit of each query in turn, then second-best..., skipping papers already taken."""
    seen: set[str] = set()
    merged: list[Hit] = []
    depth = max((len(r.result) for r in results), default=0)
    for rank in range(depth):
        for r in results:
            if rank < len(r.result):
                hit = r.result[rank]
                if hit.arxiv_id not in seen:
                    seen.add(hit.arxiv_id)
                    merged.append(hit)
    return merged


def search_json(response: SearchResponse) -> str:
    """The response as ``POST /search`` sends it: ``results`` and ``warnings`` only when present."""
    exclude = {k for k in ("results", "warnings") if getattr(response, k) is None}
    return response.model_dump_json(exclude=exclude)


def v1_json(response: V1SearchResponse) -> str:
    """A ``/v1/search`` body: ``warnings`` only when there are some."""
    return response.model_dump_json(exclude={"warnings"} if response.warnings is None else None)


def v1_response(out: Outcome, offset: int, top_k: int) -> V1SearchResponse:
    """An outcome in the ``/v1/search`` shape (also ``/v1/similar``): hits ranked from ``offset + 1``."""
    return V1SearchResponse(
        query=out.query,
        total_count=out.total_count,
        offset=offset,
        top_k=top_k,
        hits=[to_v1_hit(h, offset + i + 1) for i, h in enumerate(out.hits)],
        timings_ms=out.timings_ms,
        snapshot=out.snapshot,
        warnings=out.notes or None,
    )
