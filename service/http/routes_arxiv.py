"""``GET /arxiv/``: the DeepXiv paper endpoint as the ``deepxiv-sdk`` ``Reader`` calls it.

``type`` selects the operation: ``retrieve`` (search), ``head``, ``brief``, ``section``, ``raw``,
``preview`` or ``json``. List parameters accept repeated keys (``categories=cs.CL&categories=cs.CV``,
what ``requests`` sends) and comma-separated values (``categories=cs.CL,cs.CV``). ``token`` is
accepted and ignored unless the server has an API token (then it is checked by the auth middleware).
Without ``type``, a request with ``query`` is a search and one with ``arxiv_id`` is a ``head``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from openxiv.service.errors import BadRequest, NotImplementedHere
from openxiv.service.http.helpers import holder_of, json_response, settings_of
from openxiv.service.http.routes_nav import NAV_TYPES, PAPER_IDS_HELP, arxiv_nav, arxiv_passages
from openxiv.service.http.routes_tools import (
    FACET_HELP,
    NEGATIVE_HELP,
    TOOL_ERRORS,
    TOOL_TYPES,
    arxiv_find,
    arxiv_similar,
)
from openxiv.service.http.routes_unserved import unserved_detail
from openxiv.service.models import (
    BriefResponse,
    HeadResponse,
    PaperJson,
    PreviewResponse,
    RawResponse,
    SearchResponse,
    SectionResponse,
)
from openxiv.service.params import (
    FilterParams,
    check_mode,
    check_queries,
    check_size,
    check_sort,
    cut_long_queries,
    unsupported_filters,
)
from openxiv.service.passages import PassagesResponse
from openxiv.service.reading import KINDS, PREVIEW_CHARS, read
from openxiv.service.references import REF_KINDS, CitedByResponse, ReferencesResponse, reference_op
from openxiv.service.search import search_json
from openxiv.service.search_async import deepxiv_search_async
from openxiv.service.search_params import (
    CITATION_SORT_DEPTH,
    DATE_SEARCH_TYPE,
    DATE_STR,
    DEFAULT_TOP_K,
    FINE_RERANK,
    MIN_CITATION,
    MODE,
    OFFSET_MAX,
    ORGS,
    SORT,
    TOP_K,
    TOP_K_MAX,
    VENUE,
    VENUE_YEAR,
    Offset,
    TopK,
)
from openxiv.service.spec import SearchSpec
from openxiv.service.tool_models import FindResponse

__all__ = ["TYPES", "router"]

router = APIRouter()

TYPES = ("retrieve", *KINDS, *REF_KINDS, *TOOL_TYPES, *NAV_TYPES)

DOC = f"""DeepXiv paper API. `type` is one of {", ".join(TYPES)}.

- `retrieve`: `query`, `top_k` (or `size`) 1-{TOP_K_MAX}, `offset` 0-{OFFSET_MAX}, `categories`, `authors`,
  `date_search_type` (between|exact|after|before) with `date_str` (YYYY, YYYY-MM, YYYY-MM-DD; two
  values for between), `return_contents` (default false) -> `{{status, total_count, result}}`.
- `head`: `arxiv_id` -> title, title_source, abstract, authors, categories, subject_classes,
  publish_at, token_count, `sections: [{{name, idx, tldr, token_count}}]` (the abstract first, idx -1).
- `brief`: `arxiv_id` -> title, tldr, keywords, publish_at, citations, src_url, github_url.
- `section`: `arxiv_id`, `section` (printed number like 3.2, name case-insensitive, Abstract, or `idx:N` for the 0-based position)
  -> `{{content}}`.
- `raw`: `arxiv_id` -> `{{raw}}` (markdown). `preview`: first `characters` (10,000) characters
  -> `{{content, is_truncated, total_characters}}`. `json`: everything the corpus holds.
- `references`: `arxiv_id` -> the paper's bibliography, each entry with its arXiv id, `in_corpus`, the
  title of a paper in the corpus and the printed text; `cited_by`: `arxiv_id` -> the corpus papers
  whose bibliography cites it. Bibliographies come from unArXive inputs, plain texts and PDFs, each
  entry resolved to a corpus paper by arXiv id, DOI or title and year at index build, with its
  citing sentence (`context`); a snapshot built before references were stored is a 409.
