"""The web page for people at ``/ui`` (``GET /`` redirects there): search, results, paper and section.

Server-rendered (`ui_render`), no JavaScript, works offline. Search and reading go through the API's
own use cases (`openxiv.service.search_async.search_async`, `openxiv.service.reading`'s `load_paper` and
`find_section`, `corpus.text.paper_tldr`) and its parameter
checks (`params`), so the page and the API never disagree; a bad value shows the API's message on
the page with a 4xx and the form kept as typed. Parameters are read as text, never validated by
FastAPI, so no value can turn into a JSON error or a 500.

When the server has a token, the page needs it too: `openxiv.service.guards.access` sends a browser
without it to ``/ui/login``, whose form sets a cookie (see there). ``POST /`` stays the DeepXiv search.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from openxiv.corpus.categories import split_categories
from openxiv.corpus.records import Paper, Section
from openxiv.corpus.settings.modes import FAMILIES, FUSION_METHODS
from openxiv.corpus.text import paper_tldr
from openxiv.service.errors import ApiError, BadRequest
from openxiv.service.guards.access import UI_COOKIE, is_ui_path, ui_cookie_value
from openxiv.service.http import routes_ui_reports
from openxiv.service.http.helpers import holder_of, settings_of
from openxiv.service.http.ui_refs import expand_urls, expand_view
from openxiv.service.http.ui_render import PAGE_HEADERS, excerpt, highlight, paragraphs, render, stylesheet
from openxiv.service.params import OFFSET_MAX, FilterParams, check_mode, check_queries
from openxiv.service.reading import find_section, load_paper
from openxiv.service.search_async import search_async
from openxiv.service.spec import SearchSpec
from openxiv.service.text import section_label, served_text, token_count
from openxiv.service.views import ResolvedHit, abs_url, pdf_url

__all__ = ["MAX_PAGE", "PAGE_SIZE", "router"]

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 10
MAX_PAGE = OFFSET_MAX // PAGE_SIZE + 1
MODES = ("hybrid", *FUSION_METHODS, *FAMILIES)
"""Offered in the form: the engine's vocabulary without the one-side diagnostic modes (the API takes
those, and so does the page)."""
MAX_AUTHORS_SHOWN = 8


@dataclass(frozen=True)
class SearchForm:
    """The search form as typed (kept verbatim to show it again, also when a value is bad)."""

    q: str = ""
    categories: str = ""
    authors: str = ""
    date_from: str = ""
    date_to: str = ""
    mode: str = ""
    page: str = "1"

    @classmethod
    def from_request(cls, request: Request) -> SearchForm:
        qp = request.query_params
        return cls(
            q=qp.get("q", ""),
            categories=", ".join(v for v in qp.getlist("categories") if v.strip()),
            authors=", ".join(v for v in qp.getlist("authors") if v.strip()),
            date_from=qp.get("date_from", ""),
            date_to=qp.get("date_to", ""),
            mode=qp.get("mode", ""),
            page=qp.get("page", "1"),
        )

    @property
    def has_filters(self) -> bool:
        return any(v.strip() for v in (self.categories, self.authors, self.date_from, self.date_to)) or (
            self.mode.strip() not in ("", "hybrid")
        )

    def page_number(self) -> int:
        text = self.page.strip() or "1"
        if not text.isdigit() or not 1 <= int(text) <= MAX_PAGE:
            raise BadRequest(f"page: {self.page!r} is not a page number from 1 to {MAX_PAGE}")
        return int(text)

    def url(self, base: str, page: int) -> str:
        """This search's address at ``page`` (empty fields left out)."""
        fields = {
            "q": self.q,
            "categories": self.categories,
            "authors": self.authors,
            "date_from": self.date_from,
            "date_to": self.date_to,
            "mode": self.mode,
        }
        params = {k: v for k, v in fields.items() if v.strip()}
        if page > 1:
            params["page"] = str(page)
        return f"{base}/ui?{urlencode(params)}"


def _names(authors: tuple[str, ...]) -> str:
    shown = ", ".join(authors[:MAX_AUTHORS_SHOWN])
    return shown + (
        f" and {len(authors) - MAX_AUTHORS_SHOWN} more" if len(authors) > MAX_AUTHORS_SHOWN else ""
    )


def _paper_url(base: str, arxiv_id: str, query: str = "", section: str | None = None, back: str = "") -> str:
    """A paper page; ``q`` highlights the query in it, ``back`` is the results page it came from."""
    params = {k: v for k, v in (("section", section), ("q", query), ("back", back)) if v}
    return f"{base}/ui/paper/{arxiv_id}" + (f"?{urlencode(params)}" if params else "")


