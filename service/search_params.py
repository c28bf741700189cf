"""The search parameters the fronts offer, declared once: their limits, defaults, wire types and help.

The fronts offer the same search and filter parameters: the MCP tools (``search_papers``,
``search_passages``, ``similar_papers``, ``facets``) as tool arguments, the HTTP front as the fields
of ``POST /search`` and ``/v1/search`` bodies (`openxiv.service.models`) and as the query parameters
of ``GET /arxiv/``, ``openxiv search`` as options. Each front renders a parameter in its framework's
terms (a pydantic ``Field`` of a tool argument, `openxiv.service.mcp.arguments`; a body field; a
FastAPI ``Query``; a click option, `openxiv.service.terminal.cli`) from what is declared here, and
`openxiv.service.params` checks the values (`FilterParams.build`, `check_range`, `check_sort`,
`check_mode`) against the same limits.

A `SearchParam` holds the help each surface publishes for one parameter. The surfaces were written
for different readers (an agent reads a tool argument, a client author the OpenAPI page of a body
field or a query parameter) and are public, so their wordings are kept as published, side by side:
a change of meaning or a new parameter is made here once, where the wordings can be seen together.

A new filter: a field of `FilterParams` (its check), a `SearchParam` here
(tests/service/test_search_params.py fails while a `FilterParams` field has none), and a line in the
signature of each front that offers it, whose help comes from here. The signatures stay explicit:
the tools' JSON schemas and the OpenAPI parameters follow their order, which is public.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from openxiv.corpus.settings.modes import mode_help

__all__ = [
    "AUTHORS",
    "CATEGORIES",
    "CITATION_SORT_DEPTH",
    "DATE_FROM",
    "DATE_SEARCH_TYPE",
    "DATE_SEARCH_TYPES",
    "DATE_STR",
    "DATE_TO",
    "DEFAULT_TOP_K",
    "FINE_RERANK",
    "MAX_FILTER_VALUES",
    "MIN_CITATION",
    "MODE",
    "OFFSET",
    "OFFSET_MAX",
    "ORGS",
    "SEARCH_PARAMS",
    "SORT",
    "SORTS",
    "TOP_K",
    "TOP_K_MAX",
    "VENUE",
    "VENUE_YEAR",
    "Offset",
    "SearchParam",
    "StrList",
    "TopK",
]

TOP_K_MAX = 100
"""Most hits one page may hold (``top_k``/``size``)."""
DEFAULT_TOP_K = 10
"""Hits per page when ``top_k`` is not given, or given as ``null`` (DeepXiv's default)."""
OFFSET_MAX = 10_000
"""Deepest page start (``offset``)."""
TopK = Annotated[int, Field(ge=1, le=TOP_K_MAX)]
Offset = Annotated[int, Field(ge=0, le=OFFSET_MAX)]
MAX_FILTER_VALUES = 50
"""Most values one list parameter may hold (categories, authors, venues, ids)."""
DATE_SEARCH_TYPES = ("between", "exact", "after", "before")
SORTS = ("relevance", "citations")
"""What ``sort`` takes: relevance order (the default), or by in-corpus citation count."""
CITATION_SORT_DEPTH = 100
"""Matches (in relevance order) that ``sort=citations`` orders by in-corpus citation count; a page
reaching deeper takes the matches down to its end (`openxiv.service.search`)."""

StrList = str | list[str] | None
"""A list parameter on the wire: one string (comma-separated values) or a list of strings."""


@dataclass(frozen=True)
class SearchParam:
    """One search parameter: its name and the help each surface publishes for it (``None``: none)."""

    name: str
    """The DeepXiv name: the body field, the ``GET /arxiv/`` parameter and (but `tool_name`) the tool argument."""
    tool: str | None = None
    """The MCP tools' argument."""
    body: str | None = None
    """``POST /search``'s body field (DeepXiv's shape)."""
    v1: str | None = None
    """``/v1/search``'s body field."""
    arxiv: str | None = None
    """``GET /arxiv/``'s query parameter."""
    cli: str | None = None
    """The terminal's option (``openxiv search``)."""
    tool_name: str | None = None
    """The tools' name when it is not `name` (``size`` for ``top_k``)."""

    @property
    def argument(self) -> str:
        """The name the MCP tools take it by."""
        return self.tool_name or self.name


_SORTED = f"the {CITATION_SORT_DEPTH} best matches"
_CITED_BY = "Keep papers cited by at least this many papers of this corpus (in-corpus counts"

TOP_K = SearchParam(
    "top_k",
    tool=f"Number of results, 1-{TOP_K_MAX}",
    body=f"Hits per query, 1-{TOP_K_MAX} (null: {DEFAULT_TOP_K}); more is clamped to {TOP_K_MAX} "
    "(said in `warnings`).",
    v1=f"Hits per page, 1-{TOP_K_MAX}.",
    arxiv=f"1-{TOP_K_MAX} (default {DEFAULT_TOP_K})",
    cli=f"Hits to show, 1-{TOP_K_MAX}.",
    tool_name="size",
)
OFFSET = SearchParam(
    "offset",
    tool=f"Results to skip (paging), 0-{OFFSET_MAX}",
    body=f"Hits to skip (paging), 0-{OFFSET_MAX}.",
    v1=f"Hits to skip (paging), 0-{OFFSET_MAX}.",
    cli=f"Hits to skip (paging), 0-{OFFSET_MAX}.",
)
CATEGORIES = SearchParam(
    "categories",
    tool="arXiv categories or archives, a list or comma-separated: cs.CL,cs.AI",
    body="Keep papers in any of these categories/archives.",
    cli="Keep papers in this category or archive (repeat or comma-separate).",
)
AUTHORS = SearchParam(
    "authors",
    tool="Author names, a list or comma-separated",
    body="Keep papers with an author matching any of these names.",
    cli="Keep papers with an author matching this name (repeat or comma-separate).",
)
DATE_FROM = SearchParam(
    "date_from",
    tool="Earliest date, inclusive: YYYY[-MM[-DD]]",
    body="Legacy: inclusive lower bound (YYYY[-MM[-DD]]).",
    v1="Inclusive, YYYY[-MM[-DD]] (start of the period).",
    cli="Earliest date, inclusive: YYYY[-MM[-DD]].",
)
DATE_TO = SearchParam(
    "date_to",
    tool="Latest date, inclusive: YYYY[-MM[-DD]]",
    body="Legacy: inclusive upper bound (YYYY[-MM[-DD]]).",
    v1="Inclusive, YYYY[-MM[-DD]] (end of the period).",
    cli="Latest date, inclusive: YYYY[-MM[-DD]].",
)
DATE_SEARCH_TYPE = SearchParam(
    "date_search_type",
    body=" | ".join(DATE_SEARCH_TYPES),
    arxiv=" | ".join(DATE_SEARCH_TYPES),
    cli="With --date-str (twice for between): the DeepXiv date filter.",
)
DATE_STR = SearchParam(
    "date_str",
    body="YYYY, YYYY-MM or YYYY-MM-DD; two values for between.",
    arxiv="YYYY[-MM[-DD]]; twice (or START,END) for between",
    cli="YYYY[-MM[-DD]] for --date-search-type.",
)
VENUE = SearchParam(
    "venue",
    body="Keep papers whose journal reference names any of these venues (phrase).",
    arxiv="Venue named in the journal reference (repeat or comma-separate)",
    cli="Keep papers whose journal reference names this venue.",
)
VENUE_YEAR = SearchParam(
    "venue_year",
    body="Keep papers whose journal reference names this year.",
    arxiv="Year named in the journal reference",
    cli="Keep papers whose journal reference names this year.",
)
MIN_CITATION = SearchParam(
    "min_citation",
    tool=_CITED_BY + ")",
    body=_CITED_BY + "; 0: no filter).",
    v1=_CITED_BY + "; 0: no filter).",
    arxiv=_CITED_BY + ")",
    cli=_CITED_BY + ").",
)
ORGS = SearchParam(
    "orgs",
    body="400: the corpus has no affiliations (lenient mode: warning).",
    arxiv="400: the corpus has no affiliations (see lenient mode)",
)
SORT = SearchParam(
    "sort",
    tool=f"relevance (default) or citations: {_SORTED} by in-corpus citation count",
    body=f"relevance (default) | citations: {_SORTED} (more when the page reaches deeper) "
    "ordered by in-corpus citation count, ties by relevance.",
    v1=f"relevance (default) | citations: {_SORTED} ordered by in-corpus citation count.",
    arxiv=f"relevance (default) | citations: {_SORTED} by in-corpus citations",
    cli=f"citations: {_SORTED} ordered by in-corpus citation count (ties by relevance).",
)
MODE = SearchParam(
    "mode",
    # the tools name the modes an agent picks from, with what each is for; the others print them all
    tool="Ranking: hybrid (default), bm25 (keywords), dense (meaning), weighted, zscore, rrf",
    body=mode_help(),
    v1=mode_help(),
    arxiv=mode_help(),
    cli=mode_help(),
)
FINE_RERANK = SearchParam(
    "use_fine_rerank",
    tool="Reorder the first papers with the cross-encoder (slower, better order)",
    body="DeepXiv's: true reorders the first `OPENXIV_RERANK_DEPTH` papers with the cross-encoder.",
    arxiv="Reorder the first papers with the cross-encoder",
    cli="Reorder the first OPENXIV_RERANK_DEPTH hits with the cross-encoder (use_fine_rerank).",
)

SEARCH_PARAMS = (
    TOP_K,
    OFFSET,
    CATEGORIES,
    AUTHORS,
    DATE_FROM,
    DATE_TO,
    DATE_SEARCH_TYPE,
    DATE_STR,
    VENUE,
    VENUE_YEAR,
    MIN_CITATION,
    ORGS,
    SORT,
    MODE,
    FINE_RERANK,
)
"""Every declared search parameter."""
