"""Request parameters to typed values: lists, dates, filters, ranking modes, queries.

Every problem raises `BadRequest` with a message that names the parameter, so the client gets a 400
it can act on. Nothing here touches the file system or SQL: values are validated, then handed to the
backend and the store as plain data.

Date semantics (``date_search_type`` with ``date_str`` as ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``):

- ``exact X``: the whole period X (a year, a month or a day);
- ``between X Y``: from the first day of X to the last day of Y, inclusive;
- ``after X``: on or after the first day of X (``after 2025`` includes 2025);
- ``before X``: strictly before the first day of X (``before 2025`` ends on 2024-12-31).

Legacy ``date_from``/``date_to`` are inclusive: first day of ``date_from``, last day of ``date_to``.

Venues: ``venue`` values (lists like ``authors``) keep papers whose ``journal_ref`` holds the venue
name as a phrase (case, accents and punctuation folded); ``venue_year`` keeps papers whose
``journal_ref`` names that year. Both are real filters; papers without a journal reference never
pass them.

Modes: the vocabulary is `openxiv.corpus.settings.modes.parse_mode`; `check_mode` only turns
its `UnknownMode` into a 400 naming the parameter (``mode`` or the legacy ``search_mode``).

Paging: `TOP_K_MAX` and `OFFSET_MAX` are the limits of every route, declared once with the `TopK` and
`Offset` types the models and query parameters use (in `openxiv.service.search_params`, with the
other search parameters' limits and help); ``POST /search`` alone clamps a larger
``top_k`` (`clamp_top_k`), as the AutoResearchBench client cannot show a 400.

DeepXiv's own limits decide what its shapes refuse (deepxiv-sdk 1.2.2, docs/service.md "What
DeepXiv's shapes accept"): a ``top_k`` of ``null`` is its default, 10; a search query longer than
``max_query_chars`` is cut to it with a warning (`cut_long_queries`; the SDK sends any length);
``top_k`` below 1 stays a 400, as the SDK refuses it too.

Citations: ``min_citation`` (DeepXiv's) keeps papers cited by at least that many papers **of this
corpus** (the in-corpus counts the index build resolves from the bibliographies the corpus holds,
`openxiv.indexer.building.references`); 0 filters nothing.

Unappliable filters: ``orgs`` (DeepXiv's) needs data the corpus lacks (affiliations); it is a
400 unless an operator set ``OPENXIV_LENIENT_FILTERS=1`` (`unsupported_filters`). ``POST /search``
also skips empty strings in a batch with a warning (`lenient_batch`).

Cost: a request may carry at most `MAX_QUERY_FILTER_WORK` queries × filter values (categories,
authors and venues together); more is a 400 naming the limit.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import date

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.modes import UnknownMode, parse_mode
from openxiv.indexer.backend import SearchFilters
from openxiv.service.errors import BadRequest
from openxiv.service.search_params import (
    DATE_SEARCH_TYPES,
    DEFAULT_TOP_K,
    MAX_FILTER_VALUES,
    OFFSET_MAX,
    SORTS,
    TOP_K_MAX,
    Offset,
    TopK,
)

__all__ = [
    "DATE_SEARCH_TYPES",
    "DEFAULT_TOP_K",
    "MAX_BATCH",
    "MAX_FILTER_VALUES",
    "MAX_QUERY_FILTER_WORK",
    "OFFSET_MAX",
    "SORTS",
    "TOP_K_MAX",
    "BadRequest",
    "FilterParams",
    "Offset",
    "TopK",
    "build_filters",
    "check_mode",
    "check_queries",
    "check_range",
    "check_size",
    "check_sort",
    "check_work",
    "clamp_top_k",
    "cut_long_queries",
    "lenient_batch",
    "parse_period",
    "split_list",
    "unsupported_filters",
]

MAX_BATCH = 50
MAX_MIN_CITATION = 10_000_000
"""Largest ``min_citation`` taken (a larger count is a typo: no paper has it)."""
MAX_QUERY_FILTER_WORK = 500
"""Queries × filter values one request may ask for (10 queries with 50 authors is the most)."""
_VENUE_YEARS = (1800, 2100)
_MAX_VALUE_CHARS = 200
_CATEGORY = re.compile(r"^[A-Za-z][A-Za-z-]*(?:\.[A-Za-z][A-Za-z-]*)?$")
UNAPPLIABLE = {"orgs": "affiliations"}
"""Filters the corpus has no data for -> what it lacks."""

_PERIOD = re.compile(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ][0-9:.+\-Z]*)?$")


def split_list(values: str | Iterable[str] | None, name: str, unique: bool = True) -> tuple[str, ...]:
    """Repeated keys and comma-separated values, flattened, stripped, de-duplicated in order (with
    ``unique``; without, a value given twice stays twice: ``date_str`` of ``between X and X``)."""
    if values is None:
        return ()
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise BadRequest(f"{name}: expected strings, got {type(value).__name__}")
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            if len(part) > _MAX_VALUE_CHARS:
                raise BadRequest(f"{name}: value longer than {_MAX_VALUE_CHARS} characters")
            out.append(part)
    if unique:
        out = list(dict.fromkeys(out))
    if len(out) > MAX_FILTER_VALUES:
        raise BadRequest(f"{name}: at most {MAX_FILTER_VALUES} values, got {len(out)}")
    return tuple(out)


def parse_period(text: str, name: str = "date_str") -> tuple[date, date]:
    """``YYYY``/``YYYY-MM``/``YYYY-MM-DD`` (a time part is ignored) -> (first day, last day)."""
    m = _PERIOD.match(text.strip())
    if not m:
        raise BadRequest(f"{name}: {text!r} is not a date; use YYYY, YYYY-MM or YYYY-MM-DD")
    year = int(m.group(1))
    month = int(m.group(2)) if m.group(2) else None
    day = int(m.group(3)) if m.group(3) else None
    try:
        if month is None:
            return date(year, 1, 1), date(year, 12, 31)
        if day is None:
            last = calendar.monthrange(year, month)[1]
            return date(year, month, 1), date(year, month, last)
        d = date(year, month, day)
        return d, d
    except (ValueError, calendar.IllegalMonthError) as exc:
        raise BadRequest(f"{name}: {text!r} is not a valid date ({exc})") from exc


def _date_range(
    search_type: str | None, date_str: tuple[str, ...], date_from: str | None, date_to: str | None
) -> tuple[date | None, date | None]:
    if search_type is None:
        if date_str:
            raise BadRequest("date_str needs date_search_type (between, exact, after or before)")
        lo = parse_period(date_from, "date_from")[0] if date_from else None
        hi = parse_period(date_to, "date_to")[1] if date_to else None
        return lo, hi
    kind = search_type.strip().lower()
    if kind not in DATE_SEARCH_TYPES:
        raise BadRequest(f"date_search_type: {search_type!r} is not one of {', '.join(DATE_SEARCH_TYPES)}")
    if date_from or date_to:
        raise BadRequest("give either date_search_type/date_str or date_from/date_to, not both")
    want = 2 if kind == "between" else 1
    if want == 1:  # the same date given twice is that date
        date_str = tuple(dict.fromkeys(date_str))
    if len(date_str) != want:
        raise BadRequest(
            f"date_str: date_search_type={kind} needs {want} date value(s), got {len(date_str)}"
            + (" (send date_str twice or 'START,END')" if want == 2 else "")
        )
    first = parse_period(date_str[0])
    if kind == "exact":
        return first
    if kind == "after":
        return first[0], None
    if kind == "before":
        if first[0] == date.min:
            raise BadRequest(
                f"date_str: before {date_str[0]} is an empty range (no date precedes 0001-01-01)"
            )
        return None, date.fromordinal(first[0].toordinal() - 1)
    last = parse_period(date_str[1])
    if last[1] < first[0]:
        raise BadRequest(f"date_str: between {date_str[0]} and {date_str[1]} is an empty range")
    return first[0], last[1]


def build_filters(
    *,
    categories: str | Iterable[str] | None = None,
    authors: str | Iterable[str] | None = None,
    date_search_type: str | None = None,
    date_str: str | Iterable[str] | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
    venue: str | Iterable[str] | None = None,
    venue_year: int | None = None,
    min_citation: int | None = None,
) -> SearchFilters:
    """The backend's `SearchFilters` from DeepXiv-style parameters (see the module docstring)."""
    cats = split_list(categories, "categories")
    for c in cats:
        if not _CATEGORY.match(c):
            raise BadRequest(f"categories: {c!r} is not an arXiv category (like cs.CL or astro-ph)")
    names = split_list(authors, "authors")
    lo, hi = _date_range(
        date_search_type.strip() if date_search_type and date_search_type.strip() else None,
        split_list(date_str, "date_str", unique=False),  # between X and X is two values
        date_from.strip() if date_from and date_from.strip() else None,
        date_to.strip() if date_to and date_to.strip() else None,
    )
    if lo and hi and hi < lo:
        raise BadRequest(f"date range is empty: {lo.isoformat()} is after {hi.isoformat()}")
    return SearchFilters(
        categories=cats,
        authors=names,
        venues=split_list(venue, "venue"),
        venue_year=_venue_year(venue_year),
        date_from=lo,
        date_to=hi,
        min_citation=_min_citation(min_citation),
    )


