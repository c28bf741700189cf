"""Response models of the paper tools: find in a paper (``type=find``, ``/v1/find``, MCP
``find_in_paper``). Similar papers answer in the search shapes (`SearchResponse`, `V1SearchResponse`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from openxiv.service.text import ServedText

__all__ = ["FindHit", "FindResponse"]


class FindHit(BaseModel):
    rank: int
    section: str | None = Field(description="The section the passage comes from; `Abstract` for a sentence.")
    passage_id: int | None = Field(description="The corpus passage (null for an abstract sentence).")
    score: float = Field(description="BM25 within this paper; comparable only within one response.")
    text: ServedText = Field(description="The passage or sentence, each query word marked **like this**.")
    matched: list[str] = Field(description="The words of the text that matched the query (lower-case).")


class FindResponse(BaseModel):
    """``{arxiv_id, title, query, source, total_count, searched, result}``."""

    status: Literal["success"] = "success"
    arxiv_id: str
    title: str | None
    query: str
    source: Literal["fulltext", "abstract"] = Field(
        description="fulltext: the paper's full-text passages were searched; abstract: it has no full "
        "text in this corpus, so its abstract's sentences were."
    )
    searched: int = Field(description="Passages (or sentences) searched.")
    total_count: int = Field(description="How many of them hold at least one query word.")
    result: list[FindHit]
