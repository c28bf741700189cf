"""Facets and navigation use cases: counts for a query, the paper of a pasted title, an author's papers.

Every front calls these (no HTTP here): ``GET /v1/facets``, ``/v1/match``, ``/v1/authors`` and the
``GET /arxiv/`` types ``facets``, ``match``, ``author``; the MCP tools ``facets``, ``match_title`` and
``author_papers``; ``openxiv facets``, ``openxiv match`` and ``openxiv author``; the Semantic
Scholar-compatible ``paper/search/match``.

- `facets`: how the papers a query matches (after the filters of a search) spread by year, month,
  category and top authors (DeepXiv's aggregation over paper attributes): what a wide-search agent
  sizes a set by. Counts are within this corpus snapshot. The engine counts
  (`openxiv.indexer.backend.Navigable.facet_counts`).
- `match_title`: the paper of a pasted title with a confidence: 1.0 when its folded title is the
  title's (`openxiv.corpus.normalize.normalize_title`), else the best of the BM25 ranking of the
  title by the similarity of the folded titles (`difflib` ratio, 0-1). A candidate under
  `MATCH_MIN_CONFIDENCE` is listed but is not ``match``.
- `author_view`: the papers of an author name, newest first, under every folded spelling the name
  matches (the ``authors`` filter's rule), with the spellings the papers print.

A call tagged with a question that has a date ceiling (``--cutoffs``) is held to it by all three:
facets count only papers on or before it, title match neither matches nor lists a later paper (its
BM25 candidates then ranked under the ceiling), the author view lists and names only the earlier
papers; what they held back is counted as the call's leaks (`openxiv.service.experiments.context`).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from pydantic import BaseModel, Field

from openxiv.corpus.normalize import normalize_name, normalize_title
from openxiv.corpus.records import Paper
from openxiv.corpus.settings.model import Settings
from openxiv.indexer.backend import DeadlineExceeded, SearchFilters
from openxiv.indexer.snapshot import OpenIndex
from openxiv.service.errors import BadRequest, NotFound
from openxiv.service.experiments.context import after_cutoff, within_cutoff
from openxiv.service.experiments.context import current as current_call
from openxiv.service.holder import IndexHolder
from openxiv.service.params import OFFSET_MAX, TOP_K_MAX, check_queries, check_range, check_work
from openxiv.service.passages import navigable
from openxiv.service.search import OverBudget, deadline_for
from openxiv.service.titles import titled
from openxiv.service.views import abs_url

__all__ = [
    "MATCH_MIN_CONFIDENCE",
    "AuthorCount",
    "AuthorPapersResponse",
    "Count",
    "FacetsResponse",
    "PaperRef",
    "TitleCandidate",
    "TitleMatchResponse",
    "author_view",
    "facets",
    "match_title",
]

MATCH_MIN_CONFIDENCE = 0.8
"""The least confidence of a title match (similarity of the folded titles) served as ``match``."""
MATCH_CANDIDATES = 10
"""Papers of the title's BM25 ranking compared with it."""
TOP_AUTHORS_MAX = 100
SPELLINGS_FROM = 500
"""Papers of an author whose printed names are read for the spellings."""
WITHIN_CORPUS = "counts are within this corpus snapshot, not all of arXiv"


class Count(BaseModel):
    value: str
    count: int


class AuthorCount(BaseModel):
    name: str = Field(description="The name as one of their papers prints it.")
    folded: str = Field(description="The folded name the counts are kept under.")
    count: int


class FacetsResponse(BaseModel):
    status: str = "success"
    query: str
    total_count: int = Field(description="Papers counted: the query's matches after the filters.")
    years: list[Count]
    months: list[Count]
    undated: int
    categories: list[Count] = Field(description="Every category of the papers counted, most first.")
    authors: list[AuthorCount] = Field(description="The top authors, most papers first.")
    note: str = WITHIN_CORPUS
    snapshot: str


class PaperRef(BaseModel):
    arxiv_id: str
    title: str | None
    authors: list[str]
    date: str | None
    categories: list[str]
    url: str


