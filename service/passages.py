"""The passages use case: the top passages across papers for a query, not one hit per paper (no HTTP here).

Every front calls `passages`: ``GET /v1/passages`` and ``GET /arxiv/?type=passages``, the MCP tool
``search_passages``, ``openxiv search --passages`` and the Semantic Scholar-compatible
``/graph/v1/snippet/search``. What a RAG agent wants (Semantic Scholar's snippet search and Asta's
``snippet_search`` work this way): each result is one passage with its paper, section, offsets in
the section's text and the query's words marked, optionally restricted to a list of papers.

The ranking is the engine's (`openxiv.indexer.backend.Navigable.top_passages`: BM25 over the
full-text passages and the papers' own title + abstract on one scale, the filters of a search
applied before the cut, every page a slice of one ranking), within the request's time budget.

Errors: a bad parameter is a 400 naming it, a paper of ``paper_ids`` the corpus lacks a 404, a back
end without passages as results (Milvus) a 409.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from openxiv.corpus.records import Paper
from openxiv.corpus.settings.model import Settings
from openxiv.indexer.backend import (
    DeadlineExceeded,
    Navigable,
    PassageResult,
    SearchFilters,
    UnknownPapers,
)
from openxiv.indexer.engine import evidence
from openxiv.indexer.engine.within import mark
from openxiv.indexer.snapshot import OpenIndex
from openxiv.service.errors import BadRequest, Conflict, NotFound
from openxiv.service.experiments.context import current as current_call
from openxiv.service.holder import IndexHolder
from openxiv.service.params import OFFSET_MAX, TOP_K_MAX, check_queries, check_range, check_work, split_list
from openxiv.service.reading import check_id
from openxiv.service.search import OverBudget, deadline_for
from openxiv.service.titles import titled
from openxiv.service.views import abs_url

__all__ = ["PassageOut", "PassagesResponse", "navigable", "paper_id_list", "passages", "passages_text"]


class PassageOut(BaseModel):
    rank: int = Field(description="1-based place in the whole ranking (offset + position).")
    arxiv_id: str
    title: str | None
    kind: Literal["body", "abstract"] = Field(
        description="`body`: a full-text passage; `abstract`: the paper's own text (its abstract)."
    )
    section: str = Field(description="The section the passage is in (`Abstract` for the paper's text).")
    section_idx: int | None = Field(description="0-based section of the full text; null for the abstract.")
    passage_id: int | None = Field(description="The corpus passage; null for the abstract.")
    char_start: int = Field(description="Offset of the passage in its section's text (the abstract's).")
    char_end: int
    score: float = Field(description="BM25 on one scale for passages and abstracts; higher is better.")
    text: str
    highlight: str = Field(description="`text` with the query's words marked **like this**.")
    matched: list[str] = Field(description="The query's words found in the passage.")
    date: str | None
    url: str


class PassagesResponse(BaseModel):
    status: str = "success"
    query: str
    total_count: int = Field(description="Passages and abstracts holding a query word, after filters.")
    offset: int
    top_k: int
    result: list[PassageOut]
    snapshot: str
    timings_ms: dict[str, float] = Field(default_factory=dict)


def navigable(index: OpenIndex) -> Navigable:
    """The snapshot's backend as `Navigable`; a `Conflict` (409) for one without (Milvus)."""
    backend = index.backend
    if not isinstance(backend, Navigable):
        raise Conflict(
            f"the {type(backend).__name__} back end does not serve passages, facets or author views; "
            "serve an embedded index (openxiv index build without --backend milvus)"
        )
    return backend


def paper_id_list(
    value: str | list[str] | tuple[str, ...] | None, name: str = "paper_ids"
) -> tuple[str, ...]:
    """Canonical ids from one id, a comma-separated list or repeated values; a `BadRequest` naming
    ``name`` for a malformed one (none given is fine: no restriction)."""
    out = []
    for given in split_list(value, name):
        try:
            out.append(check_id(given))
        except BadRequest as exc:
            raise BadRequest(str(exc).replace("arxiv_id:", f"{name}:", 1)) from exc
    return tuple(dict.fromkeys(out))


def _paper_text(paper: Paper) -> tuple[str, str]:
    """The section name and text of a paper's own unit: its abstract, else its title."""
    if paper.abstract:
        return "Abstract", paper.abstract
    return "Title", paper.title or ""


