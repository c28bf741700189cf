"""``/v1/papers/{id}/references`` and ``/v1/papers/{id}/cited_by``: a paper's bibliography and the
papers that cite it (`openxiv.service.references`). Included before the ``/v1/papers/{id}`` route,
whose path parameter would otherwise take the suffix as part of the id."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from openxiv.service.http.helpers import ERRORS, holder_of, json_response
from openxiv.service.models import ErrorResponse
from openxiv.service.references import CitedByResponse, ReferencesResponse, reference_op

__all__ = ["router"]

router = APIRouter()

RESPONSES = {
    **ERRORS,
    409: {"model": ErrorResponse, "description": "The snapshot was built before references were stored"},
}


def _add(kind: str, model: type[BaseModel], summary: str, doc: str) -> None:
    def endpoint(arxiv_id: str, request: Request) -> Response:
        return json_response(reference_op(holder_of(request), kind, arxiv_id).model_dump_json())

    endpoint.__doc__ = doc
    router.add_api_route(
        f"/v1/papers/{{arxiv_id:path}}/{kind}",
        endpoint,
        methods=["GET"],
        name=f"v1_{kind}",
        response_model=model,
        responses=RESPONSES,
        tags=["v1"],
        summary=summary,
    )


_add(
    "references",
    ReferencesResponse,
    "A paper's references (unArXive bibliographies), with titles of the papers in the corpus",
    """Each entry: its arXiv id (null when it resolves to none), `in_corpus`, the title of a paper in
    the corpus, the printed text. 409: the snapshot was built before references were stored.""",
)
_add(
    "cited_by",
    CitedByResponse,
    "The corpus papers whose bibliography cites a paper",
    "The cited paper need not be in the corpus. 409: the snapshot was built before references.",
)
