"""The search use case: run a search against the open snapshot and hydrate its hits (no HTTP here).

Every front calls it: ``POST /search``, ``GET /arxiv/?type=retrieve`` and ``/v1/search`` (the HTTP
routes), the web page, the MCP tool ``search_papers`` and ``openxiv search`` (through `Library`).
They parse their own parameters (`openxiv.service.params`) into one `SearchSpec`, call one
function here with it and render what it returns:

- `deepxiv_search`: one query or a batch in the DeepXiv shape (`SearchResponse`), the batch merged
  round-robin (`merge_round_robin`); `search_json` is the exact body ``POST /search`` sends;
- `search`: one query as `Outcome` (the hydrated hits, for ``/v1/search`` and the web page);
- `run_search`: one query on an already borrowed snapshot: the backend's ranking, then `hydrate`
  reads the papers, passages and tldrs from the snapshot's store and picks each hit's evidence.

A request borrows the snapshot once (`IndexHolder.acquire`), so a reload meanwhile never mixes two
snapshots; its time budget (``OPENXIV_REQUEST_BUDGET_S``) is checked between queries and stages
and answered with `OverBudget` (503).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from openxiv.corpus.records import Paper, Passage
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.modes import UnknownMode
from openxiv.corpus.text import (
    TLDR_MAX_CHARS,
    TLDR_MIN_CHARS,
    paper_tldr,
    shorten,
    split_sentences,
)
from openxiv.indexer.backend import DeadlineExceeded, PaperHit, SearchResult, UnsupportedFilter
from openxiv.indexer.encoders.vectors import EncoderUnavailable
from openxiv.indexer.engine import evidence
from openxiv.indexer.snapshot import OpenIndex
from openxiv.indexer.tables.sentences import SentenceTable
from openxiv.service.errors import ApiError, BadRequest
from openxiv.service.experiments.context import current as current_call
from openxiv.service.fine_rerank import FineRerank, rank_page
from openxiv.service.holder import IndexHolder
from openxiv.service.models import Evidence, Hit, QueryResult, SearchResponse, V1SearchResponse
from openxiv.service.params import check_work
from openxiv.service.spec import SearchSpec
from openxiv.service.titles import titled
from openxiv.service.views import ResolvedHit, to_deepxiv_hit, to_v1_hit

__all__ = [
    "DenseUnavailable",
    "Outcome",
    "OverBudget",
    "check_deadline",
    "deadline_for",
    "deepxiv_search",
    "hydrate",
    "merge_round_robin",
    "run_search",
    "search",
    "search_json",
    "sentence_with_context",
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


# ------------------------------------------------------------------------------- hydration
def sentence_with_context(sentences: Sequence[str], i: int, min_chars: int = TLDR_MIN_CHARS) -> str:
    """Sentence ``i``, with the next one appended when it is shorter than ``min_chars``, cut to a
    readable length (how abstract evidence is shown; which sentence is the indexer's choice)."""
    out = sentences[i]
    if len(out) < min_chars and i + 1 < len(sentences):
        out = f"{out} {sentences[i + 1]}"
    return shorten(out, 4 * TLDR_MAX_CHARS)


def _evidence(
    paper: Paper,
    hit: PaperHit,
    query: str,
    passages: dict[int, Passage],
    stemmer: str,
    terms: frozenset[str],
    table: SentenceTable | None = None,
    wanted: np.ndarray | None = None,
) -> Evidence | None:
    """The indexer's choice (`openxiv.indexer.engine.evidence.choose`), fetched from the store and formatted.
    ``table``: the snapshot's analysed abstract sentences, with ``wanted`` (`SentenceTable.wanted`
    of ``terms``); without it, or for a paper it lacks, the abstract is split and analysed here."""
    passage = passages.get(hit.passage_id) if hit.passage_id is not None else None
    sentences: list[str] = []
    overlap: list[int] | None = None
    if passage is None:  # a passage hit shows its passage: its abstract's sentences are not needed
        stored = None
        if table is not None and wanted is not None:
            stored = table.overlaps(paper.arxiv_id, paper.abstract, wanted)
        if stored is not None:
            sentences, overlap = stored
        else:
            sentences = split_sentences(paper.abstract or "")
    choice = evidence.choose(
        query,
        passage_id=passage.passage_id if passage is not None else None,
        abstract_sentences=sentences,
        title=paper.title,
        stemmer=stemmer,
        terms=terms,
        overlap=overlap,
    )
    if choice is None:
        return None
    if choice.source == "passage" and passage is not None:
        return Evidence(
            text=passage.text,
            section=passage.section_name,
            passage_id=passage.passage_id,
            source="passage",
        )
    if choice.source == "abstract" and choice.sentence is not None:
        return Evidence(
            text=sentence_with_context(sentences, choice.sentence),
            section="Abstract",
            passage_id=None,
            source="abstract",
        )
    return Evidence(text=paper.title or "", section="Title", passage_id=None, source="title")


def hydrate(index: OpenIndex, query: str, hits: list[PaperHit], contents: bool) -> list[ResolvedHit]:
    """The backend's ``hits`` joined with their papers, tldrs and (with ``contents``) evidence, all
    read from ``index``'s store and stored tables; a hit whose paper is missing is dropped."""
    papers = {
        aid: titled(index.store, p) for aid, p in index.store.get_papers([h.arxiv_id for h in hits]).items()
    }
    passages: dict[int, Passage] = {}
    if contents:
        pids = [h.passage_id for h in hits if h.passage_id is not None]
        if pids:
            passages = dict(index.store.get_passages(pids))
    stored = index.tldrs  # the snapshot's tldrs by paper, when it has them: no lead sections to read
    no_abstract = [
        aid for aid, p in papers.items() if not p.abstract and (stored is None or aid not in stored)
    ]
    leads = index.store.lead_sections(no_abstract) if no_abstract else {}
    stemmer = evidence.stemmer_of(index.manifest)
    terms = evidence.query_terms(query, stemmer) if contents else frozenset()
    table = index.sentences if contents else None
    wanted = table.wanted(terms) if table is not None else None
    resolved: list[ResolvedHit] = []
    for h in hits:
        paper = papers.get(h.arxiv_id)
        if paper is None:  # the backend and the store come from one snapshot: should not happen
            continue
        ev = _evidence(paper, h, query, passages, stemmer, terms, table, wanted) if contents else None
        if stored is not None and h.arxiv_id in stored:
            tl = stored.get(h.arxiv_id)
        else:
            lead = leads.get(h.arxiv_id)
            tl = paper_tldr(paper, [lead] if lead is not None else None)
        resolved.append(ResolvedHit(hit=h, paper=paper, evidence=ev, tldr=tl))
    return resolved


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
    if state is None or state.ceiling is None:
        return spec
    capped = state.capped(spec.filters)
    if capped is None or capped == spec.filters:
        return spec
    free = [h.arxiv_id for h in _rank(index, spec, deadline, budget).hits]
    papers = index.store.get_papers(free) if free else {}
    state.leak(aid for aid in free if aid in papers and state.after(papers[aid].date))
    return replace(spec, filters=capped)


def run_search(
    index: OpenIndex,
    spec: SearchSpec,
    *,
    deadline: float | None = None,
    budget: float | None = None,
    rerank: FineRerank | None = None,
) -> Outcome:
    """``spec``'s query (one) against one snapshot: backend ranking, then papers and evidence from the store.

    ``deadline`` (``time.monotonic()``) is passed to the backend, which checks it between its stages,
    and checked again before the papers are read; ``budget`` only names the limit in the error.
    With ``rerank`` (the server's reranker, when ``spec.fine_rerank``) the page is cut from the
    reranked ranking (`openxiv.service.fine_rerank`)."""
    query = spec.query
    spec = _within_cutoff(index, spec, deadline, budget)
    if rerank is None:
        result = _rank(index, spec, deadline, budget)
    else:

        def first_stage(k: int, start: int) -> SearchResult:
            return _rank(index, replace(spec, top_k=k, offset=start), deadline, budget)

        result = rank_page(index, query, top_k=spec.top_k, offset=spec.offset, plan=rerank, rank=first_stage)
    check_deadline(deadline, budget, f"before reading the papers of {query[:60]!r}")
    t0 = time.perf_counter()
    hits = hydrate(index, query, list(result.hits), spec.contents)
    timings = {k: round(float(v), 3) for k, v in result.timings_ms.items()}
    timings["hydrate"] = round((time.perf_counter() - t0) * 1000, 3)
    out = Outcome(query=query, hits=hits, total_count=int(result.total_count), timings_ms=timings)
    out.notes = list(result.notes)
    return out


def search(holder: IndexHolder, spec: SearchSpec, *, settings: Settings) -> Outcome:
    """``spec``'s one query, checked, against the snapshot ``holder`` serves now, within the request's
    budget (``/v1/search`` and the web page); `Outcome.snapshot` names the snapshot that answered."""
    check_work([spec.query], spec.filters)
    plan = FineRerank.of(settings, spec.fine_rerank)  # loads the reranker before the budget starts
    with holder.acquire() as index:
        out = run_search(
            index, spec, deadline=deadline_for(settings), budget=settings.request_budget_s, rerank=plan
        )
        out.snapshot = Path(index.path).name
    return out


# ------------------------------------------------------------------------------- DeepXiv shape
def deepxiv_search(
    holder: IndexHolder, spec: SearchSpec, *, settings: Settings, warnings: list[str] | None = None
) -> tuple[SearchResponse, dict[str, float]]:
    """Run one query or a batch (``spec.batch``): the DeepXiv ``{status, total_count, result}`` model
    and the summed timings. Shared by the HTTP routes, the MCP server and ``openxiv search``.

    The request's time budget covers the whole batch: it is checked before every query (and inside
    each search), so a batch that runs late stops at once with a 503 instead of holding the worker."""
    queries = spec.queries
    check_work(list(queries), spec.filters)
    plan = FineRerank.of(settings, spec.fine_rerank)  # loads the reranker before the budget starts
    deadline = deadline_for(settings)
    budget = settings.request_budget_s
    timings: dict[str, float] = {}
    per_query: list[QueryResult] = []
    with holder.acquire() as index:
        for i, q in enumerate(queries):
            check_deadline(deadline, budget, f"after {i} of {len(queries)} queries")
            out = run_search(index, spec.one(q), deadline=deadline, budget=budget, rerank=plan)
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
