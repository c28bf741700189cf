"""``/v1/papers/{id}/references`` and ``/v1/papers/{id}/cited_by``: a paper's bibliography and the
papers that cite it (`openxiv.service.references`). Included before the ``/v1/papers/{id}`` route,
whose path parameter would otherwise take the suffix as part of the id."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from openxiv.service.http.helpers import ERRORS, holder_of, json_response
from openxiv.service.models import ErrorResponse
from openxiv.service.references import CitedByResponse, ReferencesResponse, reference_op

__all__ = ["router"]

router = APIRouter()

RESPONSES = {
    **ERRORS,
    409: {"model": ErrorResponse, "description": "The snapshot was built before references were stored"},
}


@router.get(
    "/v1/papers/{arxiv_id:path}/references",
    response_model=ReferencesResponse,
    responses=RESPONSES,
    tags=["v1"],
    summary="A paper's references (unArXive bibliographies), with titles of the papers in the corpus",
)
def v1_references(arxiv_id: str, request: Request) -> Response:
    """Each entry: its arXiv id (null when it resolves to none), `in_corpus`, the title of a paper in
    the corpus, the printed text. 409: the snapshot was built before references were stored."""
    return json_response(reference_op(holder_of(request), "references", arxiv_id).model_dump_json())


@router.get(
    "/v1/papers/{arxiv_id:path}/cited_by",
    response_model=CitedByResponse,
    responses=RESPONSES,
    tags=["v1"],
    summary="The corpus papers whose bibliography cites a paper",
)
def v1_cited_by(arxiv_id: str, request: Request) -> Response:
    """The cited paper need not be in the corpus. 409: the snapshot was built before references."""
    return json_response(reference_op(holder_of(request), "cited_by", arxiv_id).model_dump_json())
