"""Search-R1's retriever server shape (``POST /retrieve``) over the hybrid search.

Search-R1-style RL agents (``search_r1/llm_agent/generation.py``) send ``{"queries": [...], "topk":
k, "return_scores": true}`` and read ``result[i][j]["document"]["contents"]``, whose first line is
the title and the rest the text (the wiki-18 corpus layout: ``"Title"\\ntext``). Without
``return_scores`` each entry is the document itself. A single ``query`` (a string) is accepted too.

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
from openxiv.service.search import deepxiv_search
from openxiv.service.spec import SearchSpec

__all__ = ["DEFAULT_TOPK", "RetrieveRequest", "document", "retrieve"]

DEFAULT_TOPK = 3
"""Search-R1's retriever default (``--topk 3``)."""
_FROM_ABSTRACT = frozenset({"Abstract", "Title", None})


class RetrieveRequest(BaseModel):
    """Body of ``POST /retrieve``: Search-R1's ``{queries, topk, return_scores}`` (or ``query``)."""

    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={"examples": [{"queries": ["speculative decoding draft model"], "topk": 3}]},
    )

    queries: list[str] | None = Field(
        default=None, description=f"The queries, 1-{MAX_BATCH}, answered in order."
    )
    query: str | list[str] | None = Field(default=None, description="One query (instead of `queries`).")
    topk: int | None = Field(
        default=None, description=f"Documents per query, 1-{TOP_K_MAX} (default {DEFAULT_TOPK})."
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
    if req.queries is not None and req.query is not None:
        raise BadRequest("queries: send either queries (a list) or query, not both")
    given = req.queries if req.queries is not None else req.query
    if given is None:
        raise BadRequest("queries: required (a list of query strings; or query: one string)")
    name = "queries" if req.queries is not None else "query"
    if isinstance(given, list) and not given:
        raise BadRequest(f"{name}: at least one query")
    try:
        return check_queries(given, max_chars)
    except BadRequest as exc:  # check_queries names ``query``; say what this caller sent
        raise BadRequest(exc.detail.replace("query", name, 1)) from None


def retrieve(
    holder: IndexHolder, settings: Settings, req: RetrieveRequest
) -> tuple[dict[str, list[list[dict[str, Any]]]], dict[str, float]]:
    """``{"result": [[doc, ...] per query]}`` and the summed timings."""
    queries = _queries(req, settings.max_query_chars)
    topk = check_range(req.topk if req.topk is not None else DEFAULT_TOPK, "topk", 1, TOP_K_MAX)
    spec = SearchSpec(queries=tuple(queries), top_k=topk, batch=True, fine_rerank=bool(req.use_fine_rerank))
    response, timings = deepxiv_search(holder, spec, settings=settings)
    per_query = response.results or []
    result = []
    for qr in per_query:
        docs = [document(h) for h in qr.result]
        if req.return_scores:
            result.append([{"document": d, "score": h.score} for d, h in zip(docs, qr.result, strict=True)])
        else:
            result.append(docs)
    return {"result": result}, timings
