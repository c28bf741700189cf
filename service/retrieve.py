"""Search-R1's retriever server shape (``POST /retrieve``) over the hybrid search.

Search-R1-style RL agents (``search_r1/llm_agent/generation.py``) send ``{"queries": [...], "topk":
k, "return_scores": true}`` and read ``result[i][j]["document"]["contents"]``, whose first line is
the title and the rest the text (the wiki-18 corpus layout: ``"Title"\\ntext``). Without
``return_scores`` each entry is the document itself. A single ``query`` (a string) is accepted too.

What Search-R1's own server accepts is accepted the same way: ``queries: []`` is answered ``[]``; an
empty (or blank) query in a batch gets an empty list in its slot; a missing or ``0`` ``topk`` is the
default (3). A batch may hold up to `MAX_QUERIES` queries (Search-R1 sends every active rollout's
query at once, 512 and more); it is searched in chunks of `CHUNK` (`MAX_BATCH`, the batch bound of
every other search route), each in its own compute slot and under its own request budget, so other
requests are served between two chunks.

A document here is one paper: ``id``/``docid`` its arXiv id, ``title``, ``text`` the passage that
matched when the match is in the full text (else the abstract), ``contents`` the two joined as above.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from openxiv.corpus.settings.model import Settings
from openxiv.service.errors import BadRequest
from openxiv.service.holder import IndexHolder
from openxiv.service.models import Hit
from openxiv.service.params import MAX_BATCH, TOP_K_MAX, check_queries, check_range
from openxiv.service.search_async import deepxiv_search_async
from openxiv.service.spec import SearchSpec

__all__ = ["CHUNK", "DEFAULT_TOPK", "MAX_QUERIES", "RetrieveRequest", "document", "retrieve"]

DEFAULT_TOPK = 3
"""Search-R1's retriever default (``--topk 3``)."""
CHUNK = MAX_BATCH
"""Queries searched per compute slot (and per request budget)."""
MAX_QUERIES = 4096
"""Queries per ``/retrieve`` request; more is a 400 (a client splits its batch)."""
_FROM_ABSTRACT = frozenset({"Abstract", "Title", None})


class RetrieveRequest(BaseModel):
    """Body of ``POST /retrieve``: Search-R1's ``{queries, topk, return_scores}`` (or ``query``)."""

    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={"examples": [{"queries": ["speculative decoding draft model"], "topk": 3}]},
    )

    queries: list[str] | None = Field(
        default=None,
        description=f"The queries, 0-{MAX_QUERIES}, answered in order (searched {CHUNK} at a time); "
        "an empty one gets an empty list.",
    )
    query: str | list[str] | None = Field(default=None, description="One query (instead of `queries`).")
    topk: int | None = Field(
        default=None, description=f"Documents per query, 1-{TOP_K_MAX} (missing or 0: {DEFAULT_TOPK})."
    )
    return_scores: bool = Field(False, description="Wrap each document as `{document, score}`.")
    use_fine_rerank: bool | None = Field(
        default=None,
        description="Reorder each query's first papers with the cross-encoder (as `POST /search`).",
    )


def document(hit: Hit) -> dict[str, Any]:
    """One hit as a Search-R1 corpus document."""
    ev = hit.contents[0] if hit.contents else None
    if ev is not None and ev.section_title not in _FROM_ABSTRACT and ev.section_contents:
        text = ev.section_contents[0]
    else:
        text = hit.abstract or hit.tldr or ""
    title = hit.title or ""
    return {
        "id": hit.arxiv_id,
        "docid": hit.arxiv_id,
        "title": title,
        "text": text,
        "contents": f'"{title}"\n{text}',
    }


def _queries(req: RetrieveRequest, max_chars: int) -> list[str]:
    """The queries, stripped; a blank one of a ``queries`` list stays as ``""`` (an empty slot)."""
    if req.queries is not None and req.query is not None:
        raise BadRequest("queries: send either queries (a list) or query, not both")
    if req.queries is None and req.query is None:
        raise BadRequest("queries: required (a list of query strings; or query: one string)")
    if req.queries is None:
        assert req.query is not None
        return check_queries(req.query, max_chars)
    if len(req.queries) > MAX_QUERIES:
        raise BadRequest(f"queries: at most {MAX_QUERIES} per request, got {len(req.queries)}")
    out = []
    for i, q in enumerate(req.queries):
        q = q.strip()
        if len(q) > max_chars:
            raise BadRequest(f"queries[{i}]: {len(q)} characters, the limit is {max_chars}")
        out.append(q)
    return out


def _scored(docs: list[dict[str, Any]], hits: list[Hit]) -> list[dict[str, Any]]:
    return [{"document": d, "score": h.score} for d, h in zip(docs, hits, strict=True)]


async def retrieve(
    holder: IndexHolder, settings: Settings, req: RetrieveRequest
) -> tuple[dict[str, list[list[dict[str, Any]]]], dict[str, float]]:
    """``{"result": [[doc, ...] per query]}`` and the summed timings; the non-empty queries are
    searched `CHUNK` at a time, each chunk's compute in a worker thread (a compute slot), a model
    server awaited outside it (`deepxiv_search_async`)."""
    queries = _queries(req, settings.max_query_chars)
    topk = check_range(req.topk or DEFAULT_TOPK, "topk", 1, TOP_K_MAX)
    asked = [i for i, q in enumerate(queries) if q]
    hits: dict[int, list[Hit]] = {}
    timings: dict[str, float] = {}
    for start in range(0, len(asked), CHUNK):
        chunk = asked[start : start + CHUNK]
        spec = SearchSpec(
            queries=tuple(queries[i] for i in chunk),
            top_k=topk,
            batch=True,
            fine_rerank=bool(req.use_fine_rerank),
        )
        response, took = await deepxiv_search_async(holder, spec, settings=settings)
        for i, qr in zip(chunk, response.results or [], strict=True):
            hits[i] = qr.result
        for k, v in took.items():
            timings[k] = timings.get(k, 0.0) + v
    result = []
    for i in range(len(queries)):
        found = hits.get(i, [])
        docs = [document(h) for h in found]
        result.append(_scored(docs, found) if req.return_scores else docs)
    return {"result": result}, timings
