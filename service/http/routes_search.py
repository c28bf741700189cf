"""Search routes: the AutoResearchBench/DeepXiv ``POST /search`` (also at ``/arxiv/retrieve`` and ``/``)
and openxiv's own ``GET/POST /v1/search``.

Handlers are plain ``def`` functions: FastAPI runs them in its threadpool, so query encoding, BM25
and FAISS never block the event loop. Each request borrows the open snapshot once (see
`openxiv.service.holder`), so a reload in the middle of a request does not mix two snapshots.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.modes import mode_help
from openxiv.indexer.backend import SearchFilters
from openxiv.service.core import (
    check_deadline,
    deadline_for,
    merge_round_robin,
    run_search,
    to_deepxiv_hit,
    to_v1_hit,
)
from openxiv.service.errors import BadRequest
from openxiv.service.holder import IndexHolder
from openxiv.service.http.helpers import ERRORS, holder_of, json_response, settings_of
from openxiv.service.models import (
    QueryResult,
    SearchRequest,
    SearchResponse,
    V1SearchRequest,
    V1SearchResponse,
)
from openxiv.service.params import (
    TOP_K_MAX,
    FilterParams,
    Offset,
    TopK,
    check_mode,
    check_queries,
    check_work,
    clamp_top_k,
)

__all__ = [
    "deepxiv_search",
    "router",
    "search_deepxiv",
    "search_json",
    "unsupported_filters",
]

router = APIRouter()

UNAPPLIABLE = {"orgs": "affiliations", "min_citation": "citation counts"}
"""Filters the corpus has no data for -> what it lacks."""


def deepxiv_search(
    holder: IndexHolder,
    queries: list[str],
    *,
    top_k: int,
    offset: int,
    filters: SearchFilters,
    mode: str | None,
    contents: bool,
    batch: bool,
    settings: Settings,
    warnings: list[str] | None = None,
) -> tuple[SearchResponse, dict[str, float]]:
    """Run one query or a batch: the DeepXiv ``{status, total_count, result}`` model and the summed
    timings. Shared by the HTTP routes, the MCP server and ``openxiv search``.

    The request's time budget covers the whole batch: it is checked before every query (and inside
    each search), so a batch that runs late stops at once with a 503 instead of holding the worker."""
    check_work(queries, filters)
    deadline = deadline_for(settings)
    budget = settings.request_budget_s
    timings: dict[str, float] = {}
    per_query: list[QueryResult] = []
    with holder.acquire() as index:
        for i, q in enumerate(queries):
            check_deadline(deadline, budget, f"after {i} of {len(queries)} queries")
            out = run_search(
                index,
                q,
                top_k=top_k,
                offset=offset,
                filters=filters,
                mode=mode,
                contents=contents,
                deadline=deadline,
                budget=budget,
            )
            for k, v in out.timings_ms.items():
                timings[k] = timings.get(k, 0.0) + v
            hits = [to_deepxiv_hit(h, contents) for h in out.hits]
            per_query.append(QueryResult(query=q, total_count=out.total_count, result=hits))
    if batch:
        merged = merge_round_robin(per_query)
        response = SearchResponse(total_count=len(merged), result=merged[:top_k], results=per_query)
    else:
        only = per_query[0]
        response = SearchResponse(total_count=only.total_count, result=only.result)
    response.warnings = warnings or None
    return response, timings


def search_json(response: SearchResponse) -> str:
    """The response as ``POST /search`` sends it: ``results`` and ``warnings`` only when present."""
    exclude = {k for k in ("results", "warnings") if getattr(response, k) is None}
    return response.model_dump_json(exclude=exclude)


def search_deepxiv(holder: IndexHolder, queries: list[str], **kwargs: Any) -> Response:
    """`deepxiv_search` answered as JSON with a ``Server-Timing`` header."""
    response, timings = deepxiv_search(holder, queries, **kwargs)
    return json_response(search_json(response), timings)


SEARCH_DOC = """Search papers (the AutoResearchBench agent's and DeepXiv's request shape).

Body: `{"query": str | [str], "top_k": 10, "return_contents": true}` plus optional `offset`,
`categories`, `authors`, `date_search_type` + `date_str`, `date_from`/`date_to`, `venue`,
`venue_year`, `mode`. `top_k` above 100 is clamped and empty strings in a batch are skipped (both
said in `warnings`); `orgs` and `min_citation` are a 400 (the corpus has no affiliations or
citation counts). At most 500 queries × filter values per request; a request that runs past the
server's time budget is answered 503.

`total_count` is the number of papers the query matches after filters (at least one query word in
the title, abstract or a full-text passage; with `mode=dense` alone, every paper passing the
filters), the same on every page.

Response: `{"status": "success", "total_count": N, "result": [hit, ...]}`; each hit has `arxiv_id`,
`title`, `score`, `abstract`, `tldr`, `authors: [{name, orgs}]`, `url`, `date`, `citation_count`
(null), `categories` and, with `return_contents`, `contents: [{section_title, section_contents:
[evidence passage]}]`.

