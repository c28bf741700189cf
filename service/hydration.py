"""A search's hits made whole: papers, tldrs and evidence read from the snapshot (`hydrate`).

The search use case (`openxiv.service.search`) ranks, then calls `hydrate` with the page's hits;
``/v1/similar`` (`openxiv.service.similar`) does too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from openxiv.corpus.records import Paper, Passage
from openxiv.corpus.text import TLDR_MAX_CHARS, TLDR_MIN_CHARS, paper_tldr, shorten, split_sentences
from openxiv.indexer.backend import PaperHit
from openxiv.indexer.engine import evidence
from openxiv.indexer.snapshot import OpenIndex
from openxiv.indexer.tables.sentences import SentenceTable
from openxiv.service.citations import citation_counts
from openxiv.service.models import Evidence
from openxiv.service.titles import titled
from openxiv.service.views import ResolvedHit

__all__ = ["hydrate", "sentence_with_context"]


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
    counts = citation_counts(index, [h.arxiv_id for h in hits])  # held to a tagged question's ceiling
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
        resolved.append(
            ResolvedHit(hit=h, paper=paper, evidence=ev, tldr=tl, citations=counts.get(h.arxiv_id))
        )
    return resolved