- `passages`: `query`, `top_k`, `offset`, the filters of `retrieve`, `paper_ids` (only these papers)
  -> the top passages across papers (`GET /v1/passages`), each with its paper, section, offsets and
  the query's words marked.
- `facets`: `query` (optional) and the filters -> counts by year, month, category and top authors
  of the papers it matches (within this corpus). `match`: `query` = a pasted title -> the best paper
  with a confidence. `author`: `query` = an author name -> their papers, newest first, every folded
  spelling. `bibtex`: `arxiv_id` (comma-separated for several) -> BibTeX entries.

`venue` (a phrase of the paper's journal reference) and `venue_year` (a year in it) filter like
`authors`. `token` and `source=arxiv` are accepted; `use_fine_rerank=true` reorders the first
`OPENXIV_RERANK_DEPTH` papers with the cross-encoder (as `POST /search`); `source=biorxiv|medrxiv` is
501 (not served). `orgs` is a 400: the corpus has no affiliations (`OPENXIV_LENIENT_FILTERS=1`
ignores it with a warning instead). `min_citation=N` keeps papers cited by at least N papers **of
this corpus** (in-corpus counts, resolved at index build); `sort=citations` orders the {CITATION_SORT_DEPTH} best
matches by that count (ties by relevance).
"""


@router.get(
    "/arxiv/",
    responses={
        **TOOL_ERRORS,
        200: {
            "description": "Depends on `type`",
            "content": {"application/json": {}},
            "model": SearchResponse
            | HeadResponse
            | BriefResponse
            | SectionResponse
            | RawResponse
            | PreviewResponse
            | PaperJson
            | ReferencesResponse
            | CitedByResponse
            | FindResponse
            | PassagesResponse,
        },
    },
    tags=["DeepXiv-compatible"],
    summary="DeepXiv paper API (search, head, brief, section, raw, preview, json, references, cited_by, similar, find, passages, facets, match, author, bibtex)",
    description=DOC,
)
async def arxiv(
    request: Request,
    type: Annotated[str | None, Query(description=" | ".join(TYPES))] = None,
    arxiv_id: Annotated[
        str | None, Query(description="Any spelling: 2501.00001, arXiv:2501.00001v2, hep-th/9901001")
    ] = None,
    query: Annotated[str | None, Query()] = None,
    top_k: Annotated[TopK | None, Query(description=TOP_K.arxiv)] = None,
    size: Annotated[int | None, Query(description="Alias of top_k")] = None,
    offset: Annotated[Offset, Query()] = 0,
    categories: Annotated[list[str] | None, Query()] = None,
    authors: Annotated[list[str] | None, Query()] = None,
    date_search_type: Annotated[str | None, Query(description=DATE_SEARCH_TYPE.arxiv)] = None,
    date_str: Annotated[list[str] | None, Query(description=DATE_STR.arxiv)] = None,
    date_from: Annotated[str | None, Query()] = None,
    date_to: Annotated[str | None, Query()] = None,
    source: Annotated[str | None, Query(description="Only `arxiv` is served")] = None,
    search_mode: Annotated[str | None, Query(description="Legacy name of `mode` (same values)")] = None,
    mode: Annotated[str | None, Query(description=MODE.arxiv)] = None,
    return_contents: Annotated[bool, Query(description="Add evidence passages to search hits")] = False,
    section: Annotated[str | None, Query()] = None,
    characters: Annotated[int, Query(ge=1, le=1_000_000, description="preview length")] = PREVIEW_CHARS,
    use_fine_rerank: Annotated[bool | None, Query(description=FINE_RERANK.arxiv)] = None,
    token: Annotated[
        str | None, Query(description="Accepted; checked only when the server has a token")
    ] = None,
    orgs: Annotated[list[str] | None, Query(description=ORGS.arxiv)] = None,
    min_citation: Annotated[int | None, Query(ge=0, description=MIN_CITATION.arxiv)] = None,
    sort: Annotated[str | None, Query(description=SORT.arxiv)] = None,
    venue: Annotated[list[str] | None, Query(description=VENUE.arxiv)] = None,
    venue_year: Annotated[int | None, Query(description=VENUE_YEAR.arxiv)] = None,
    facet: Annotated[str | None, Query(description="type=similar: " + FACET_HELP)] = None,
    negative_ids: Annotated[list[str] | None, Query(description="type=similar: " + NEGATIVE_HELP)] = None,
    paper_ids: Annotated[list[str] | None, Query(description="type=passages: " + PAPER_IDS_HELP)] = None,
) -> Response:
    kind = (
        (type or ("retrieve" if query is not None else "head" if arxiv_id is not None else ""))
        .strip()
        .lower()
    )
    if kind not in TYPES:
        raise BadRequest(f"type: {type!r} is not one of {', '.join(TYPES)}" if type else "type: required")
    filters = FilterParams(
        categories=categories,
        authors=authors,
        date_search_type=date_search_type,
        date_str=date_str,
        date_from=date_from,
        date_to=date_to,
        venue=venue,
        venue_year=venue_year,
        min_citation=min_citation,
    )
    if kind != "similar" and (facet is not None or negative_ids is not None):
        raise BadRequest(f"{'facet' if facet is not None else 'negative_ids'}: only for type=similar")
    if kind != "passages" and paper_ids is not None:
        raise BadRequest("paper_ids: only for type=passages")
    if kind == "passages":
        return arxiv_passages(request, query, top_k, offset, filters, paper_ids)
    if kind in NAV_TYPES:
        return arxiv_nav(request, kind, query, arxiv_id, filters, top_k, offset)
    if kind == "similar":
        return await arxiv_similar(request, arxiv_id, top_k, offset, filters, facet, negative_ids)
    if kind == "find":
        return await run_in_threadpool(arxiv_find, request, arxiv_id, query, top_k)
    if kind != "retrieve":
        if arxiv_id is None or not arxiv_id.strip():
            raise BadRequest(f"arxiv_id: required for type={kind}")
        return await run_in_threadpool(_paper, request, kind, arxiv_id, section, characters)

    if query is None:
        raise BadRequest("query: required for type=retrieve")
    _check_source(source)
    return await _retrieve(
        request,
        query,
        filters,
        top_k=top_k,
        size=size,
        offset=offset,
        mode=mode,
        search_mode=search_mode,
        unappliable={"orgs": orgs},
        contents=return_contents,
        fine_rerank=use_fine_rerank,
        sort=sort,
    )


def _paper(request: Request, kind: str, arxiv_id: str, section: str | None, characters: int) -> Response:
    """A reading or reference ``type`` of one paper, computed in a worker thread (a compute slot)."""
    if kind in REF_KINDS:
        return json_response(reference_op(holder_of(request), kind, arxiv_id).model_dump_json())
    return json_response(read(holder_of(request), kind, arxiv_id, section, characters).model_dump_json())


def _check_source(source: str | None) -> None:
    """Only arXiv is served: bioRxiv and medRxiv are a 501 (DeepXiv has them), anything else a 400."""
    if source and source.strip().lower() in ("biorxiv", "medrxiv"):
        raise NotImplementedHere(unserved_detail(f"{source.strip()} search (source={source.strip()})"))
    if source and source.strip().lower() != "arxiv":
        raise BadRequest(f"source: {source!r} is not served here; this corpus is arXiv only")


async def _retrieve(
    request: Request,
    query: str,
    filters: FilterParams,
    *,
    top_k: int | None,
    size: int | None,
    offset: int,
    mode: str | None,
    search_mode: str | None,
    unappliable: dict[str, object],
    contents: bool,
    fine_rerank: bool | None = None,
    sort: str | None = None,
) -> Response:
    """``type=retrieve``: the parameters checked in order, then the search as ``POST /search``
    (`deepxiv_search_async`: a model server awaited outside the compute slots)."""
    n = top_k if top_k is not None else check_size(size) if size is not None else DEFAULT_TOP_K
    legacy = check_mode(search_mode, "search_mode")
    ranking = check_mode(mode, "mode") if mode else legacy
    settings = settings_of(request)
    warnings = unsupported_filters(settings, **unappliable)
    built = filters.build()
    queries = check_queries(
        cut_long_queries(query, settings.max_query_chars, warnings), settings.max_query_chars
    )
    spec = SearchSpec(
        queries=tuple(queries),
        top_k=n,
        offset=offset,
        filters=built,
        mode=ranking,
        contents=contents,
        fine_rerank=bool(fine_rerank),
        sort=check_sort(sort),
    )
    response, timings = await deepxiv_search_async(
        holder_of(request), spec, settings=settings, warnings=warnings
    )
    return json_response(search_json(response), timings)


router.add_api_route("/arxiv", arxiv, methods=["GET"], include_in_schema=False)
