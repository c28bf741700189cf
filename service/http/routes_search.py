"""Search routes: the AutoResearchBench/DeepXiv ``POST /search`` (also at ``/arxiv/retrieve`` and ``/``)
and openxiv's own ``GET/POST /v1/search``.

The handlers parse on the event loop and call the event-loop use case (`openxiv.service.search_async`):
it computes in FastAPI's threadpool (its tokens are the compute slots, `serve_concurrency`), so query
encoding, BM25 and FAISS never block the event loop, and awaits a model server (query vectors,
rerank scores) on the event loop, holding no slot. Each request borrows the open snapshot once (see
`openxiv.service.holder`), so a reload in the middle of a request does not mix two snapshots.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from openxiv.service.http.helpers import (
    ERRORS,
    DateQuery,
    ListQuery,
    OffsetQuery,
    TopKQuery,
    holder_of,
    json_response,
    settings_of,
)
from openxiv.service.models import SearchRequest, SearchResponse, V1SearchRequest, V1SearchResponse
from openxiv.service.params import (
    MAX_QUERY_FILTER_WORK,
    FilterParams,
    check_mode,
    check_queries,
    check_sort,
    clamp_top_k,
    cut_long_queries,
    lenient_batch,
    unsupported_filters,
)
from openxiv.service.search import search_json, v1_json, v1_response
from openxiv.service.search_async import deepxiv_search_async, search_async
from openxiv.service.search_params import CITATION_SORT_DEPTH, DEFAULT_TOP_K, MODE, TOP_K_MAX
from openxiv.service.spec import SearchSpec

__all__ = ["router"]

router = APIRouter()

SEARCH_DOC = f"""Search papers (the AutoResearchBench agent's and DeepXiv's request shape).

Body: `{{"query": str | [str], "top_k": 10, "return_contents": true}}` plus optional `offset`,
`categories`, `authors`, `date_search_type` + `date_str`, `date_from`/`date_to`, `venue`,
`venue_year`, `min_citation`, `sort`, `mode`. `use_fine_rerank: true` reorders each query's first `OPENXIV_RERANK_DEPTH` papers with the
cross-encoder (below them the first stage's order; its time is `rerank` in the timings). `top_k` above {TOP_K_MAX} is clamped and empty strings in a batch are skipped (both
said in `warnings`); `orgs` is a 400 (the corpus has no affiliations). `min_citation: N` keeps
papers cited by at least N papers **of this corpus** (in-corpus counts, resolved at index build from
the bibliographies the corpus holds); `sort: "citations"` orders the {CITATION_SORT_DEPTH} best matches by that count.
At most {MAX_QUERY_FILTER_WORK} queries × filter values per request; a request that runs past the
server's time budget is answered 503.

`total_count` is the number of papers the query matches after filters (at least one query word in
the title, abstract or a full-text passage; with `mode=dense` alone, every paper passing the
filters), the same on every page.

Response: `{{"status": "success", "total_count": N, "result": [hit, ...]}}`; each hit has `arxiv_id`,
`title`, `score`, `abstract`, `tldr`, `authors: [{{name, orgs}}]`, `url`, `date`, `citation_count`
(in-corpus), `categories` and, with `return_contents`, `contents: [{{section_title, section_contents:
[evidence passage]}}]`.

A list of queries is a batch: `results` holds `{{query, total_count, result}}` per query in order, and
`result` is their round-robin merge (best hit of each query in turn, de-duplicated, cut to `top_k`).
"""


async def post_search(body: SearchRequest, request: Request) -> Response:
    """Lenient where the intent is clear (the AutoResearchBench client turns any 4xx into a silent
    empty list): ``top_k`` above the maximum is clamped, ``null`` is the default (10), a query over
    the length limit is cut to it, empty strings in a batch are skipped; all are said in
    ``warnings``. What DeepXiv refuses too (``top_k`` below 1) or what cannot be repaired stays a 400."""
    settings = settings_of(request)
    warnings = unsupported_filters(settings, orgs=body.orgs)
    top_k = clamp_top_k(body.top_k if body.top_k is not None else DEFAULT_TOP_K, warnings)
    asked = cut_long_queries(lenient_batch(body.query, warnings), settings.max_query_chars, warnings)
    queries = check_queries(asked, settings.max_query_chars)
    spec = SearchSpec(
        queries=tuple(queries),
        top_k=top_k,
        offset=body.offset,
        filters=FilterParams.of(body).build(),
        mode=check_mode(body.mode, "mode"),
        contents=body.return_contents,
        batch=isinstance(body.query, list),
        fine_rerank=bool(body.use_fine_rerank),
        sort=check_sort(body.sort),
    )
    response, timings = await deepxiv_search_async(
        holder_of(request), spec, settings=settings, warnings=warnings
    )
    return json_response(search_json(response), timings)


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
async def _v1(request: Request, body: V1SearchRequest) -> Response:
    settings = settings_of(request)
    query = check_queries(body.query, settings.max_query_chars)[0]
    spec = SearchSpec(
        queries=(query,),
        top_k=body.top_k,
        offset=body.offset,
        filters=FilterParams.of(body).build(),
        mode=check_mode(body.mode, "mode"),
        contents=body.return_contents,
        sort=check_sort(body.sort),
    )
    out = await search_async(holder_of(request), spec, settings=settings)
    return json_response(v1_json(v1_response(out, body.offset, body.top_k)), out.timings_ms)


@router.post(
    "/v1/search", response_model=V1SearchResponse, responses=ERRORS, tags=["v1"], summary="Search papers"
)
async def v1_search_post(body: V1SearchRequest, request: Request) -> Response:
    """Hybrid search; each hit carries its evidence passage, section and ranking signals."""
    return await _v1(request, body)


@router.get(
    "/v1/search", response_model=V1SearchResponse, responses=ERRORS, tags=["v1"], summary="Search papers"
)
async def v1_search_get(
    request: Request,
    q: Annotated[str, Query(description="The query.")],
    top_k: TopKQuery = DEFAULT_TOP_K,
    offset: OffsetQuery = 0,
    category: ListQuery = None,
    author: ListQuery = None,
    date_from: DateQuery = None,
    date_to: DateQuery = None,
    mode: Annotated[str | None, Query(description=MODE.v1)] = None,
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
    return await _v1(request, body)
