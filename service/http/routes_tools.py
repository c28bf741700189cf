"""Paper tools over HTTP: similar papers and find in a paper.

``GET /arxiv/?type=similar|find`` (answered here for `openxiv.service.http.routes_arxiv`, which
parses the DeepXiv parameters) and their ``/v1`` routes: ``GET /v1/similar`` (the ``/v1/search``
shape) and ``GET /v1/find``. The logic is the use cases' (`openxiv.service.similar`,
`openxiv.service.find`); these are thin adapters. Similar papers are answered on the event loop
(`openxiv.service.similar.similar_async`), so a facet's wait on a model server holds no compute slot.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from openxiv.service.errors import BadRequest
from openxiv.service.find import FIND_TOP_K, FIND_TOP_K_MAX, find
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
from openxiv.service.models import ErrorResponse, V1SearchResponse
from openxiv.service.params import FilterParams
from openxiv.service.search import search_json, v1_json, v1_response
from openxiv.service.search_params import DEFAULT_TOP_K
from openxiv.service.similar import (
    FACETS,
    MAX_SEEDS,
    check_facet,
    negative_ids,
    seed_ids,
    similar_async,
    similar_response,
)
from openxiv.service.tool_models import FindResponse

__all__ = ["TOOL_ERRORS", "TOOL_TYPES", "arxiv_find", "arxiv_similar", "router"]

router = APIRouter()

TOOL_TYPES = ("similar", "find")
FACET_HELP = f"Similar in this respect only: {' | '.join(FACETS)} (the seeds' sentences of that kind)."
NEGATIVE_HELP = (
    f"Papers ruled out (repeat or comma-separate, at most {MAX_SEEDS}): ranked away from, left out."
)
_ruled_out = negative_ids
"""The ``GET /arxiv/`` types answered here."""
TOOL_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    409: {"model": ErrorResponse, "description": "The snapshot has no paper vectors (similar papers)"},
}


def arxiv_find(request: Request, arxiv_id: str | None, query: str | None, top_k: int | None) -> Response:
    """``type=find`` (``arxiv_id`` and ``query``, ``top_k`` passages, 3 by default), computed in a
    worker thread (a compute slot)."""
    settings = settings_of(request)
    if not arxiv_id or not arxiv_id.strip():
        raise BadRequest("arxiv_id: required for type=find (one arXiv id)")
    out = find(
        holder_of(request),
        arxiv_id,
        query or "",
        max_query_chars=settings.max_query_chars,
        top_k=top_k if top_k is not None else FIND_TOP_K,
    )
    return json_response(out.model_dump_json())


async def arxiv_similar(
    request: Request,
    arxiv_id: str | None,
    top_k: int | None,
    offset: int,
    filters: FilterParams,
    facet: str | None = None,
    negatives: list[str] | None = None,
) -> Response:
    """``type=similar``: seeds ``arxiv_id`` (comma-separated for several), the search filters,
    ``top_k``/``offset``, ``facet``, ``negative_ids`` (`similar_async`: a model server awaited
    outside the compute slots)."""
    seeds = seed_ids(arxiv_id)
    found = await similar_async(
        holder_of(request),
        seeds,
        settings=settings_of(request),
        top_k=top_k if top_k is not None else DEFAULT_TOP_K,
        offset=offset,
        filters=filters.build(),
        facet=check_facet(facet),
        negatives=negative_ids(negatives, seeds),
    )
    return json_response(search_json(similar_response(found)), found.timings_ms)


@router.get(
    "/v1/similar",
    response_model=V1SearchResponse,
    responses=TOOL_ERRORS,
    tags=["v1"],
    summary="Papers similar to one or more seed papers",
)
async def v1_similar(
    request: Request,
    arxiv_id: Annotated[
        list[str], Query(description=f"Seed paper(s): repeat or comma-separate, at most {MAX_SEEDS}.")
    ],
    top_k: TopKQuery = DEFAULT_TOP_K,
    offset: OffsetQuery = 0,
    category: ListQuery = None,
    author: ListQuery = None,
    date_from: DateQuery = None,
    date_to: DateQuery = None,
    facet: Annotated[str | None, Query(description=FACET_HELP)] = None,
    negative_ids: Annotated[list[str] | None, Query(description=NEGATIVE_HELP)] = None,
) -> Response:
    """Ranked by the seeds' own stored paper vectors (their mean for several), the seeds left out,
    the filters applied before the cut; ``facet`` leans to the seeds' sentences of that kind,
    ``negative_ids`` push away from papers ruled out. 409 when the snapshot was built without paper
    vectors. A model server (a facet's vector) is awaited outside the compute slots."""
    filters = FilterParams(categories=category, authors=author, date_from=date_from, date_to=date_to)
    seeds = seed_ids(arxiv_id)
    out = await similar_async(
        holder_of(request),
        seeds,
        settings=settings_of(request),
        top_k=top_k,
        offset=offset,
        filters=filters.build(),
        facet=check_facet(facet),
        negatives=_ruled_out(negative_ids, seeds),
    )
    return json_response(v1_json(v1_response(out, offset, top_k)), out.timings_ms)


@router.get(
    "/v1/find",
    response_model=FindResponse,
    responses=ERRORS,
    tags=["v1"],
    summary="The passages of one paper that best match a query",
)
def v1_find(
    request: Request,
    arxiv_id: Annotated[str, Query(description="The paper, any id spelling.")],
    q: Annotated[str, Query(description="What to find in it, in words.")],
    top_k: Annotated[int, Query(ge=1, le=FIND_TOP_K_MAX, description="Passages to show.")] = FIND_TOP_K,
) -> Response:
    """Full-text passages (with their section) when the paper has a full text, else its abstract's
    sentences; ranked by BM25 within the paper, query words marked `**like this**`."""
    out = find(
        holder_of(request), arxiv_id, q, max_query_chars=settings_of(request).max_query_chars, top_k=top_k
    )
    return json_response(out.model_dump_json())