def _hydrate(index: OpenIndex, query: str, result: PassageResult, offset: int) -> list[PassageOut]:
    ids = list(dict.fromkeys(h.arxiv_id for h in result.hits))
    papers = {a: titled(index.store, p) for a, p in index.store.get_papers(ids).items()}
    pids = [h.passage_id for h in result.hits if h.passage_id is not None]
    stored = dict(index.store.get_passages(pids)) if pids else {}
    stemmer = evidence.stemmer_of(index.manifest)
    terms = evidence.query_terms(query, stemmer)
    out: list[PassageOut] = []
    for h in result.hits:
        paper = papers.get(h.arxiv_id)
        if paper is None:
            continue
        if h.passage_id is not None and h.passage_id in stored:
            p = stored[h.passage_id]
            section, idx, text, start, end = (
                p.section_name or "",
                p.section_idx,
                p.text,
                p.char_start,
                p.char_end,
            )
        else:
            section, text = _paper_text(paper)
            idx, start, end = None, 0, len(text)
        highlight, words = mark(text, terms, stemmer)
        out.append(
            PassageOut(
                rank=offset + len(out) + 1,
                arxiv_id=paper.arxiv_id,
                title=paper.title,
                kind="abstract" if h.passage_id is None else "body",
                section=section,
                section_idx=idx,
                passage_id=h.passage_id,
                char_start=start,
                char_end=end,
                score=round(h.score, 6),
                text=text,
                highlight=highlight,
                matched=words,
                date=paper.date.isoformat() if paper.date else None,
                url=abs_url(paper.arxiv_id),
            )
        )
    return out


def passages(
    holder: IndexHolder,
    query: str,
    *,
    settings: Settings,
    top_k: int = 10,
    offset: int = 0,
    filters: SearchFilters | None = None,
    paper_ids: tuple[str, ...] = (),
    top_k_name: str = "top_k",
) -> PassagesResponse:
    """The best ``top_k`` passages for ``query`` from ``offset``, within ``filters`` and (when given)
    the papers ``paper_ids`` (canonical, `paper_id_list`), on the snapshot ``holder`` serves now."""
    check_range(top_k, top_k_name, 1, TOP_K_MAX)
    check_range(offset, "offset", 0, OFFSET_MAX)
    if query is None or not str(query).strip():
        raise BadRequest("query: required (the words the passages should hold)")
    text = check_queries(query, settings.max_query_chars)[0]
    state = current_call()  # a tagged question's date ceiling (--cutoffs) holds here as in search
    built = (state.capped(filters) if state is not None else filters) or SearchFilters()
    check_work([text], built)
    with holder.acquire() as index:
        backend = navigable(index)
        try:
            result = backend.top_passages(
                text,
                top_k=top_k,
                offset=offset,
                filters=built,
                within=paper_ids,
                deadline=deadline_for(settings),
            )
        except UnknownPapers as exc:
            raise NotFound(f"paper_ids: {', '.join(exc.args[0])} not in this corpus") from exc
        except DeadlineExceeded as exc:
            raise OverBudget(
                f"request time budget (OPENXIV_REQUEST_BUDGET_S) exhausted while ranking passages ({exc})"
            ) from exc
        hits = _hydrate(index, text, result, offset)
        snapshot = Path(index.path).name
    return PassagesResponse(
        query=text,
        total_count=result.total_count,
        offset=offset,
        top_k=top_k,
        result=hits,
        snapshot=snapshot,
        timings_ms={k: round(float(v), 3) for k, v in result.timings_ms.items()},
    )


def passages_text(r: PassagesResponse) -> str:
    """The passages for a reader (MCP tool result, ``openxiv search --passages``)."""
    shown = f"{r.offset + 1}-{r.offset + len(r.result)}" if r.result else "none"
    lines = [f"{r.total_count} passages match {r.query!r} (showing {shown})"]
    for p in r.result:
        where = p.section or p.kind
        lines.append(f"\n[{p.rank}] {p.title or ''} (arXiv {p.arxiv_id}, {where}, score {p.score:.3f})")
        lines.append(p.highlight)
    return "\n".join(lines) + "\n"
