"""Rendering for the web page: the Jinja2 environment, page responses and query-term highlighting.

Templates live in ``templates/`` of this package and are autoescaped: every value from the corpus or
the request is escaped unless it went through `highlight`, which escapes the text itself and adds
only ``<mark>`` elements. Pages carry a Content-Security-Policy that allows nothing but this
server's stylesheet and forms (no script, no external URL), and ``Referrer-Policy: same-origin`` so
a ``?token=`` in the address never travels to arXiv with a click.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2
import Stemmer
from fastapi import Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup, escape

from openxiv.indexer.analyzer import analyze
from openxiv.service.guards.access import UI_COOKIE

__all__ = ["EXCERPT_CHARS", "PAGE_HEADERS", "excerpt", "highlight", "paragraphs", "render", "stylesheet"]

PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    # not no-referrer: Chrome then sends "Origin: null" with the sign-in form, which the cross-site
    # check must refuse; same-origin keeps the address (and a ?token= in it) from other sites
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
EXCERPT_CHARS = 480
"""Longest evidence text shown on a results page."""
_WORD = re.compile(r"[A-Za-z0-9]+")
_BLANK_LINE = re.compile(r"\n\s*\n")


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("openxiv.service.http", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@lru_cache(maxsize=1)
def stylesheet() -> bytes:
    return resources.files("openxiv.service.http").joinpath("static", "ui.css").read_bytes()


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The page ``template`` with ``context``, plus what every page needs (base path, sign-out)."""
    settings = request.app.state.settings
    page = (
        _environment()
        .get_template(template)
        .render(
            base=request.scope.get("root_path", ""),
            signed_in=bool(settings.api_token) and UI_COOKIE in request.cookies,
            snapshot=request.app.state.holder.snapshot,
            **context,
        )
    )
    return HTMLResponse(page, status_code=status, headers=PAGE_HEADERS)


def _matches(text: str, query: str, language: str) -> list[tuple[int, int]]:
    """Spans of the words of ``text`` that share a stem with a query term.

    Query terms come from the index's own analyzer (`openxiv.indexer.analyzer.analyze`: its words, stop words
    removed, stemmed in the index's language), the one that ranked the hit and chose its evidence,
    so ``networks`` marks ``network`` as the ranker matched it."""
    wanted = set(analyze([query], language)[0])
    if not wanted:
        return []
    stemmer = Stemmer.Stemmer(language)  # cheap; PyStemmer objects are not thread-safe: one per call
    return [m.span() for m in _WORD.finditer(text) if stemmer.stemWord(m.group(0).lower()) in wanted]


def _marked(text: str, spans: list[tuple[int, int]], start: int = 0, end: int | None = None) -> Markup:
    end = len(text) if end is None else end
    out: list[str] = []
    last = start
    for a, b in spans:
        if a >= start and b <= end:
            out.append(escape(text[last:a]))
            out.append(Markup("<mark>%s</mark>") % text[a:b])
            last = b
    out.append(escape(text[last:end]))
    return Markup("").join(out)


def highlight(text: str, query: str, language: str = "english") -> Markup:
    """``text`` escaped, with the words that match the query (`_matches`) in ``<mark>``."""
    return _marked(text, _matches(text, query, language))


def excerpt(text: str, query: str, language: str = "english", limit: int = EXCERPT_CHARS) -> Markup:
    """`highlight` of at most ``limit`` characters of ``text`` (white space collapsed), cut at words
    around the first match and marked ``…`` where cut: a results page shows why a paper matched, the
    paper page shows the rest."""
    text = " ".join(text.split())
    spans = _matches(text, query, language)
    if len(text) <= limit:
        return _marked(text, spans)
    first = spans[0][0] if spans else 0
    start = 0 if first < limit // 3 else text.rfind(" ", 0, first - limit // 4) + 1
    end = text.rfind(" ", start, start + limit)
    end = end if end > start else start + limit
    head = "… " if start > 0 else ""
    tail = " …" if end < len(text) else ""
    return Markup(head) + _marked(text, spans, start, end) + Markup(tail)


def paragraphs(text: str, query: str, language: str = "english") -> list[Markup]:
    """A section's text as highlighted paragraphs (split at blank lines)."""
    return [highlight(p.strip(), query, language) for p in _BLANK_LINE.split(text) if p.strip()]
