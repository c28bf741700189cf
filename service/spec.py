"""One search as a front asks it: `SearchSpec`, built once by each front and passed down whole.

Every way in (``POST /search``, ``GET /arxiv/?type=retrieve``, ``/v1/search``, the web page,
``POST /retrieve``, the agent search, the MCP tool and ``openxiv search`` through `Library`) checks its
own parameters (`openxiv.service.params`) and builds one `SearchSpec`; the use case
(`openxiv.service.search`) takes it as it is and hands the ranking part to the engine
(`openxiv.indexer.backend.SearchBackend.search`). A new search parameter is a field here, a line in
the fronts that offer it and a line where it is used, not a keyword threaded through every call.

(The name is not ``SearchRequest``: that is ``POST /search``'s body model, `openxiv.service.models`.)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from openxiv.indexer.backend import SearchFilters

__all__ = ["SearchSpec"]


@dataclass(frozen=True)
class SearchSpec:
    """The checked parameters of one search: its queries, the page, the filters, the mode, the flags."""

    queries: tuple[str, ...]
    """The checked queries (`openxiv.service.params.check_queries`): one, or a batch."""
    top_k: int = 10
    """Hits per page (per query in a batch; the merged list is cut to it too)."""
    offset: int = 0
    """Hits skipped before the page."""
    filters: SearchFilters = field(default_factory=SearchFilters)
    """Restrictions applied before the cut (`SearchFilters`; none by default)."""
    mode: str | None = None
    """The checked ranking mode; ``None`` is the configured default."""
    contents: bool = True
    """Add each hit's evidence passage."""
    batch: bool = False
    """The queries came as a list: answer per query and their round-robin merge."""
    fine_rerank: bool = False
    """``use_fine_rerank``: reorder each query's first ``Settings.rerank_depth`` papers with the
    reranker (`openxiv.service.fine_rerank`)."""
    sort: str = "relevance"
    """``relevance``, or ``citations``: the first `openxiv.service.search_params.CITATION_SORT_DEPTH` matches
    (more when the page reaches deeper) ordered by in-corpus citation count, ties in relevance order
    (`openxiv.service.params.check_sort`)."""

    @property
    def query(self) -> str:
        """The query of a single search (the first of a batch)."""
        return self.queries[0]

    def one(self, query: str) -> SearchSpec:
        """This search for one of its queries alone (how a batch runs each)."""
        return replace(self, queries=(query,), batch=False)
