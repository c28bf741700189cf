"""DeepXiv endpoints openxiv does not serve: 501 with a message that names what is missing.

A plain 404 ("no such endpoint") is what an unknown path gets, and the ``deepxiv-sdk`` turns some
404s into a silent ``None`` (``social_impact``) or a misleading "Paper not found" (``pmc_head``).
These paths are the ones the SDK (0.2.x to 1.2.x) calls; each answers 501 Not Implemented, which the
SDK raises as ``ServerError`` (``FAError`` for ``/fa``, with the message), so the caller learns that
this server lacks the feature rather than that the paper does not exist.
"""

from __future__ import annotations

from fastapi import APIRouter

from openxiv.service.errors import NotImplementedHere
from openxiv.service.models import ErrorResponse

__all__ = ["UNSERVED", "router", "unserved_detail"]

router = APIRouter()

SERVES = "openxiv serves arXiv search and paper reading over its local corpus only (see /docs)"

UNSERVED: dict[str, str] = {
    "/web/agent/search": "DeepXiv's agentic web search",
    "/web/agent/search/stream": "DeepXiv's agentic web search",
    "/websearch": "web search",
    "/semantic_scholar": "Semantic Scholar metadata",
    "/pmc/": "PubMed Central (PMC) papers",
    "/pmc": "PubMed Central (PMC) papers",
    "/biorxiv/data": "bioRxiv papers",
    "/biorxiv/retrieve": "bioRxiv search",
    "/medrxiv/data": "medRxiv papers",
    "/medrxiv/retrieve": "medRxiv search",
    "/arxiv/trending_signal": "social-media trending signals for arXiv papers",
    "/trending_arxiv_papers/api/trending": "trending arXiv papers",
    "/fa/{rest:path}": "the 1stAuthor domains (talent, law, cases, ...)",
}
"""Path -> what openxiv does not provide there."""


def unserved_detail(what: str) -> str:
    return f"openxiv does not provide {what}; {SERVES}"


def _unserved(what: str) -> object:
    def endpoint() -> None:
        raise NotImplementedHere(unserved_detail(what))

    return endpoint


for _path, _what in UNSERVED.items():
    router.add_api_route(
        _path,
        _unserved(_what),  # type: ignore[arg-type]
        methods=["GET", "POST"],
        status_code=501,
        responses={501: {"model": ErrorResponse, "description": f"Not provided: {_what}"}},
        include_in_schema=False,
        name="unserved " + _path,
    )
