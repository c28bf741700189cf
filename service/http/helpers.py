"""What every HTTP route needs: the app's holder and settings, a JSON response, the error table.

`holder_of` and `settings_of` read what `openxiv.service.http.app.create_app` put on the app;
`json_response` sends an already serialised body (with a ``Server-Timing`` header when timings are
given); `ERRORS` is the table of error answers each route declares in the OpenAPI schema.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request, Response

from openxiv.corpus.settings.model import Settings
from openxiv.service.holder import IndexHolder
from openxiv.service.models import ErrorResponse
from openxiv.service.search_params import TOP_K_MAX, Offset, TopK

__all__ = [
    "ERRORS",
    "DateQuery",
    "ListQuery",
    "OffsetQuery",
    "TopKQuery",
    "experiments_of",
    "holder_of",
    "json_response",
    "settings_of",
]

TopKQuery = Annotated[TopK, Query(description=f"1-{TOP_K_MAX}.")]
"""A /v1 page size (``top_k``) in a query string."""
OffsetQuery = Annotated[Offset, Query()]
"""A page start (``offset``) in a query string."""
ListQuery = Annotated[list[str] | None, Query(description="Repeat or comma-separate.")]
"""A /v1 list filter (``category``, ``author``) in a query string."""
DateQuery = Annotated[str | None, Query(description="Inclusive, YYYY[-MM[-DD]].")]
"""A /v1 date bound (``date_from``, ``date_to``) in a query string."""

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Bad parameter (the detail names it)"},
    401: {"model": ErrorResponse, "description": "A token is configured and was not sent"},
    404: {"model": ErrorResponse, "description": "Unknown paper or section"},
    413: {"model": ErrorResponse, "description": "Request body too large"},
    503: {
        "model": ErrorResponse,
        "description": "Index not loaded, or the request ran past its time budget (OPENXIV_REQUEST_BUDGET_S)",
    },
}


def holder_of(request: Request) -> IndexHolder:
    holder: IndexHolder = request.app.state.holder
    return holder


def experiments_of(request: Request) -> dict[str, Any]:
    """The experiment controls on (`openxiv.service.experiments.controls.Controls.describe`): a
    ``{"experiments": ...}`` to add to a probe's or /v1/index's answer, empty when none is on."""
    controls = getattr(request.app.state, "experiments", None)
    return {"experiments": controls.describe()} if controls is not None else {}


def settings_of(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def json_response(body: str, timings: dict[str, float] | None = None) -> Response:
    headers = {}
    if timings:
        headers["Server-Timing"] = ", ".join(f"{k};dur={v:.3f}" for k, v in timings.items())
    return Response(content=body, media_type="application/json", headers=headers)
