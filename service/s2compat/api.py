"""The Semantic Scholar-compatible use cases: each answers one S2 call with S2's JSON shape.

Each runs the service's own use case and renders its papers with `openxiv.service.s2compat.fields`:

- `search` (``paper/search``): the search use case (`openxiv.service.search.run_search`, the
  configured ranking) with S2's filters mapped to the search filters (``year``,
  ``publicationDateOrYear``, ``venue``, ``fieldsOfStudy`` -> arXiv archives); ``{total, offset, next,
  data}``;
- `match` (``paper/search/match``): `openxiv.service.navigation.match_title`; ``{data: [paper +
  matchScore]}``, not found (404) under the match confidence;
- `papers` (``paper/{id}``, ``paper/batch``): the papers by id, ``null`` for an unknown id in a batch;
- `edges` (``paper/{id}/references`` and ``/citations``): `openxiv.service.references` (the
  bibliographies this snapshot holds), ``{offset, next, data: [{citedPaper|citingPaper, ...}]}``;
- `recommend` (``recommendations``): `openxiv.service.similar` with positive and negative seeds;
- `snippets` (``snippet/search``): `openxiv.service.passages`.

A bad parameter is a `BadRequest` naming it, an unknown paper a `NotFound` with S2's wording; the
HTTP front sends both as ``{"error": "..."}``. Under a tagged question's date ceiling (``--cutoffs``)
a later paper is an unknown one: `_view`, which renders every paper these calls return, leaves it out
(and the later citing papers out of counts and lists), each counted as the call's leak.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import fields as dataclass_fields
from dataclasses import replace
from typing import Any

import anyio.to_thread

from openxiv.corpus.records import Paper
from openxiv.corpus.settings.model import Settings
from openxiv.indexer.backend import PaperHit
from openxiv.indexer.snapshot import OpenIndex
from openxiv.indexer.tables.references import ReferenceTable
from openxiv.service import references as refs
from openxiv.service.citations import citation_counts
from openxiv.service.errors import BadRequest, Conflict, NotFound
from openxiv.service.experiments.context import beyond_cutoff, within_cutoff
from openxiv.service.holder import IndexHolder
from openxiv.service.hydration import hydrate
from openxiv.service.navigation import match_title
from openxiv.service.params import OFFSET_MAX, TOP_K_MAX, FilterParams, check_queries, check_range
from openxiv.service.passages import passages
from openxiv.service.s2compat.fields import Fields, PaperView, outside, parse_fields
from openxiv.service.s2compat.ids import UnknownId, arxiv_of, corpus_id
from openxiv.service.search import deadline_for, run_search
from openxiv.service.search_async import prefetch_query_vectors
from openxiv.service.similar import similar
from openxiv.service.spec import SearchSpec

__all__ = ["MAX_BATCH", "edges", "filters_of", "match", "papers", "recommend", "search", "snippets"]

MAX_BATCH = 500
"""Ids one ``paper/batch`` may ask (S2's limit)."""
_ARCHIVES = {
    "computer science": ("cs",),
    "mathematics": ("math", "stat"),
    "physics": (
        "physics", "astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math-ph",
        "nlin", "nucl-ex", "nucl-th", "quant-ph",
    ),
    "biology": ("q-bio",),
    "economics": ("econ", "q-fin"),
    "engineering": ("eess",),
}  # fmt: skip


_YEARS = re.compile(r"\d{4}|\d{4}-|-\d{4}|\d{4}-\d{4}")
_DAY = r"\d{4}(?:-\d{2}(?:-\d{2})?)?"
_SPAN = re.compile(rf"(?:{_DAY})?(?::(?:{_DAY})?)?")


def _not_found(paper_id: str) -> NotFound:
    return NotFound(f"Paper with id {paper_id} not found")


def _id(paper_id: str) -> str:
    try:
        return arxiv_of(paper_id)
    except UnknownId as exc:
        raise _not_found(paper_id) from exc


def _view(index: OpenIndex, ids: Sequence[str], fields: Fields) -> tuple[dict[str, Paper], PaperView]:
    """The papers ``ids`` (titled, the unknown left out) and the view rendering them on ``index``."""
    hits = hydrate(index, "", [PaperHit(a, 0.0) for a in dict.fromkeys(ids)], contents=False)
    found = within_cutoff({h.paper.arxiv_id: h.paper for h in hits})  # a tagged question's ceiling
    tldrs = {h.paper.arxiv_id: h.tldr for h in hits}
    table = None
    if {"referenceCount", "citationCount", "references", "citations"} & set(fields.top):
        try:
            table = refs.table_of(index)
        except Conflict:  # a snapshot without references: counts and lists are null
            table = None

    def titles(wanted: list[str]) -> dict[str, Paper]:
        hydrated = hydrate(index, "", [PaperHit(a, 0.0) for a in wanted], False)
        return within_cutoff({h.paper.arxiv_id: h.paper for h in hydrated})

    view = PaperView(
        tldr=lambda a: tldrs.get(a),
        references=(lambda a: table.references(a) or []) if table is not None else (lambda _: None),
        cited_by=_citing(index, table),
        titles=titles,
        # snapshots that keep counts (issue 41 item 1), held to a tagged question's ceiling
        citation_count=lambda a: citation_counts(index, [a])[a],
    )
    return found, view


def _citing(index: OpenIndex, table: ReferenceTable | None) -> Callable[[str], list[str] | None]:
    """The corpus papers citing a paper (``None``: no references table), only those on or before a
    tagged question's ceiling (`refs.before_cutoff`: the later ones counted as leaks)."""
    if table is None:
        return lambda _: None
    return lambda a: refs.before_cutoff(index, table.cited_by(a))


def _int(value: str | int | None, name: str, default: int, low: int, high: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError) as exc:
        raise BadRequest(f"{name}: must be an integer, got {value!r}") from exc
    return check_range(number, name, low, high)


def filters_of(params: dict[str, str | None], settings: Settings) -> FilterParams:
    """S2's filter parameters as the search's (`FilterParams`); a `BadRequest` naming one that cannot
    be applied to this corpus."""
    date_from = date_to = None
    year = (params.get("year") or "").strip()
    if year:
        if not _YEARS.fullmatch(year):
            raise BadRequest(f"year: {year!r} is not YYYY, YYYY-YYYY, YYYY- or -YYYY")
        lo, sep, hi = year.partition("-")
        date_from, date_to = (lo or None, hi or None) if sep else (lo, lo)
    span = (params.get("publicationDateOrYear") or "").strip()
    if span:
        if not _SPAN.fullmatch(span):
            raise BadRequest(f"publicationDateOrYear: {span!r} is not <start>:<end> (YYYY[-MM[-DD]] each)")
        lo, sep, hi = span.partition(":")
        date_from, date_to = (lo or None, hi or None) if sep else (lo, lo)
    cats: list[str] = []
    for f in [f.strip() for f in (params.get("fieldsOfStudy") or "").split(",") if f.strip()]:
        if f.lower() not in _ARCHIVES:
            names = ", ".join(n.title() for n in _ARCHIVES)
            raise BadRequest(f"fieldsOfStudy: {f!r} is not served here (this corpus has {names})")
        cats += _ARCHIVES[f.lower()]
    if params.get("publicationTypes"):
        raise BadRequest("publicationTypes: this corpus does not record publication types")
    extra: dict[str, Any] = {}
    minimum = params.get("minCitationCount")
    if minimum:
        if "min_citation" not in {f.name for f in dataclass_fields(FilterParams)}:
            raise BadRequest("minCitationCount: this snapshot has no citation counts to filter by")
        extra["min_citation"] = _int(minimum, "minCitationCount", 0, 0, 10**9)
    return FilterParams(
        categories=cats or None,
        date_from=date_from,
        date_to=date_to,
        venue=[v for v in (params.get("venue") or "").split(",") if v.strip()] or None,
        **extra,
    )


def search(holder: IndexHolder, settings: Settings, params: dict[str, str | None]) -> dict[str, Any]:
    """``paper/search``: ``query``, ``offset``, ``limit`` (1-100), ``fields`` and the filters."""
    spec, fields = _search_spec(settings, params)
    with holder.acquire() as index:
        return _search_on(index, spec, fields, settings)


async def search_async(
    holder: IndexHolder, settings: Settings, params: dict[str, str | None]
) -> dict[str, Any]:
    """`search` on the event loop: a model server's query vector awaited outside the compute slots
    (`openxiv.service.search_async.prefetch_query_vectors`), the search in a worker thread."""
    spec, fields = _search_spec(settings, params)
    with holder.acquire() as index:
        await prefetch_query_vectors(index, spec.queries, spec.mode, settings)
        return await anyio.to_thread.run_sync(_search_on, index, spec, fields, settings)


def _search_spec(settings: Settings, params: dict[str, str | None]) -> tuple[SearchSpec, Fields]:
    query = params.get("query")
    if query is None or not query.strip():
        raise BadRequest("query: required (the words to search for)")
    text = check_queries(query, settings.max_query_chars)[0]
    offset = _int(params.get("offset"), "offset", 0, 0, OFFSET_MAX)
    limit = _int(params.get("limit"), "limit", 100, 1, TOP_K_MAX)
    fields = parse_fields(params.get("fields"))
    spec = SearchSpec(
        queries=(text,),
        top_k=limit,
        offset=offset,
        filters=filters_of(params, settings).build(),
        contents=False,
    )
    return spec, fields


def _search_on(index: OpenIndex, spec: SearchSpec, fields: Fields, settings: Settings) -> dict[str, Any]:
    out = run_search(index, spec, deadline=deadline_for(settings), budget=settings.request_budget_s)
    found, view = _view(index, [h.paper.arxiv_id for h in out.hits], fields)
    data = [view.render(found[h.paper.arxiv_id], fields) for h in out.hits if h.paper.arxiv_id in found]
    offset = spec.offset
    body: dict[str, Any] = {"total": out.total_count, "offset": offset}
    if offset + len(data) < out.total_count:
        body["next"] = offset + len(data)
    body["data"] = data
    return body


def match(holder: IndexHolder, settings: Settings, params: dict[str, str | None]) -> dict[str, Any]:
    """``paper/search/match``: the paper whose title best matches ``query``, with ``matchScore``."""
    found = match_title(holder, params.get("query"), settings=settings, name="query")
    if found.match is None:
        raise NotFound("Title match not found")
    fields = parse_fields(params.get("fields"))
    with holder.acquire() as index:
        papers_, view = _view(index, [found.match.arxiv_id], fields)
        paper = papers_.get(found.match.arxiv_id)
        if paper is None:
            raise NotFound("Title match not found")
        item = view.render(paper, fields)
    item["matchScore"] = found.match.confidence
    return {"data": [item]}


def papers(holder: IndexHolder, ids: Sequence[Any] | None, fields_value: str | None, *, batch: bool) -> Any:
    """``paper/{id}`` (one id: the paper, or not found) and ``paper/batch`` (a list aligned with
    ``ids``, ``null`` for each unknown id)."""
    if not isinstance(ids, list) or not ids:
        raise BadRequest('ids: required (a JSON body {"ids": [...]} with 1 to 500 paper ids)')
    if len(ids) > MAX_BATCH:
        raise BadRequest(f"ids: at most {MAX_BATCH} paper ids, got {len(ids)}")
    bad = [i for i in ids if not isinstance(i, str)]
    if bad:
        raise BadRequest(f"ids: paper ids are strings, got {bad[0]!r}")
    fields = parse_fields(fields_value)
    wanted: list[str | None] = []
    for given in ids:
        try:
            wanted.append(arxiv_of(given))
        except UnknownId:
            wanted.append(None)
    with holder.acquire() as index:
        found, view = _view(index, [a for a in wanted if a], fields)
        data = [view.render(found[a], fields) if a in found else None for a in wanted]
    if not batch:
        if data[0] is None:
            raise _not_found(ids[0])
        return data[0]
    return data


def edges(holder: IndexHolder, paper_id: str, kind: str, params: dict[str, str | None]) -> dict[str, Any]:
    """``paper/{id}/references`` (``kind="references"``) or ``/citations``: one page of the paper's
    edges, ``offset`` and ``limit`` (1-1000), each with the paper at its other end."""
    arxiv_id = _id(paper_id)
    offset = _int(params.get("offset"), "offset", 0, 0, OFFSET_MAX)
    limit = _int(params.get("limit"), "limit", 100, 1, 1000)
    fields = parse_fields(params.get("fields"), edges=True)
    paper_fields = Fields(fields.top, fields.nested)
    with holder.acquire() as index:
        paper = index.store.get_paper(arxiv_id)
        if paper is None or beyond_cutoff(arxiv_id, paper.date):
            raise _not_found(paper_id)
        if kind == "references":
            listed = refs.references(index, arxiv_id).references
            ends: list[tuple[str | None, str | None, Any]] = [(r.arxiv_id, r.text, r) for r in listed]
        else:
            ends = [(c.arxiv_id, c.title, c) for c in refs.cited_by(index, arxiv_id).cited_by]
        page = ends[offset : offset + limit]
        found, view = _view(index, [a for a, _, _ in page if a], paper_fields)
        key = "citedPaper" if kind == "references" else "citingPaper"
        data = []
        for other, text, entry in page:
            item = _edge(entry, fields.edge)
            item[key] = (
                view.render(found[other], paper_fields)
                if other in found
                else outside(other, text, paper_fields)
            )
            data.append(item)
    body: dict[str, Any] = {"offset": offset}
    if offset + len(page) < len(ends):
        body["next"] = offset + len(page)
    body["data"] = data
    return body


def _edge(entry: Any, wanted: tuple[str, ...]) -> dict[str, Any]:
    """The edge fields asked: the citing sentences when the snapshot keeps them (``contexts``)."""
    contexts = getattr(entry, "contexts", None)
    if contexts is None:
        one = getattr(entry, "context", None)
        contexts = [one] if one else []
    values = {
        "contexts": list(contexts),
        "intents": [],
        "contextsWithIntent": [{"context": c, "intents": []} for c in contexts],
        "isInfluential": False,
    }
    return {name: values[name] for name in wanted}


def recommend(
    holder: IndexHolder,
    settings: Settings,
    positive: Sequence[Any] | None,
    negative: Sequence[Any] | None,
    params: dict[str, str | None],
) -> dict[str, Any]:
    """``recommendations``: papers like the positive seeds and unlike the negative ones (the
    similar-papers use case), ``limit`` 1-500, ``from`` ``recent`` (every paper) or ``all-cs``."""
    if not isinstance(positive, list) or not positive or not all(isinstance(p, str) for p in positive):
        raise BadRequest("positivePaperIds: required (a list of paper ids)")
    if negative is not None and not (
        isinstance(negative, list) and all(isinstance(p, str) for p in negative)
    ):
        raise BadRequest("negativePaperIds: a list of paper ids")
    limit = _int(params.get("limit"), "limit", 100, 1, 500)
    pool = (params.get("from") or "recent").strip()
    if pool not in ("recent", "all-cs"):
        raise BadRequest(f"from: must be recent or all-cs, got {pool!r}")
    fields = parse_fields(params.get("fields"))
    seeds = tuple(dict.fromkeys(_id(p) for p in positive))
    negatives = tuple(dict.fromkeys(_id(p) for p in negative or ()))
    filters = FilterParams(categories=["cs"] if pool == "all-cs" else None).build()
    ids: list[str] = []
    while len(ids) < limit:
        step = min(TOP_K_MAX, limit - len(ids))
        out = similar(
            holder, seeds, settings=settings, top_k=step, offset=len(ids), filters=filters, top_k_name="limit",
            negatives=tuple(n for n in negatives if n not in seeds),
        )  # fmt: skip
        ids += [h.paper.arxiv_id for h in out.hits]
        if len(out.hits) < step:
            break
    with holder.acquire() as index:
        found, view = _view(index, ids, fields)
        return {"recommendedPapers": [view.render(found[a], fields) for a in ids if a in found]}


def snippets(holder: IndexHolder, settings: Settings, params: dict[str, str | None]) -> dict[str, Any]:
    """``snippet/search``: the top passages (`openxiv.service.passages`), ``limit`` 1-1000 (default
    10), ``paperIds`` and the search filters."""
    limit = _int(params.get("limit"), "limit", 10, 1, 1000)
    within = []
    for given in [p.strip() for p in (params.get("paperIds") or "").split(",") if p.strip()]:
        try:
            within.append(arxiv_of(given))
        except UnknownId as exc:
            raise NotFound(f"paperIds: paper with id {given} not found") from exc
    authors = [a for a in (params.get("authors") or "").split(",") if a.strip()] or None
    base = filters_of(params, settings)
    filters = replace(base, authors=authors).build()
    results: list[Any] = []
    while len(results) < limit:
        step = min(TOP_K_MAX, limit - len(results))
        page = passages(
            holder, params.get("query") or "", settings=settings, top_k=step, offset=len(results),
            filters=filters, paper_ids=tuple(dict.fromkeys(within)), top_k_name="limit",
        )  # fmt: skip
        results += page.result
        if len(page.result) < step:
            break
    with holder.acquire() as index:
        papers_ = index.store.get_papers(list(dict.fromkeys(p.arxiv_id for p in results)))
    return {
        "data": [_snippet(p, papers_.get(p.arxiv_id)) for p in results],
        "retrievalVersion": "openxiv-bm25",
    }


def _snippet(p: Any, paper: Paper | None) -> dict[str, Any]:
    cid = corpus_id(p.arxiv_id)
    return {
        "snippet": {
            "text": p.text,
            "snippetKind": "body" if p.kind == "body" else "abstract",
            "section": p.section,
            "snippetOffset": {"start": p.char_start, "end": p.char_end},
            "annotations": {"sentences": [], "refMentions": []},
        },
        "score": p.score,
        "paper": {
            "corpusId": str(cid) if cid is not None else None,
            "paperId": p.arxiv_id,
            "externalIds": {"ArXiv": p.arxiv_id},
            "title": p.title,
            "authors": list(paper.authors) if paper is not None else [],
            "openAccessInfo": {
                "license": paper.license if paper else None,
                "status": "GREEN",
                "disclaimer": None,
            },
        },
    }