class TitleCandidate(PaperRef):
    confidence: float = Field(description="Similarity of the folded titles, 0-1 (1: the same title).")


class TitleMatchResponse(BaseModel):
    status: str = "success"
    title: str
    match: TitleCandidate | None = Field(
        description=f"The best candidate when its confidence is at least {MATCH_MIN_CONFIDENCE}."
    )
    confidence: float = Field(description="The best candidate's confidence (0 without one).")
    candidates: list[TitleCandidate]


class AuthorPapersResponse(BaseModel):
    status: str = "success"
    name: str
    matched: list[str] = Field(description="The folded names the query matches.")
    spellings: list[str] = Field(description="How the papers print those names.")
    total_count: int
    offset: int
    top_k: int
    result: list[PaperRef] = Field(description="Newest first.")


def _ref(paper: Paper) -> PaperRef:
    return PaperRef(
        arxiv_id=paper.arxiv_id,
        title=paper.title,
        authors=list(paper.authors),
        date=paper.date.isoformat() if paper.date else None,
        categories=list(paper.categories),
        url=abs_url(paper.arxiv_id),
    )


def _spelled(index: OpenIndex, folded: str, example: str) -> str:
    """How the paper ``example`` prints the author whose folded name is ``folded``."""
    paper = index.store.get_paper(example)
    names = paper.authors if paper is not None else ()
    return next((a for a in names if normalize_name(a) == folded), folded)


def facets(
    holder: IndexHolder,
    query: str | None,
    *,
    settings: Settings,
    filters: SearchFilters | None = None,
    top_authors: int = 10,
) -> FacetsResponse:
    """Counts by year, month, category and top authors of the papers ``query`` matches after
    ``filters`` (every paper passing them when ``query`` is empty)."""
    check_range(top_authors, "top_authors", 0, TOP_AUTHORS_MAX)
    text = check_queries(query, settings.max_query_chars)[0] if query and query.strip() else ""
    state = current_call()  # a tagged question's date ceiling (--cutoffs): later papers are not counted
    built = (state.capped(filters) if state is not None else filters) or SearchFilters()
    check_work([text] if text else [], built)
    with holder.acquire() as index:
        try:
            counts = navigable(index).facet_counts(
                text, filters=built, top_authors=top_authors, deadline=deadline_for(settings)
            )
        except DeadlineExceeded as exc:
            raise OverBudget(
                f"request time budget (OPENXIV_REQUEST_BUDGET_S) exhausted while counting facets ({exc})"
            ) from exc
        authors = [
            AuthorCount(name=_spelled(index, name, example), folded=name, count=n)
            for name, n, example in counts.authors
        ]
        snapshot = Path(index.path).name
    return FacetsResponse(
        query=text,
        total_count=counts.total,
        years=[Count(value=str(y), count=n) for y, n in counts.years],
        months=[Count(value=m, count=n) for m, n in counts.months],
        undated=counts.undated,
        categories=[Count(value=c, count=n) for c, n in counts.categories],
        authors=authors,
        snapshot=snapshot,
    )


def _confidence(asked: str, title: str | None) -> float:
    a, b = normalize_title(asked), normalize_title(title)
    if not a or not b:
        return 0.0
    return 1.0 if a == b else round(difflib.SequenceMatcher(None, a, b, autojunk=False).ratio(), 4)


def _candidates(
    index: OpenIndex, asked: str, exact: list[str], filters: SearchFilters | None, settings: Settings
) -> list[str]:
    """The papers whose folded title is ``asked`` (``exact``), then the BM25 ranking of it."""
    try:
        ranked = index.backend.search(
            asked, top_k=MATCH_CANDIDATES, mode="bm25", filters=filters, deadline=deadline_for(settings)
        )
    except DeadlineExceeded as exc:
        raise OverBudget(
            f"request time budget (OPENXIV_REQUEST_BUDGET_S) exhausted while matching a title ({exc})"
        ) from exc
    return exact + [h.arxiv_id for h in ranked.hits if h.arxiv_id not in exact]


