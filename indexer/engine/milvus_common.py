"""What the Milvus build and the Milvus backend share: names, the analyzer, the client, filters.

A Milvus snapshot is two collections (papers, passages) named after the snapshot, and two aliases
(``<prefix>_papers``, ``<prefix>_passages``) that a build switches to its new collections once they
are written, indexed and loaded. The snapshot directory still holds the manifest, the corpus copy
(paper records for the API), the paper metadata arrays (filter values are resolved against them,
so a filter means exactly what it means on the embedded backend) and the query encoder.

Filters become Milvus boolean expressions over fields stored on every paper *and* every passage
(categories, normalised author names, venue and venue-year keys, date range ints): the metadata
arrays of the snapshot turn a request's names into the exact stored values first
(`openxiv.indexer.engine.meta.PaperMeta.category_keys`, ``author_keys``...), and the expression then tests
``ARRAY_CONTAINS_ANY`` on them.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from openxiv.indexer.backend import SearchFilters, UnsupportedFilter
from openxiv.indexer.engine.meta import NO_DATE, PaperMeta, day_number

__all__ = [
    "ANALYZER",
    "MAX_AUTHORS",
    "MAX_CATEGORIES",
    "MAX_VENUE_KEYS",
    "NOTHING",
    "aliases",
    "analyse",
    "collection_names",
    "connect",
    "filter_expr",
    "match_expr",
    "redact_uri",
]

ANALYZER: dict[str, Any] = {"tokenizer": "standard", "filter": ["lowercase"]}
"""Milvus analyzer of the text fields, which hold *analysed* text (`analyse`): openxiv tokenises,
drops stop words and stems exactly as the embedded build does, so both backends score the same
terms. (milvus-lite 3.2 refuses the ``english`` analyzer and, measured here, neither stems nor drops
stop words with the documented ``stemmer``/``stop`` filter chain: ``the`` matched 2,589 of 2,613
papers.)"""
MAX_CATEGORIES = 64
MAX_AUTHORS = 1024
"""Authors stored per paper for the author filter (collaboration papers beyond this keep the first)."""
MAX_VENUE_KEYS = 64
NOTHING = f"date_start < {NO_DATE}"
"""An expression no paper or passage satisfies (a filter whose names match nothing in the corpus);
it names a field both collections have."""


def redact_uri(uri: str) -> str:
    """``uri`` without credentials (``user:password@`` and query strings), fit for a manifest."""
    parts = urlsplit(uri)
    if not parts.scheme or parts.scheme not in ("http", "https", "tcp", "grpc"):
        return uri
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def connect(uri: str, token: str | None = None) -> Any:
    """A `pymilvus.MilvusClient` on ``uri`` (a ``.db`` path starts milvus-lite in this process)."""
    try:
        from pymilvus import MilvusClient
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError("the Milvus backend needs pymilvus: pip install 'openxiv[milvus]'") from exc
    return MilvusClient(uri, token=token or "")


def aliases(prefix: str) -> dict[str, str]:
    """The stable names clients outside openxiv can query: they always point at the live build."""
    return {"papers": f"{prefix}_papers", "passages": f"{prefix}_passages"}


def collection_names(prefix: str, snapshot: str) -> dict[str, str]:
    """Collections of one snapshot (Milvus names allow letters, digits and ``_``)."""
    tag = re.sub(r"[^0-9A-Za-z_]", "_", snapshot)
    return {"papers": f"{prefix}_papers_{tag}", "passages": f"{prefix}_passages_{tag}"}


def analyse(texts: list[str], stemmer: str) -> list[str]:
    """The BM25 terms of each text as one space-separated string: bm25s' words, lowercase, English
    stop words dropped, PyStemmer stems (`openxiv.indexer.engine.sparse`, the embedded tokenizer)."""
    import bm25s

    from openxiv.indexer.analyzer import STOPWORDS, stemmer_for

    tokens = bm25s.tokenize(
        texts, stopwords=STOPWORDS, stemmer=stemmer_for(stemmer), return_ids=False, show_progress=False
    )
    return [" ".join(words) for words in tokens]


def match_expr(field: str, terms: str) -> str | None:
    """``TEXT_MATCH`` of any of the analysed terms (``None`` when there are none); `analyse` leaves
    only word characters, so nothing in ``terms`` can break out of the quotes."""
    return f"TEXT_MATCH({field}, '{terms}')" if terms else None


def _any(field: str, values: list[Any]) -> str:
    if not values:
        return NOTHING
    return f"ARRAY_CONTAINS_ANY({field}, {json.dumps(values, ensure_ascii=False)})"


def filter_expr(meta: PaperMeta, filters: SearchFilters | None) -> str | None:
    """The Milvus expression equal to ``meta.mask(filters)`` (``None``: no filter)."""
    if filters is None or filters.empty:
        return None
    if filters.min_citation is not None:
        raise UnsupportedFilter("min_citation: the Milvus back end does not filter on citation counts")
    terms: list[str] = []
    if filters.categories:
        terms.append(_any("categories", [meta.categories[k] for k in meta.category_keys(filters.categories)]))
    if filters.authors:
        terms.append(_any("authors", [meta.authors[k] for k in meta.author_keys(filters.authors)]))
    if filters.venues:
        keys = meta._venues("venue").venue_keys(filters.venues)
        terms.append(_any("venue_keys", [int(k) for k in keys]))
    if filters.venue_year is not None:
        keys = meta._venues("venue_year").year_keys(filters.venue_year)
        terms.append(_any("venue_year_keys", [int(k) for k in keys]))
    if filters.date_from is not None or filters.date_to is not None:
        terms.append(f"date_start != {NO_DATE}")
        if filters.date_from is not None:
            terms.append(f"date_end >= {day_number(filters.date_from)}")
        if filters.date_to is not None:
            terms.append(f"date_start <= {day_number(filters.date_to)}")
    return " and ".join(f"({t})" for t in terms)
