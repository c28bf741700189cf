"""Passages as results and navigation over HTTP: ``/v1/passages``, ``/v1/facets``, ``/v1/match``,
``/v1/authors``, ``/v1/bibtex`` and ``/v1/papers/{id}/bibtex``, and the ``GET /arxiv/`` types of
`NAV_TYPES` (answered by `arxiv_passages` and `arxiv_nav` for `openxiv.service.http.routes_arxiv`).

Thin adapters over the use cases (`openxiv.service.passages`, `openxiv.service.navigation`,
`openxiv.service.bibtex`); they parse the query string into their arguments and send what the use
case answers.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

from openxiv.service.bibtex import MAX_BIBTEX_IDS, BibtexResponse, bibtex
from openxiv.service.errors import BadRequest
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
from openxiv.service.models import ErrorResponse
from openxiv.service.navigation import (
    TOP_AUTHORS_MAX,
    AuthorPapersResponse,
    FacetsResponse,
    TitleMatchResponse,
    author_view,
    facets,
    match_title,
)
from openxiv.service.params import FilterParams, split_list
from openxiv.service.passages import PassagesResponse, paper_id_list, passages
from openxiv.service.search_params import DEFAULT_TOP_K, MAX_FILTER_VALUES

__all__ = ["NAV_ERRORS", "NAV_TYPES", "PAPER_IDS_HELP", "arxiv_nav", "arxiv_passages", "router"]

router = APIRouter()

NAV_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    409: {"model": ErrorResponse, "description": "The back end does not serve this (Milvus)"},
}
NAV_TYPES = ("passages", "facets", "match", "author", "bibtex")
"""The ``GET /arxiv/`` types answered here."""
PAPER_IDS_HELP = f"Only passages of these papers (repeat or comma-separate, at most {MAX_FILTER_VALUES})."


def arxiv_passages(
    request: Request,
    query: str | None,
    top_k: int | None,
    offset: int,
    filters: FilterParams,
    paper_ids: list[str] | None,
) -> Response:
    """``GET /arxiv/?type=passages``: ``query``, ``top_k``/``offset``, the search filters, ``paper_ids``."""
    out = passages(
        holder_of(request),
        query or "",
        settings=settings_of(request),
        top_k=top_k if top_k is not None else DEFAULT_TOP_K,
        offset=offset,
        filters=filters.build(),
        paper_ids=paper_id_list(paper_ids),
    )
    return json_response(out.model_dump_json(), out.timings_ms)


@router.get(
    "/v1/passages",
    response_model=PassagesResponse,
    responses=NAV_ERRORS,
    tags=["v1"],
    summary="The top passages across papers for a query (not one per paper)",
)
def v1_passages(
    request: Request,
    q: Annotated[str, Query(description="The words the passages should hold.")],
    top_k: TopKQuery = DEFAULT_TOP_K,
    offset: OffsetQuery = 0,
    category: ListQuery = None,
    author: ListQuery = None,
    date_from: DateQuery = None,
    date_to: DateQuery = None,
    paper_ids: Annotated[list[str] | None, Query(description=PAPER_IDS_HELP)] = None,
) -> Response:
    """Full-text passages and abstracts ranked together by BM25 on one scale; each with its paper,
    section, offsets in the section's text and the query's words marked `**like this**`. The filters
    apply before the cut; every page is a slice of one ranking."""
    filters = FilterParams(categories=category, authors=author, date_from=date_from, date_to=date_to)
    return arxiv_passages(request, q, top_k, offset, filters, paper_ids)


@router.get(
    "/v1/facets",
    response_model=FacetsResponse,
    responses=NAV_ERRORS,
    tags=["v1"],
    summary="Counts by year, month, category and top authors of the papers a query matches",
)
def v1_facets(
    request: Request,
    q: Annotated[
        str | None, Query(description="The query; without it, every paper the filters keep.")
    ] = None,
    category: ListQuery = None,
    author: ListQuery = None,
    date_from: DateQuery = None,
    date_to: DateQuery = None,
    top_authors: Annotated[int, Query(description=f"Authors to list, 0-{TOP_AUTHORS_MAX}.")] = 10,
) -> Response:
    """The papers counted are those a search for `q` counts in `total_count` (a query word in their
    title + abstract or full text, after the filters). Counts are within this corpus snapshot."""
    filters = FilterParams(categories=category, authors=author, date_from=date_from, date_to=date_to)
    out = facets(
        holder_of(request), q, settings=settings_of(request), filters=filters.build(), top_authors=top_authors
    )
    return json_response(out.model_dump_json())


@router.get(
    "/v1/match",
    response_model=TitleMatchResponse,
    responses=NAV_ERRORS,
    tags=["v1"],
    summary="The paper of a pasted title, with a confidence",
)
def v1_match(request: Request, title: Annotated[str, Query(description="The title to look up.")]) -> Response:
    """`match` is the best candidate when its confidence (similarity of the folded titles, 1 for the
    same title) is at least 0.8; `candidates` lists what was compared, best first."""
    return json_response(
        match_title(holder_of(request), title, settings=settings_of(request)).model_dump_json()
    )


@router.get(
    "/v1/authors",
    response_model=AuthorPapersResponse,
    responses=NAV_ERRORS,
    tags=["v1"],
    summary="The papers of an author, under every spelling that folds to the name",
)
def v1_authors(
    request: Request,
    name: Annotated[str, Query(description="An author name; accents and case do not matter.")],
    top_k: TopKQuery = 20,
    offset: OffsetQuery = 0,
) -> Response:
    """Newest first; `matched` are the folded names the query matches (the `author` filter's rule),
    `spellings` how the papers print them."""
    out = author_view(holder_of(request), name, top_k=top_k, offset=offset)
    return json_response(out.model_dump_json())


@router.get(
    "/v1/bibtex",
    response_model=BibtexResponse,
    responses=NAV_ERRORS,
    tags=["v1"],
    summary="BibTeX entries of papers",
)
def v1_bibtex(
    request: Request,
    arxiv_id: Annotated[
        list[str], Query(description=f"Papers: repeat or comma-separate, at most {MAX_BIBTEX_IDS}.")
    ],
    format: Annotated[str, Query(description="json (default) or bibtex (the .bib text)")] = "json",
) -> Response:
    """One entry per paper, in the order asked; `format=bibtex` sends the .bib text itself."""
    return _bibtex(request, split_list(arxiv_id, "arxiv_id"), format)


@router.get(
    "/v1/papers/{arxiv_id:path}/bibtex",
    responses=NAV_ERRORS,
    tags=["v1"],
    summary="A paper's BibTeX entry (text)",
    response_class=PlainTextResponse,
)
def v1_paper_bibtex(request: Request, arxiv_id: str) -> Response:
    return _bibtex(request, (arxiv_id,), "bibtex")


def _bibtex(request: Request, ids: tuple[str, ...], form: str) -> Response:
    if form not in ("json", "bibtex"):
        raise BadRequest(f"format: {form!r} is not one of json, bibtex")
    out = bibtex(holder_of(request), ids)
    if form == "bibtex":
        return Response(content=out.text(), media_type="application/x-bibtex; charset=utf-8")
    return json_response(out.model_dump_json())


def arxiv_nav(
    request: Request,
    kind: str,
    query: str | None,
    arxiv_id: str | None,
    filters: FilterParams,
    top_k: int | None,
    offset: int,
) -> Response:
    """``GET /arxiv/?type=facets`` (``query`` and the filters), ``match`` (``query``: the title),
    ``author`` (``query``: the name; ``top_k``/``offset``) and ``bibtex`` (``arxiv_id``, comma-separated)."""
    holder, settings = holder_of(request), settings_of(request)
    if kind == "facets":
        out: BaseModel = facets(holder, query, settings=settings, filters=filters.build())
    elif kind == "match":
        out = match_title(holder, query, settings=settings, name="query")
    elif kind == "author":
        out = author_view(
            holder, query, top_k=top_k if top_k is not None else 20, offset=offset, param="query"
        )
    else:
        out = bibtex(holder, split_list(arxiv_id, "arxiv_id"))
    return json_response(out.model_dump_json())
