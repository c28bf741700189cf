"""The Semantic Scholar-compatible routes: ``/graph/v1/...`` and ``/recommendations/v1/...``.

Mounted under S2's own paths, so a client's base URL is the only change (``SemanticScholar(
api_url="http://127.0.0.1:8000")``). The answers are S2's shapes (`openxiv.service.s2compat.api`);
errors are S2's too: ``{"error": "..."}`` with 400 for a bad parameter (naming it), 404 for an
unknown paper (``Paper with id X not found``) or title, and the service's other statuses (409, 503)
with the same body. Query parameters are read as text and checked by the use case, so a malformed
number is that 400 too, never the service's own validation shape.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from openxiv.service.errors import ApiError, BadRequest
from openxiv.service.http.helpers import holder_of, settings_of
from openxiv.service.s2compat import api

__all__ = ["GRAPH", "RECOMMENDATIONS", "router"]

GRAPH = "/graph/v1"
RECOMMENDATIONS = "/recommendations/v1"
router = APIRouter(tags=["Semantic Scholar-compatible"])


def _params(request: Request) -> dict[str, str | None]:
    """The query string, one value per name (the last, as S2 reads a repeated one)."""
    return {k: v for k, v in request.query_params.items()}


async def _answer(work: Callable[[], Any]) -> Response:
    """``work()``'s JSON in a worker thread, an `ApiError` as S2's ``{"error": ...}``."""
    try:
        body = await run_in_threadpool(work)
    except ApiError as exc:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
    return Response(content=json.dumps(body, ensure_ascii=False), media_type="application/json")


async def _json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = json.loads(raw or b"{}")
    except ValueError as exc:
        raise BadRequest(f"request body: not valid JSON ({exc})") from exc
    if not isinstance(body, dict):
        raise BadRequest("request body: a JSON object")
    return body


@router.get(f"{GRAPH}/paper/search", summary="S2 paper relevance search")
async def s2_search(request: Request) -> Response:
    params = _params(request)
    try:  # a model server's query vector is awaited outside the compute slots
        body = await api.search_async(holder_of(request), settings_of(request), params)
    except ApiError as exc:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
    return Response(content=json.dumps(body, ensure_ascii=False), media_type="application/json")


@router.get(f"{GRAPH}/paper/search/match", summary="S2 paper title search (the best match)")
async def s2_match(request: Request) -> Response:
    params = _params(request)
    return await _answer(lambda: api.match(holder_of(request), settings_of(request), params))


@router.post(f"{GRAPH}/paper/batch", summary="S2 papers by id (up to 500)")
async def s2_batch(request: Request) -> Response:
    try:
        body = await _json_body(request)
    except ApiError as exc:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
    fields = request.query_params.get("fields")
    return await _answer(lambda: api.papers(holder_of(request), body.get("ids"), fields, batch=True))


@router.get(f"{GRAPH}/snippet/search", summary="S2 snippet search (the top passages)")
async def s2_snippets(request: Request) -> Response:
    params = _params(request)
    return await _answer(lambda: api.snippets(holder_of(request), settings_of(request), params))


@router.get(f"{GRAPH}/paper/{{paper_id:path}}", summary="S2 paper details, references and citations")
async def s2_paper(request: Request, paper_id: str) -> Response:
    """``paper/{id}``, ``paper/{id}/references`` and ``paper/{id}/citations`` (one route: an old-style
    arXiv id has a slash, ``paper/hep-th/9901001/references``)."""
    params = _params(request)
    holder = holder_of(request)
    head, _, tail = paper_id.rpartition("/")
    if head and tail in ("references", "citations"):
        return await _answer(lambda: api.edges(holder, head, tail, params))
    return await _answer(lambda: api.papers(holder, [paper_id], params.get("fields"), batch=False))


@router.get(
    f"{RECOMMENDATIONS}/papers/forpaper/{{paper_id:path}}", summary="S2 recommendations for one paper"
)
async def s2_recommend_one(request: Request, paper_id: str) -> Response:
    params = _params(request)
    return await _answer(
        lambda: api.recommend(holder_of(request), settings_of(request), [paper_id], None, params)
    )


@router.post(f"{RECOMMENDATIONS}/papers/", summary="S2 recommendations from positive and negative papers")
@router.post(f"{RECOMMENDATIONS}/papers", include_in_schema=False)
async def s2_recommend(request: Request) -> Response:
    try:
        body = await _json_body(request)
    except ApiError as exc:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
    params = _params(request)
    positive, negative = body.get("positivePaperIds"), body.get("negativePaperIds")
    return await _answer(
        lambda: api.recommend(holder_of(request), settings_of(request), positive, negative, params)
    )
