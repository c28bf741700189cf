"""BrowseComp-Plus' retrieval tools over a snapshot: ``search(query)`` and ``get_document(docid)``.

BrowseComp-Plus' MCP server (``searcher/mcp_server.py``, ``searcher/tools.py``) fixes ``k`` and a
snippet budget when it starts and exposes ``search(query) -> [{docid, score, snippet}]`` (the
snippet is the start of the document's text, cut to ``snippet_max_tokens`` tokens; ``-1`` keeps the
whole text) and ``get_document(docid) -> {docid, text}``. `BrowseCompTools` is that over the hybrid
search: a document is one paper, its text the paper as markdown (title, abstract, every section:
what ``GET /arxiv/?type=raw`` answers), its docid the arXiv id.

Tokens are openxiv's estimate (words × 1.3, `openxiv.service.text.token_count`), not the Qwen3
tokenizer BrowseComp-Plus counts with: no tokenizer is downloaded, and a snippet of N estimated
tokens is within a few percent of N subword tokens on English prose.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from openxiv.service.library import Library
from openxiv.service.models import SearchResponse
from openxiv.service.params import TOP_K_MAX, check_range

__all__ = ["DEFAULT_K", "DEFAULT_SNIPPET_TOKENS", "BrowseCompTools", "cut_tokens"]

DEFAULT_K = 5
DEFAULT_SNIPPET_TOKENS = 512
_WORD = re.compile(r"\S+")


def cut_tokens(text: str, max_tokens: int) -> str:
    """The start of ``text`` holding at most ``max_tokens`` estimated tokens (whole words, the
    original spacing and line breaks kept); ``max_tokens < 0``: the whole text."""
    if max_tokens < 0:
        return text
    words = math.floor(max_tokens / 1.3)
    end = 0
    for n, m in enumerate(_WORD.finditer(text), start=1):
        if n > words:
            return text[:end]
        end = m.end()
    return text


@dataclass(frozen=True)
class BrowseCompTools:
    library: Library
    k: int = DEFAULT_K
    snippet_max_tokens: int = DEFAULT_SNIPPET_TOKENS

    def __post_init__(self) -> None:
        check_range(self.k, "k", 1, TOP_K_MAX)
        if self.snippet_max_tokens < -1 or self.snippet_max_tokens == 0:
            raise ValueError(
                f"snippet_max_tokens: a positive number or -1 (whole text), got {self.snippet_max_tokens}"
            )

    def document_text(self, docid: str) -> str:
        """The paper as markdown (a `NotFound` for an unknown docid, `BadRequest` for a malformed one)."""
        text: str = self.library.paper("raw", docid).raw
        return text

    def search(self, query: str) -> list[dict[str, Any]]:
        """The top ``k`` papers: ``[{docid, score, snippet}]``."""
        return self._hits(self.library.search(query, top_k=self.k, contents=False))

    async def asearch(self, query: str) -> list[dict[str, Any]]:
        """`search` on an event loop (the MCP tool's): a model server awaited outside the compute
        slots, the snippets read in one."""
        response = await self.library.asearch(query, top_k=self.k, contents=False)
        return await anyio.to_thread.run_sync(self._hits, response)

    def _hits(self, response: SearchResponse) -> list[dict[str, Any]]:
        return [
            {
                "docid": hit.arxiv_id,
                "score": hit.score,
                "snippet": cut_tokens(self.document_text(hit.arxiv_id), self.snippet_max_tokens),
            }
            for hit in response.result
        ]

    def get_document(self, docid: str) -> dict[str, Any]:
        """``{docid, text}``: the whole paper."""
        raw = self.library.paper("raw", docid)
        return {"docid": raw.arxiv_id, "text": raw.raw}