def _hit_view(r: ResolvedHit, query: str, base: str, language: str, back: str) -> dict[str, Any]:
    p, ev = r.paper, r.evidence
    return {
        "arxiv_id": p.arxiv_id,
        "title": highlight(p.title or p.arxiv_id, query, language),
        "derived": p.title_source == "derived",
        "url": _paper_url(base, p.arxiv_id, query, back=back),
        "abs_url": abs_url(p.arxiv_id),
        "pdf_url": pdf_url(p.arxiv_id),
        "authors": _names(p.authors),
        "date": p.date.isoformat() if p.date else "",
        "categories": split_categories(p.categories)[0],
        "evidence": excerpt(ev.text, query, language) if ev else None,
        "evidence_where": (ev.section or "") if ev else "",
        "evidence_url": _paper_url(base, p.arxiv_id, query, ev.section, back) + "#text"
        if ev and ev.source in ("passage", "fulltext") and ev.section
        else None,
    }


def _pager(form: SearchForm, base: str, page: int, shown: int, total: int) -> dict[str, Any]:
    offset = (page - 1) * PAGE_SIZE
    more = shown == PAGE_SIZE and offset + PAGE_SIZE < total and page < MAX_PAGE
    return {
        "first": offset + 1 if shown else 0,
        "last": offset + shown,
        "total": total,
        "page": page,
        "pages": min(MAX_PAGE, max(1, -(-total // PAGE_SIZE))),
        "prev": form.url(base, page - 1) if page > 1 else None,
        "next": form.url(base, page + 1) if more else None,
    }


@router.get("/")
def root() -> RedirectResponse:
    """``GET /`` is for people (the page); ``POST /`` is the DeepXiv search and is not affected."""
    return RedirectResponse("ui", status_code=307)


@router.get("/ui/static/ui.css")
def ui_css() -> Response:
    return Response(stylesheet(), media_type="text/css", headers={"Cache-Control": "max-age=3600"})


@router.get("/ui", response_class=HTMLResponse)
async def ui_search(request: Request) -> HTMLResponse:
    """The search page; the search's compute in a worker thread and a model server awaited outside
    it (`search_async`), the page rendered here."""
    form = SearchForm.from_request(request)
    base = request.scope.get("root_path", "")
    context: dict[str, Any] = {"form": form, "modes": MODES, "hits": None, "pager": None, "error": None}
    if not form.q.strip():
        return render(request, "search.html", **context)
    settings = settings_of(request)
    try:
        page = form.page_number()
        query = check_queries(form.q, settings.max_query_chars)[0]
        filters = FilterParams.of(form).build()
        spec = SearchSpec(
            queries=(query,),
            top_k=PAGE_SIZE,
            offset=(page - 1) * PAGE_SIZE,
            filters=filters,
            mode=check_mode(form.mode),
        )
        out = await search_async(holder_of(request), spec, settings=settings)
    except ApiError as exc:
        return render(request, "search.html", status=exc.status_code, **{**context, "error": exc.detail})
    language = settings.bm25_stemmer
    back = form.url("", page)
    context["hits"] = [_hit_view(h, query, base, language, back) for h in out.hits]
    context["pager"] = _pager(form, base, page, len(out.hits), out.total_count)
    return render(request, "search.html", **context)


def _paper_view(
    paper: Paper,
    sections: list[Section],
    chosen: Section | None,
    query: str,
    links: tuple[str, str],
    language: str,
) -> dict[str, Any]:
    base, back = links
    return {
        "arxiv_id": paper.arxiv_id,
        "title": paper.title or paper.arxiv_id,
        "derived": paper.title_source == "derived",
        "authors": list(paper.authors),
        "date": paper.date.isoformat() if paper.date else "",
        "categories": split_categories(paper.categories)[0],
        "journal_ref": paper.journal_ref,
        "doi": paper.doi,
        "abs_url": abs_url(paper.arxiv_id),
        "pdf_url": pdf_url(paper.arxiv_id),
        "tldr": paper_tldr(paper, sections),
        "abstract": highlight(served_text(paper.abstract), query, language) if paper.abstract else None,
        "sections": [
            {
                "label": section_label(s.number, s.name),
                "url": _paper_url(base, paper.arxiv_id, query, s.name, back) + "#text",
                "tokens": token_count(s.text),
                "depth": min(3, s.number.count(".")) if s.number else 0,
                "current": chosen is not None and s.idx == chosen.idx,
            }
            for s in sections
        ],
    }


@router.get("/ui/paper/{arxiv_id:path}", response_class=HTMLResponse)
def ui_paper(arxiv_id: str, request: Request) -> HTMLResponse:
    """A paper: metadata, links to arXiv, tldr, abstract, its sections; ``?section=NAME`` adds that
    section's text (names are matched like ``/v1/papers/{id}/sections/{name}``)."""
    query = request.query_params.get("q", "")
    wanted = request.query_params.get("section", "")
    expand = request.query_params.get("expand", "")
    back = request.query_params.get("back", "")
    back = _safe_next(back) if back else ""
    base = request.scope.get("root_path", "")
    language = settings_of(request).bm25_stemmer
    try:
        with holder_of(request).acquire() as index:
            paper = load_paper(index, arxiv_id)
            sections = index.store.sections(paper.arxiv_id)
            try:
                chosen = find_section(index, paper, wanted) if wanted.strip() else None
                error, status = None, 200
            except ApiError as exc:  # the paper is still worth showing, with the reason
                chosen, error, status = None, exc.detail, exc.status_code
                if sections:  # the API's message lists them all; the page lists them anyway
                    error = f"this paper has no section {wanted!r}; its sections are listed below"
            expanded = None
            try:
                if expand:
                    expanded = expand_view(
                        index, paper.arxiv_id, expand, lambda a: _paper_url(base, a, back=back)
                    )
            except ApiError as exc:
                error, status = exc.detail, exc.status_code
    except ApiError as exc:
        return render(request, "error.html", status=exc.status_code, error=exc.detail, title="Paper")
    section = (
        {
            "label": section_label(chosen.number, chosen.name),
            "paragraphs": paragraphs(served_text(chosen.text), query, language),
            "tokens": token_count(chosen.text),
        }
        if chosen is not None
        else None
    )
    return render(
        request,
        "paper.html",
        status=status,
        paper=_paper_view(paper, sections, chosen, query, (base, back), language),
        section=section,
        expanded=expanded,
        expand_urls=expand_urls(_paper_url(base, paper.arxiv_id, query, back=back)),
        error=error,
        query=query,
        back=base + back if back else "",
        here=_paper_url(base, paper.arxiv_id, query, back=back),
    )


# ------------------------------------------------------------------------------- token form
def _safe_next(target: str) -> str:
    """Where to go after signing in: a path of this page only (no other host, no ``//evil``)."""
    parts = urlsplit(target)
    if (
        parts.scheme
        or parts.netloc
        or "\\" in target
        or not is_ui_path(parts.path)
        or target.startswith("//")
    ):
        return "/ui"
    return target


def _cross_site(request: Request) -> bool:
    origin = request.headers.get("origin")
    return origin is not None and (origin == "null" or urlsplit(origin).netloc != request.headers.get("host"))


@router.get("/ui/login", response_class=HTMLResponse)
def ui_login(request: Request) -> HTMLResponse:
    target = _safe_next(request.query_params.get("next", "/ui"))
    return render(
        request, "login.html", target=target, error=None, needed=bool(settings_of(request).api_token)
    )


@router.post("/ui/login", response_model=None)
async def ui_login_post(request: Request) -> Response:
    """Check the token typed into the form; right: a session cookie and back to the page asked for."""
    settings = settings_of(request)
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    target = _safe_next(form.get("next", ["/ui"])[0])
    if not settings.api_token:
        return RedirectResponse(target, status_code=303)
    if _cross_site(request):
        return render(
            request, "login.html", 403, target=target, needed=True, error="cross-site sign-in refused"
        )
    given = form.get("token", [""])[0].strip()
    if not hmac.compare_digest(given.encode(), settings.api_token.encode()):
        return render(request, "login.html", 401, target=target, needed=True, error="wrong token")
    response = RedirectResponse(target, status_code=303, headers=PAGE_HEADERS)
    response.set_cookie(
        UI_COOKIE,
        ui_cookie_value(settings.api_token),
        path="/ui",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/ui/logout")
def ui_logout() -> RedirectResponse:
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(UI_COOKIE, path="/ui")
    return response


router.include_router(routes_ui_reports.router)


@router.get("/ui/{rest:path}", response_model=None)
def ui_unknown(rest: str, request: Request) -> Response:
    if not rest:  # /ui/ is the page
        query = request.url.query
        return RedirectResponse(
            f"{request.scope.get('root_path', '')}/ui" + (f"?{query}" if query else ""), 307
        )
    return render(request, "error.html", status=404, error=f"no page /ui/{rest}", title="Not found")
