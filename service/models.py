"""Pydantic models of every HTTP request and response (the typed boundary of the service).

Two families:

- the **DeepXiv-compatible** shapes read by the AutoResearchBench agent (``POST /search``) and by the
  ``deepxiv-sdk`` ``Reader`` (``GET /arxiv/?type=...``); field names follow DeepXiv;
- **openxiv v1** shapes (``/v1/...``): the same data with plain names and no compatibility baggage.

Unknown values are ``null`` (citation counts, keywords, GitHub links): the corpus does not hold them
and nothing is invented. Author ``orgs`` is the exception: always a list (``[]`` when unknown), since
the DeepXiv SDK's own code iterates it. Dates are ISO 8601 (``YYYY-MM-DD``).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from openxiv.corpus.records import TitleSource
from openxiv.service.search_params import (
    AUTHORS,
    CATEGORIES,
    DATE_FROM,
    DATE_SEARCH_TYPE,
    DATE_STR,
    DATE_TO,
    DEFAULT_TOP_K,
    FINE_RERANK,
    MIN_CITATION,
    MODE,
    OFFSET,
    ORGS,
    SORT,
    TOP_K,
    VENUE,
    VENUE_YEAR,
    Offset,
    StrList,
    TopK,
)
from openxiv.service.text import ServedText

__all__ = [
    "Author",
    "BriefResponse",
    "Content",
    "ErrorResponse",
    "Evidence",
    "HeadResponse",
    "HeadSection",
    "Health",
    "Hit",
    "IndexInfo",
    "PaperHeadOut",
    "PaperJson",
    "PaperMetadataOut",
    "PreviewResponse",
    "QueryResult",
    "RawResponse",
    "ReloadResponse",
    "SearchRequest",
    "SearchResponse",
    "SectionResponse",
    "V1Hit",
    "V1Paper",
    "V1SearchRequest",
    "V1SearchResponse",
    "V1Section",
    "V1SectionSummary",
]

ServedTitleSource = Annotated[
    TitleSource,
    Field(
        description="Where `title` comes from: metadata (a listing, OAI or unarXive record, PDF metadata), "
        "text (the opening of the paper's text), or derived: no source gave a title, so it is the paper's "
        "first real sentence (at most 120 characters, … marks a cut), or arXiv:<id> without one."
    ),
]
SubjectClasses = Annotated[
    list[str],
    Field(
        default_factory=list,
        description="MSC/ACM subject class codes (68T45, I.2.10) the source listed among the categories: "
        "not arXiv categories, so the category filter does not take them.",
    ),
]


class ErrorResponse(BaseModel):
    status: Literal["error"] = "error"
    detail: str = Field(description="What was wrong with the request, naming the parameter.")


# ---------------------------------------------------------------- DeepXiv-compatible search
class SearchRequest(BaseModel):
    """Body of ``POST /search`` (also ``POST /arxiv/retrieve`` and ``POST /``).

    Exactly what the AutoResearchBench agent sends (``query``, ``top_k``, ``return_contents``), plus
    optional filters and paging with the DeepXiv parameter names. Unknown keys are ignored.
    """

    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={"examples": [{"query": "retrieval augmented generation", "top_k": 10}]},
    )

    query: str | list[str] = Field(
        description="One query, or a list of queries answered in order (a batch; see `results`)."
    )
    top_k: int | None = Field(DEFAULT_TOP_K, ge=1, description=TOP_K.body)
    offset: Offset = Field(0, description=OFFSET.body)
    return_contents: bool = Field(True, description="Add the evidence passage to each hit (`contents`).")
    categories: StrList = Field(default=None, description=CATEGORIES.body)
    authors: StrList = Field(default=None, description=AUTHORS.body)
    orgs: StrList = Field(default=None, description=ORGS.body)
    min_citation: int | None = Field(default=None, ge=0, description=MIN_CITATION.body)
    sort: str | None = Field(default=None, description=SORT.body)
    date_search_type: str | None = Field(default=None, description=DATE_SEARCH_TYPE.body)
    date_str: StrList = Field(default=None, description=DATE_STR.body)
    date_from: str | None = Field(default=None, description=DATE_FROM.body)
    date_to: str | None = Field(default=None, description=DATE_TO.body)
    venue: StrList = Field(default=None, description=VENUE.body)
    venue_year: int | None = Field(default=None, description=VENUE_YEAR.body)
    mode: str | None = Field(default=None, description=MODE.body)
    use_fine_rerank: bool | None = Field(default=None, description=FINE_RERANK.body)


class Author(BaseModel):
    name: str
    orgs: list[str] = Field(
        default_factory=list,
        description="Affiliations; always a list, empty when unknown (the corpus holds none).",
    )


class Content(BaseModel):
    section_title: str | None = Field(default=None, description="Section the passage comes from.")
    section_contents: list[ServedText] = Field(description="The evidence passage (one string).")


class Hit(BaseModel):
    """One search hit, DeepXiv ``retrieve`` item."""

    arxiv_id: str = Field(description="Bare, version-free arXiv id.")
    title: str | None
    title_source: ServedTitleSource
    score: float = Field(description="Fused ranking score; comparable only within one response.")
    abstract: ServedText | None
    tldr: ServedText | None = Field(description="Extractive: first sentence(s) of the abstract.")
    authors: list[Author]
    url: str
    date: str | None = Field(
        description="ISO 8601 date: v1 date, else first listing day, else the first day of the month "
        "the arXiv id encodes (then only the month is known; the v1 API says so in date_precision)."
    )
    citation_count: int | None = Field(
        default=None,
        description="Papers of THIS CORPUS whose bibliography cites it (an in-corpus count, resolved at index build from the bibliographies the corpus holds: not a global citation count); null when the snapshot was built before counts were stored.",
    )
    categories: list[str]
    subject_classes: SubjectClasses
    contents: list[Content] | None = Field(
        default=None, description="`[{section_title, section_contents: [evidence passage]}]` when asked for."
    )


class QueryResult(BaseModel):
    query: str
    total_count: int
    result: list[Hit]


class SearchResponse(BaseModel):
    """``{status, total_count, result}``; batches add ``results`` (one entry per query, in order).

    For a batch, ``result`` holds the per-query lists merged round-robin by rank (first query's
    best hit, second query's best hit, ...), de-duplicated by paper and cut to ``top_k``;
    ``total_count`` is then the number of distinct papers in the per-query pages.
    """

    status: Literal["success"] = "success"
    total_count: int
    result: list[Hit]
    results: list[QueryResult] | None = Field(
        default=None, description="Batch only: per-query hits, in order."
    )
    warnings: list[str] | None = Field(
        default=None,
        description="What the server changed or did not apply (clamped top_k, skipped queries, ...).",
    )


# ---------------------------------------------------------------- DeepXiv-compatible reading
class HeadSection(BaseModel):
    name: str
    idx: int = Field(description="0-based position in the paper; -1 for the abstract, listed first.")
    number: str | None = Field(default=None, description="Section number as printed, when known.")
    tldr: ServedText | None
    token_count: int = Field(description="Estimate: words × 1.3.")


class HeadResponse(BaseModel):
    arxiv_id: str
    title: str | None
    title_source: ServedTitleSource
    abstract: ServedText | None
    authors: list[Author]
    categories: list[str]
    subject_classes: SubjectClasses
    publish_at: str | None
    token_count: int = Field(description="Estimate for the whole text (words × 1.3).")
    sections: list[HeadSection]
    has_fulltext: bool
    url: str


class BriefResponse(BaseModel):
    arxiv_id: str
    title: str | None
    title_source: ServedTitleSource
    tldr: ServedText | None
    keywords: list[str] | None = Field(default=None, description="Always null: no keywords in the corpus.")
    publish_at: str | None
    citations: int | None = Field(
        default=None,
        description="Papers of THIS CORPUS whose bibliography cites it (an in-corpus count, resolved at index build from the bibliographies the corpus holds: not a global citation count); null when the snapshot was built before counts were stored.",
    )
    citation_count: int | None = Field(
        default=None, description="The same as `citations` (a third-party client reads this name)."
    )
    src_url: str = Field(description="arXiv PDF link.")
    github_url: str | None = None
    authors: list[Author]
    abstract: ServedText | None
    year: int | None


class SectionResponse(BaseModel):
    arxiv_id: str
    name: str
    idx: int
    number: str | None = Field(default=None, description="The section's number as the paper prints it.")
    content: ServedText


class RawResponse(BaseModel):
    arxiv_id: str
    raw: ServedText = Field(description="Markdown: title, abstract, then every section.")


class PreviewResponse(BaseModel):
    arxiv_id: str
    content: ServedText
    is_truncated: bool
    total_characters: int


class PaperHeadOut(BaseModel):
    """The fields a whole-paper answer (`PaperJson`, `V1Paper`) opens with, declared once.

    The metadata both answers share is declared in two runs, this one and `PaperMetadataOut`,
    because each answer puts fields of its own between them and the key order of a JSON answer
    is part of the API. A model lists them as ``class X(PaperMetadataOut, _Own, PaperHeadOut)``:
    pydantic orders fields from the last base to the first."""

    arxiv_id: str
    version: int | None
    title: str | None
    title_source: ServedTitleSource
    abstract: ServedText | None


class PaperMetadataOut(BaseModel):
    """Dates and publication facts of a whole-paper answer, declared once (see `PaperHeadOut`)."""

    published: dt.date | None
    updated: dt.date | None
    first_seen: dt.date | None
    comment: str | None
    license: str | None
    journal_ref: str | None
    doi: str | None


class _PaperJsonPeople(BaseModel):
    authors: list[Author]
    categories: list[str]
    subject_classes: SubjectClasses


class JsonSection(TypedDict):
    """One section of `PaperJson`, in reading order."""

    idx: int
    name: str
    number: str | None
    text: ServedText


class PaperJson(PaperMetadataOut, _PaperJsonPeople, PaperHeadOut):
    """``type=json``: everything the corpus holds about one paper."""

    sources: list[str]
    sections: list[JsonSection]


# ---------------------------------------------------------------- openxiv v1
class V1SearchRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"query": "diffusion language models", "top_k": 10, "categories": ["cs.CL"]}]
        },
    )

    query: str
    top_k: TopK = Field(DEFAULT_TOP_K, description=TOP_K.v1)
    offset: Offset = Field(0, description=OFFSET.v1)
    categories: list[str] = Field(default_factory=list)
    authors: list[str] = Field(default_factory=list)
    date_from: str | None = Field(default=None, description=DATE_FROM.v1)
    date_to: str | None = Field(default=None, description=DATE_TO.v1)
    mode: str | None = Field(default=None, description=MODE.v1)
    return_contents: bool = True
    min_citation: int | None = Field(default=None, ge=0, description=MIN_CITATION.v1)
    sort: str | None = Field(default=None, description=SORT.v1)


class Evidence(BaseModel):
    text: ServedText
    section: str | None
    passage_id: int | None
    source: Literal["passage", "fulltext", "abstract", "title"] = Field(
        description="passage: the ranker's best passage; abstract: best abstract sentence(s) by the "
        "index's analyzed query terms; title: nothing else known; fulltext: no longer produced."
    )


DatePrecision = Literal["day", "month"]
DATE_PRECISION_DOC = (
    "day: the date is v1's or the first listing day; month: only the month is known (from the arXiv "
    "id), and date is its first day. Date filters keep a paper whose day or month overlaps the range."
)


class V1Hit(BaseModel):
    rank: int
    arxiv_id: str
    title: str | None
    title_source: ServedTitleSource
    score: float
    authors: list[str]
    categories: list[str]
    subject_classes: SubjectClasses
    date: dt.date | None
    date_precision: DatePrecision | None = Field(description=DATE_PRECISION_DOC)
    tldr: ServedText | None
    url: str
    citation_count: int | None = Field(
        default=None,
        description="Papers of THIS CORPUS whose bibliography cites it (an in-corpus count, resolved at index build from the bibliographies the corpus holds: not a global citation count); null when the snapshot was built before counts were stored.",
    )
    evidence: Evidence | None
    signals: dict[str, Any]


class V1SearchResponse(BaseModel):
    query: str
    total_count: int
    offset: int
    top_k: int
    hits: list[V1Hit]
    timings_ms: dict[str, float]
    snapshot: str | None
    warnings: list[str] | None = None
    """What the caller should know about this answer (e.g. the dense ranking left out because the
    model server did not answer); absent when there is nothing to say."""


class V1SectionSummary(BaseModel):
    idx: int
    name: str
    number: str | None
    tldr: ServedText | None
    token_count: int


class _V1PaperSummary(BaseModel):
    tldr: ServedText | None
    authors: list[str]
    categories: list[str]
    subject_classes: SubjectClasses
    date: dt.date | None
    date_precision: DatePrecision | None = Field(description=DATE_PRECISION_DOC)


class V1Paper(PaperMetadataOut, _V1PaperSummary, PaperHeadOut):
    has_fulltext: bool
    url: str
    pdf_url: str
    token_count: int
    sections: list[V1SectionSummary]


class V1Section(BaseModel):
    arxiv_id: str
    idx: int
    name: str
    number: str | None
    token_count: int
    text: ServedText


class IndexInfo(BaseModel):
    snapshot: str | None
    path: str
    loaded_at: str
    reloads: int
    manifest: dict[str, Any]
    stats: dict[str, Any]
    backend: dict[str, Any]
    experiments: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    """The experiment controls that are on (ledger, replay, cutoffs, faults; docs/ledger.md); absent
    when none is."""


class ReloadResponse(BaseModel):
    status: Literal["reloaded", "unchanged"]
    snapshot: str | None
    previous: str | None


class Health(BaseModel):
    status: str
    snapshot: str | None = None
    experiments: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    """The experiment controls that are on (docs/ledger.md); absent when none is."""
    warm: str | None = None
    """The snapshot's warm-up (`OPENXIV_SERVE_WARM`): ``warming: <read> of <total> in <seconds> s``,
    ``warm: <total> of <files> files in <seconds> s``, or ``off``; only on ``/readyz``."""
