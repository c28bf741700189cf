"""Search and reading logic shared by the DeepXiv-compatible and the v1 routes (no HTTP here).

All functions are synchronous and CPU/IO bound: routes call them from the threadpool. They take an
open index (`OpenIndex`: backend + read-only store of one snapshot), so a request sees one snapshot
from start to finish even when a reload swaps in another meanwhile.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from openxiv.corpus.ids import InvalidArxivId, canonical_id
from openxiv.corpus.records import Paper, Passage, Section
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.modes import UnknownMode
from openxiv.corpus.text import paper_tldr, split_sentences
from openxiv.indexer.backend import DeadlineExceeded, PaperHit, SearchFilters, UnsupportedFilter
from openxiv.indexer.build.sentences import SentenceTable
from openxiv.indexer.engine import evidence
from openxiv.indexer.snapshot import OpenIndex
from openxiv.service.errors import ApiError, BadRequest, NotFound
from openxiv.service.models import Evidence, Hit, QueryResult
from openxiv.service.text import match_section, section_label, sentence_with_context

# the paper -> API model mappings moved to views; imported here for the old import paths
from openxiv.service.views import (
    abs_url,
    authors_of,
    iso,
    pdf_url,
    to_deepxiv_hit,
    to_v1_hit,
)

__all__ = [
    "Outcome",
    "OverBudget",
    "ResolvedHit",
    "abs_url",
    "authors_of",
    "check_deadline",
    "deadline_for",
    "find_section",
    "iso",
    "load_paper",
    "merge_round_robin",
    "paper_tldr",
    "pdf_url",
    "raw_markdown",
    "run_search",
    "to_deepxiv_hit",
    "to_v1_hit",
]


@dataclass(frozen=True)
class ResolvedHit:
    """A backend hit joined with its paper and evidence."""

    hit: PaperHit
    paper: Paper
    evidence: Evidence | None
    tldr: str | None


@dataclass
class Outcome:
    query: str
    hits: list[ResolvedHit]
    total_count: int
    timings_ms: dict[str, float] = field(default_factory=dict)


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


# ------------------------------------------------------------------------------- papers
def check_id(arxiv_id: str) -> str:
    """The canonical id, or a `BadRequest` naming the malformed id."""
    try:
        return canonical_id(arxiv_id.strip())
    except InvalidArxivId as exc:
        raise BadRequest(f"arxiv_id: {arxiv_id!r} is not an arXiv id ({exc})") from exc


def load_paper(index: OpenIndex, arxiv_id: str) -> Paper:
    canonical = check_id(arxiv_id)
    paper = index.store.get_paper(canonical)
    if paper is None:
        raise NotFound(f"paper {canonical} is not in this corpus")
    return paper


def find_section(index: OpenIndex, paper: Paper, name: str) -> Section:
    sections = index.store.sections(paper.arxiv_id)
    if not sections:
        raise NotFound(f"paper {paper.arxiv_id} has no full text in this corpus, so no sections")
    pos = match_section(name, [s.name for s in sections], [s.number for s in sections])
    if pos is None:
        names = "; ".join(s.name for s in sections)
        raise NotFound(f"paper {paper.arxiv_id} has no section {name!r}; its sections are: {names}")
    return sections[pos]


def raw_markdown(paper: Paper, sections: list[Section]) -> str:
    """The paper as markdown: ``# title``, ``## Abstract``, then ``## <number> <name>`` per section."""
    parts = [f"# {paper.title or paper.arxiv_id}"]
    if paper.abstract:
        parts.append(f"## Abstract\n\n{paper.abstract.strip()}")
    for s in sections:
        heading = section_label(s.number, s.name)
        parts.append(f"## {heading}\n\n{s.text.strip()}")
    return "\n\n".join(parts) + "\n"


# ------------------------------------------------------------------------------- search
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
            text=passage.text, section=passage.section_name, passage_id=passage.passage_id, source="passage"
        )
    if choice.source == "abstract" and choice.sentence is not None:
        return Evidence(
            text=sentence_with_context(sentences, choice.sentence),
            section="Abstract",
            passage_id=None,
            source="abstract",
        )
    return Evidence(text=paper.title or "", section="Title", passage_id=None, source="title")


def run_search(
    index: OpenIndex,
    query: str,
    *,
    top_k: int,
    offset: int = 0,
    filters: SearchFilters | None = None,
    mode: str | None = None,
    contents: bool = True,
    deadline: float | None = None,
    budget: float | None = None,
) -> Outcome:
    """One query against one snapshot: backend ranking, then papers and evidence from the store.

    ``deadline`` (``time.monotonic()``) is passed to the backend, which checks it between its stages,
    and checked again before the papers are read; ``budget`` only names the limit in the error."""
    try:
        result = index.backend.search(
            query, top_k=top_k, offset=offset, filters=filters, mode=mode, deadline=deadline
        )
    except DeadlineExceeded as exc:
        raise _over_budget(budget, f"while searching {query[:60]!r} ({exc})") from exc
    except UnsupportedFilter as exc:
        raise BadRequest(str(exc)) from exc
    except UnknownMode as exc:  # in practice `ModeUnavailable`: params checked the spelling
        if mode is None:  # the configured default failed: a server problem, not the client's
            raise
        raise BadRequest(f"mode: {exc}") from exc
    check_deadline(deadline, budget, f"before reading the papers of {query[:60]!r}")
    t0 = time.perf_counter()
    ids = [h.arxiv_id for h in result.hits]
    papers = index.store.get_papers(ids)
    passages: dict[int, Passage] = {}
    if contents:
        pids = [h.passage_id for h in result.hits if h.passage_id is not None]
        if pids:
            passages = dict(index.store.get_passages(pids))
    stored = index.tldrs  # the snapshot's tldrs by paper, when it has them: no lead sections to read
    no_abstract = [
        aid for aid, p in papers.items() if not p.abstract and (stored is None or aid not in stored)
    ]
    leads = index.store.lead_sections(no_abstract) if no_abstract else {}
    hits: list[ResolvedHit] = []
    stemmer = evidence.stemmer_of(index.manifest)
    terms = evidence.query_terms(query, stemmer) if contents else frozenset()
    table = index.sentences if contents else None
    wanted = table.wanted(terms) if table is not None else None
    for h in result.hits:
        paper = papers.get(h.arxiv_id)
        if paper is None:  # the backend and the store come from one snapshot: should not happen
            continue
        ev = _evidence(paper, h, query, passages, stemmer, terms, table, wanted) if contents else None
        if stored is not None and h.arxiv_id in stored:
            tl = stored.get(h.arxiv_id)
        else:
            lead = leads.get(h.arxiv_id)
            tl = paper_tldr(paper, [lead] if lead is not None else None)
        hits.append(ResolvedHit(hit=h, paper=paper, evidence=ev, tldr=tl))
    timings = {k: round(float(v), 3) for k, v in result.timings_ms.items()}
    timings["hydrate"] = round((time.perf_counter() - t0) * 1000, 3)
    return Outcome(query=query, hits=hits, total_count=int(result.total_count), timings_ms=timings)


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