def match_title(
    holder: IndexHolder, title: str | None, *, settings: Settings, name: str = "title"
) -> TitleMatchResponse:
    """The paper of ``title`` (a pasted title) with a confidence, and the candidates compared."""
    if title is None or not title.strip():
        raise BadRequest(f"{name}: required (the title to look up)")
    asked = check_queries(title, settings.max_query_chars)[0]
    if not normalize_title(asked):
        raise BadRequest(f"{name}: {title!r} has no letters or digits to match")
    with holder.acquire() as index:
        exact = index.store.find_by_title(asked)
        ids = _candidates(index, asked, exact, None, settings)
        stored = index.store.get_papers(ids)
        papers = within_cutoff(stored)  # a candidate after a tagged question's ceiling: a leak, not shown
        state = current_call()
        if state is not None and len(papers) < len(stored):  # then the candidates of a ranking held to it
            ids = _candidates(index, asked, exact, state.capped(None), settings)
            papers |= within_cutoff(index.store.get_papers([a for a in ids if a not in papers]))
        found = [titled(index.store, papers[a]) for a in ids if a in papers]
    scored = [TitleCandidate(**_ref(p).model_dump(), confidence=_confidence(asked, p.title)) for p in found]
    order = sorted(range(len(scored)), key=lambda i: (-scored[i].confidence, i))
    candidates = [scored[i] for i in order]
    best = candidates[0] if candidates else None
    return TitleMatchResponse(
        title=asked,
        match=best if best is not None and best.confidence >= MATCH_MIN_CONFIDENCE else None,
        confidence=best.confidence if best is not None else 0.0,
        candidates=candidates,
    )


def _within_cutoff(
    index: OpenIndex, matched: list[str], ids: list[str], page: slice
) -> tuple[list[str], list[str]]:
    """An author's ``matched`` names and papers ``ids`` without the papers after a tagged question's
    ceiling (those the ``page`` would have shown counted as leaks) and the names only they print."""
    state = current_call()
    if state is None or state.ceiling is None or not ids:
        return matched, ids
    papers = index.store.get_papers(ids)
    later = after_cutoff(papers)
    if not later:
        return matched, ids
    state.leak(a for a in ids[page] if a in later)
    kept = [a for a in ids if a not in later]
    printed = {normalize_name(n) for a in kept if a in papers for n in papers[a].authors}
    return [m for m in matched if m in printed], kept


def author_view(
    holder: IndexHolder, name: str | None, *, top_k: int = 20, offset: int = 0, param: str = "name"
) -> AuthorPapersResponse:
    """The papers of the author ``name`` (any spelling that folds to a matched name), newest first."""
    check_range(top_k, "top_k", 1, TOP_K_MAX)
    check_range(offset, "offset", 0, OFFSET_MAX)
    if name is None or not normalize_name(name):
        raise BadRequest(f"{param}: required (an author name such as 'Ashish Vaswani')")
    if len(name) > 200:
        raise BadRequest(f"{param}: longer than 200 characters")
    with holder.acquire() as index:
        matched, ids = navigable(index).author_papers(name)
        matched, ids = _within_cutoff(index, matched, ids, slice(offset, offset + top_k))
        if not ids:
            raise NotFound(f"{param}: no author of this corpus matches {name!r}")
        papers = index.store.get_papers(ids[:SPELLINGS_FROM])
        folded = set(matched)
        spellings = sorted(
            {a for p in papers.values() for a in p.authors if normalize_name(a) in folded},
            key=lambda s: (normalize_name(s), s),
        )
        page_ids = ids[offset : offset + top_k]
        page = index.store.get_papers([a for a in page_ids if a not in papers]) | papers
        result = [_ref(titled(index.store, page[a])) for a in page_ids if a in page]
    return AuthorPapersResponse(
        name=name.strip(),
        matched=matched,
        spellings=spellings,
        total_count=len(ids),
        offset=offset,
        top_k=top_k,
        result=result,
    )
