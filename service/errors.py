"""The errors every front raises: each is an `ApiError` with a status and a ``detail`` naming the problem.

The use cases (`openxiv.service.search`, `openxiv.service.reading`) and the parameter checks
(`openxiv.service.params`) raise them; each front turns them into its own answer: the HTTP app a JSON
error with ``status_code`` (`openxiv.service.http.errors`), the MCP server a tool error, the terminal
commands a CLI error.
"""

from __future__ import annotations

__all__ = ["ApiError", "BadRequest", "Conflict", "NotFound", "NotImplementedHere", "NotReady"]


class ApiError(Exception):
    status_code = 500

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequest(ApiError, ValueError):
    """A request parameter cannot be used; the message names it."""

    status_code = 400


class NotFound(ApiError, LookupError):
    """An unknown paper or section; the message says what exists."""

    status_code = 404


class Conflict(ApiError):
    """The request is right but this snapshot cannot answer it (built before the part the request
    needs, e.g. references, or without paper vectors for similar papers); the message names the
    snapshot and says how to build one that can."""

    status_code = 409


class NotImplementedHere(ApiError):
    """A DeepXiv endpoint or source openxiv does not provide; the message says what is missing."""

    status_code = 501


class NotReady(ApiError, RuntimeError):
    """No index is loaded (starting up or shutting down)."""

    status_code = 503