def check_sort(value: str | None) -> str:
    """``sort`` checked (``None`` or empty: ``relevance``), or a `BadRequest` naming it."""
    v = (value or "").strip().lower() or "relevance"
    if v not in SORTS:
        raise BadRequest(f"sort: {value!r} is not one of {', '.join(SORTS)}")
    return v


def _min_citation(value: int | None) -> int | None:
    """``min_citation`` as the backend's filter: ``None`` or 0 filters nothing (every paper has at
    least 0 citations, so the answer stays the unfiltered one); a negative value or a non-integer is
    a `BadRequest`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRequest(f"min_citation: {value!r} is not a count (an integer of 0 or more)")
    if value > MAX_MIN_CITATION:
        raise BadRequest(f"min_citation: {value} is more than {MAX_MIN_CITATION}")
    return value or None


_Values = str | Iterable[str] | None


@dataclass(frozen=True)
class FilterParams:
    """The filter parameters of one search as a caller sent them, before any check.

    Every way in fills one: ``POST /search`` and ``/v1/search`` from their bodies (`of`), ``GET
    /arxiv/`` from its query parameters, the web page from its form (`of`), the MCP tool and ``openxiv
    search`` from their arguments; `build` is the one place they become the backend's `SearchFilters`,
    so a new filter is a field here and a parameter of the callers that offer it.
    """

    categories: _Values = None
    authors: _Values = None
    date_search_type: str | None = None
    date_str: _Values = None
    date_from: str | None = None
    date_to: str | None = None
    venue: _Values = None
    venue_year: int | None = None
    min_citation: int | None = None

    @classmethod
    def of(cls, source: object) -> FilterParams:
        """The filter fields of a request body or form; a field it does not offer stays unset."""
        return cls(**{f.name: getattr(source, f.name, None) for f in fields(cls)})

    def build(self) -> SearchFilters:
        """The checked `SearchFilters` (`build_filters`; a bad value is a `BadRequest` naming it)."""
        return build_filters(**{f.name: getattr(self, f.name) for f in fields(self)})


def _venue_year(year: int | None) -> int | None:
    if year is None:
        return None
    if isinstance(year, bool) or not isinstance(year, int) or not _VENUE_YEARS[0] <= year < _VENUE_YEARS[1]:
        raise BadRequest(
            f"venue_year: {year!r} is not a year between {_VENUE_YEARS[0]} and {_VENUE_YEARS[1] - 1}"
        )
    return year


def check_work(queries: list[str], filters: SearchFilters) -> None:
    """A `BadRequest` when queries × filter values exceeds `MAX_QUERY_FILTER_WORK`."""
    values = len(filters.categories) + len(filters.authors) + len(filters.venues)
    if len(queries) * values > MAX_QUERY_FILTER_WORK:
        raise BadRequest(
            f"query × filter values: {len(queries)} queries × {values} filter values (categories, authors, "
            f"venue) = {len(queries) * values}, the limit is {MAX_QUERY_FILTER_WORK} per request; "
            "split the batch"
        )


def check_mode(value: str | None, name: str = "mode") -> str | None:
    """The engine's canonical mode for parameter ``name`` (``None``: the configured default), or a
    `BadRequest` naming the parameter when the engine does not know it."""
    try:
        return parse_mode(value)
    except UnknownMode as exc:
        raise BadRequest(f"{name}: {exc}") from exc


def check_range(value: int, name: str, low: int, high: int) -> int:
    """``value`` when ``low <= value <= high``, else a `BadRequest` naming ``name`` and the range (for
    callers whose values FastAPI did not check: the MCP tools and the terminal commands)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadRequest(f"{name}: must be an integer between {low} and {high}, got {value!r}")
    return value


