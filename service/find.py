"""The find-in-a-paper use case: the passages of one paper that best answer a query (no HTTP here).

Every front calls `find`: ``GET /arxiv/?type=find`` and ``GET /v1/find``, the MCP tool
``find_in_paper`` and ``openxiv paper ID --find QUERY``. A paper with a full text is searched passage
by passage (the corpus passages the passage index holds, with their section names); a paper without
one, sentence by sentence through its abstract. Passages are ranked by BM25 over the paper's own
passages with the snapshot's analyzer (`openxiv.indexer.engine.within`), overlapping windows of one
section are shown once (the better one), and the query's words are marked ``**like this**``.
"""

from __future__ import annotations

from typing import Literal

from openxiv.corpus.records import Passage
from openxiv.corpus.text import split_sentences
from openxiv.indexer.engine import evidence
from openxiv.indexer.engine.within import mark, rank_units
from openxiv.service.errors import BadRequest
from openxiv.service.holder import IndexHolder
from openxiv.service.params import check_queries, check_range
from openxiv.service.reading import load_paper
from openxiv.service.tool_models import FindHit, FindResponse

__all__ = ["FIND_TOP_K", "FIND_TOP_K_MAX", "find"]

FIND_TOP_K = 3
"""Passages shown unless asked otherwise."""
FIND_TOP_K_MAX = 20


def _overlaps(a: Passage, b: Passage) -> bool:
    """Two windows of one section sharing text (consecutive passages overlap by a few words)."""
    return a.section_idx == b.section_idx and a.char_start < b.char_end and b.char_start < a.char_end


def find(
    holder: IndexHolder, arxiv_id: str, query: str, *, max_query_chars: int, top_k: int = FIND_TOP_K
) -> FindResponse:
    """The best ``top_k`` passages (or abstract sentences) of ``arxiv_id`` for ``query``."""
    check_range(top_k, "top_k", 1, FIND_TOP_K_MAX)
    if query is None or not query.strip():
        raise BadRequest("query: required (the words to find in the paper)")
    query = check_queries(query, max_query_chars)[0]
    with holder.acquire() as index:
        paper = load_paper(index, arxiv_id)
        stemmer = evidence.stemmer_of(index.manifest)
        passages = index.store.passages(paper.arxiv_id) if paper.has_fulltext else []
    terms = evidence.query_terms(query, stemmer)
    if not terms:
        raise BadRequest(f"query: {query!r} has no searchable word (only stop words or single letters)")
    source: Literal["fulltext", "abstract"] = "fulltext" if passages else "abstract"
    units = [p.text for p in passages] if passages else split_sentences(paper.abstract or "")
    ranked = rank_units(terms, units, stemmer)
    result: list[FindHit] = []
    shown: list[Passage] = []
    for unit in ranked:
        passage = passages[unit.position] if passages else None
        if passage is not None and any(_overlaps(passage, s) for s in shown):
            continue
        text, words = mark(units[unit.position], terms, stemmer)
        result.append(
            FindHit(
                rank=len(result) + 1,
                section=passage.section_name if passage is not None else "Abstract",
                passage_id=passage.passage_id if passage is not None else None,
                score=round(unit.score, 4),
                text=text,
                matched=words,
            )
        )
        if passage is not None:
            shown.append(passage)
        if len(result) == top_k:
            break
    return FindResponse(
        arxiv_id=paper.arxiv_id,
        title=paper.title,
        query=query,
        source=source,
        searched=len(units),
        total_count=len(ranked),
        result=result,
    )
