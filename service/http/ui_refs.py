"""``expand`` on the web page's paper view (PaSa's [Expand]): its references or the papers citing it,
from `openxiv.service.references`. A paper in the corpus is a link to its page, with its title; a
reference outside the corpus is its printed text (and its arXiv id when it has one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openxiv.indexer.snapshot import OpenIndex
from openxiv.service.errors import BadRequest
from openxiv.service.references import REF_KINDS, cited_by, references

__all__ = ["EXPAND_LABELS", "expand_urls", "expand_view"]

EXPAND_LABELS = {"references": "References", "cited_by": "Cited by"}


def expand_urls(here: str) -> list[dict[str, str]]:
    """The page's ``expand`` links (kind, label, url): ``here`` (the paper page's URL) with ``expand=<kind>``."""
    sep = "&" if "?" in here else "?"
    return [
        {"kind": kind, "label": label, "url": f"{here}{sep}expand={kind}#expand"}
        for kind, label in EXPAND_LABELS.items()
    ]


def expand_view(index: OpenIndex, arxiv_id: str, kind: str, url_of: Callable[[str], str]) -> dict[str, Any]:
    """What the page lists for ``?expand=kind``; ``url_of(id)`` is a paper page's link. `ApiError` for
    an unknown kind (400) or a snapshot without references (409)."""
    if kind not in REF_KINDS:
        raise BadRequest(f"expand: {kind!r} is not one of {', '.join(REF_KINDS)}")
    if kind == "references":
        r = references(index, arxiv_id)
        items = [
            {
                "url": url_of(ref.arxiv_id) if ref.in_corpus and ref.arxiv_id else None,
                "title": ref.title,
                "arxiv_id": ref.arxiv_id,
                "abs_url": ref.url,
                "text": None if ref.in_corpus else ref.text,
            }
            for ref in r.references
        ]
        summary = (
            f"{r.count} entries, {r.resolved} with an arXiv id, {r.in_corpus} of them in this corpus"
            if r.has_bibliography
            else r.note or ""
        )
    else:
        c = cited_by(index, arxiv_id)
        items = [
            {
                "url": url_of(p.arxiv_id),
                "title": p.title,
                "arxiv_id": p.arxiv_id,
                "abs_url": p.url,
                "text": None,
            }
            for p in c.cited_by
        ]
        summary = f"{c.count} paper(s) of this corpus cite it; {c.note}"
    return {"kind": kind, "label": EXPAND_LABELS[kind], "summary": summary, "items": items}