def check_size(size: int) -> int:
    """``size``, the DeepXiv alias of ``top_k``, within the same limits (named as the alias)."""
    if not 1 <= size <= TOP_K_MAX:
        raise BadRequest(f"size (alias of top_k): must be between 1 and {TOP_K_MAX}, got {size}")
    return size


def clamp_top_k(top_k: int, warnings: list[str]) -> int:
    """``POST /search``'s documented leniency: a ``top_k`` above `TOP_K_MAX` is cut to it and said."""
    if top_k > TOP_K_MAX:
        warnings.append(f"top_k: {top_k} is above the maximum; clamped to {TOP_K_MAX}")
        return TOP_K_MAX
    return top_k


def check_queries(query: str | list[str], max_chars: int) -> list[str]:
    """The queries of a request, stripped; empty, too long or too many is a `BadRequest`."""
    queries = [query] if isinstance(query, str) else list(query)
    if not queries:
        raise BadRequest("query: the list of queries is empty")
    if len(queries) > MAX_BATCH:
        raise BadRequest(f"query: at most {MAX_BATCH} queries per request, got {len(queries)}")
    out = []
    for i, q in enumerate(queries):
        where = "query" if isinstance(query, str) else f"query[{i}]"
        q = q.strip()
        if not q:
            raise BadRequest(f"{where}: empty query")
        if len(q) > max_chars:
            raise BadRequest(f"{where}: {len(q)} characters, the limit is {max_chars}")
        out.append(q)
    return out