A list of queries is a batch: `results` holds `{query, total_count, result}` per query in order, and
`result` is their round-robin merge (best hit of each query in turn, de-duplicated, cut to `top_k`).
"""


def unsupported_filters(settings: Settings, **given: object) -> list[str]:
    """Warnings for filters the corpus has no data for, or a `BadRequest` unless lenient mode is on.

    Answering such a filter with unfiltered hits and a warning no client shows would be a lie: the
    DeepXiv SDK's agent prints "Filters: ..." above the list. Operators who prefer the old
    behaviour set ``OPENXIV_LENIENT_FILTERS=1``.
    """
    asked = [(name, what) for name, what in UNAPPLIABLE.items() if given.get(name)]
    if not asked:
        return []
    if not settings.lenient_filters:
        raise BadRequest(
            "; ".join(
                f"{name}: this corpus has no {what}, so it cannot filter by them" for name, what in asked
            )
            + " (leave the parameter out; an operator can set OPENXIV_LENIENT_FILTERS=1 to ignore it with a warning)"
        )
    return [f"{name} is not applied: the corpus has no {what}" for name, what in asked]


def lenient_batch(query: str | list[str], warnings: list[str]) -> str | list[str]:
    """A batch without its empty strings (noted in ``warnings``), unless nothing else is left."""
    if isinstance(query, str):
        return query
    empty = [i for i, q in enumerate(query) if not q.strip()]
    if not empty or len(empty) == len(query):
        return query
    warnings.append(f"query{empty}: empty {'query' if len(empty) == 1 else 'queries'} skipped")
    return [q for q in query if q.strip()]


def post_search(body: SearchRequest, request: Request) -> Response:
    """Lenient where the intent is clear (the AutoResearchBench client turns any 4xx into a silent
    empty list): ``top_k`` above the maximum is clamped, empty strings in a batch are skipped; both
    are said in ``warnings``. What cannot be repaired stays a 400."""
    settings = settings_of(request)
    warnings = unsupported_filters(settings, orgs=body.orgs, min_citation=body.min_citation)
    top_k = clamp_top_k(body.top_k, warnings)
    queries = check_queries(lenient_batch(body.query, warnings), settings.max_query_chars)
    filters = FilterParams.of(body).build()
    return search_deepxiv(
        holder_of(request),
        queries,
        top_k=top_k,
        offset=body.offset,
        filters=filters,
        mode=check_mode(body.mode, "mode"),
        contents=body.return_contents,
        batch=isinstance(body.query, list),
        warnings=warnings,
        settings=settings,
    )


for _path, _name in (("/search", "search"), ("/arxiv/retrieve", "arxiv_retrieve"), ("/", "root_search")):
    router.add_api_route(
        _path,
        post_search,
        methods=["POST"],
        name=_name,
        response_model=SearchResponse,
        responses=ERRORS,
        summary="Search (AutoResearchBench / DeepXiv POST shape)",
        description=SEARCH_DOC,
        tags=["DeepXiv-compatible"],
        include_in_schema=_path == "/search",
    )


# ------------------------------------------------------------------------------- v1
def _v1(request: Request, body: V1SearchRequest) -> Response:
    settings = settings_of(request)
    query = check_queries(body.query, settings.max_query_chars)[0]
    filters = FilterParams.of(body).build()
    mode = check_mode(body.mode, "mode")
    check_work([query], filters)
    holder = holder_of(request)
    with holder.acquire() as index:
        out = run_search(
            index,
            query,
            top_k=body.top_k,
            offset=body.offset,
            filters=filters,
            mode=mode,
            contents=body.return_contents,
            deadline=deadline_for(settings),
            budget=settings.request_budget_s,
        )
        snapshot = Path(index.path).name
    response = V1SearchResponse(
        query=query,
        total_count=out.total_count,
        offset=body.offset,
        top_k=body.top_k,
        hits=[to_v1_hit(h, body.offset + i + 1) for i, h in enumerate(out.hits)],
        timings_ms=out.timings_ms,
        snapshot=snapshot,
    )
    return json_response(response.model_dump_json(), out.timings_ms)


@router.post(
    "/v1/search", response_model=V1SearchResponse, responses=ERRORS, tags=["v1"], summary="Search papers"
)
def v1_search_post(body: V1SearchRequest, request: Request) -> Response:
    """Hybrid search; each hit carries its evidence passage, section and ranking signals."""
    return _v1(request, body)


@router.get(
    "/v1/search", response_model=V1SearchResponse, responses=ERRORS, tags=["v1"], summary="Search papers"
)
def v1_search_get(
    request: Request,
    q: Annotated[str, Query(description="The query.")],
    top_k: Annotated[TopK, Query(description=f"1-{TOP_K_MAX}.")] = 10,
    offset: Annotated[Offset, Query()] = 0,
    category: Annotated[list[str] | None, Query(description="Repeat or comma-separate.")] = None,
    author: Annotated[list[str] | None, Query(description="Repeat or comma-separate.")] = None,
    date_from: Annotated[str | None, Query(description="Inclusive, YYYY[-MM[-DD]].")] = None,
    date_to: Annotated[str | None, Query(description="Inclusive, YYYY[-MM[-DD]].")] = None,
    mode: Annotated[str | None, Query(description=mode_help())] = None,
    contents: Annotated[bool, Query(description="Add evidence passages.")] = True,
) -> Response:
    """Same as `POST /v1/search`, with query parameters."""
    body = V1SearchRequest.model_construct(
        query=q,
        top_k=top_k,
        offset=offset,
        categories=list(category or []),
        authors=list(author or []),
        date_from=date_from,
        date_to=date_to,
        mode=mode,
        return_contents=contents,
    )
    return _v1(request, body)