def unsupported_filters(settings: Settings, **given: object) -> list[str]:
    """Warnings for filters the corpus has no data for, or a `BadRequest` unless lenient mode is on.

    Answering such a filter with unfiltered hits and a warning no client shows would be a lie: the
    DeepXiv SDK's agent prints "Filters: ..." above the list. Operators who prefer the old
    behaviour set ``OPENXIV_LENIENT_FILTERS=1``.
    """
    asked = [(name, what) for name, what in UNAPPLIABLE.items() if given.get(name)]
    if not asked:
        return []
    if not settings.lenient_filters:
        raise BadRequest(
            "; ".join(
                f"{name}: this corpus has no {what}, so it cannot filter by them" for name, what in asked
            )
            + " (leave the parameter out; an operator can set OPENXIV_LENIENT_FILTERS=1 to ignore it with a warning)"
        )
    return [f"{name} is not applied: the corpus has no {what}" for name, what in asked]


def cut_long_queries(query: str | list[str], max_chars: int, warnings: list[str]) -> str | list[str]:
    """The queries with each one longer than ``max_chars`` (once stripped) cut to its first
    ``max_chars`` characters, noted in ``warnings``: DeepXiv's search sends a query of any length."""
    one = isinstance(query, str)
    queries = [query] if isinstance(query, str) else list(query)
    out = []
    for i, q in enumerate(queries):
        q = q.strip()
        if len(q) > max_chars:
            where = "query" if one else f"query[{i}]"
            warnings.append(
                f"{where}: {len(q)} characters, cut to the first {max_chars} (OPENXIV_MAX_QUERY_CHARS)"
            )
            q = q[:max_chars].rstrip()
        out.append(q)
    return out[0] if one else out


def lenient_batch(query: str | list[str], warnings: list[str]) -> str | list[str]:
    """A batch without its empty strings (noted in ``warnings``), unless nothing else is left."""
    if isinstance(query, str):
        return query
    empty = [i for i, q in enumerate(query) if not q.strip()]
    if not empty or len(empty) == len(query):
        return query
    warnings.append(f"query{empty}: empty {'query' if len(empty) == 1 else 'queries'} skipped")
    return [q for q in query if q.strip()]
