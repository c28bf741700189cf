"""Errors as clean JSON (``{"status": "error", "detail": ...}``), request-size limit, bearer token.

Every client mistake becomes a 4xx whose ``detail`` names the problem: validation errors are 400
(not FastAPI's default 422, because the DeepXiv SDK maps 400 to ``BadRequestError``), unknown papers
and sections 404, a missing token 401, an oversized body 413. Anything unexpected is logged and
answered with a JSON 500 that leaks no internals, by `CatchAllMiddleware`, which (unlike an
exception handler for ``Exception``, after which Starlette re-raises to the server) ends the request
normally, so the client's keep-alive connection survives.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from openxiv.service.errors import ApiError
from openxiv.service.guards.asgi import ASGIApp, Message, Receive, Scope, Send, send_error

__all__ = ["CatchAllMiddleware", "error_response", "install_handlers", "refuse"]

log = logging.getLogger("openxiv.service")


def error_response(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"status": "error", "detail": detail}, status_code=status, headers=headers)


_TYPE_NAME = re.compile(r"^(?:str|int|float|bool|none|list\[.*\]|dict\[.*\]|tuple\[.*\])$", re.I)


def _where(loc: Sequence[Any]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header", "cookie"):
        parts = parts[1:]
    parts = [p for p in parts if not _TYPE_NAME.match(p)]  # union members: "query.str" -> "query"
    out = ""
    for p in parts:
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "request"


def validation_detail(exc: RequestValidationError) -> str:
    """One message per offending parameter, alternatives (union types) joined with "or"."""
    by_where: dict[str, list[str]] = {}
    for err in exc.errors():
        kind = err.get("type")
        where = _where(err.get("loc", ()))
        if kind == "json_invalid":
            where, msg = "request body", f"not valid JSON ({err.get('ctx', {}).get('error', 'parse error')})"
        elif kind == "missing" and where == "request":
            where, msg = "request body", "required (a JSON object with at least 'query')"
        elif kind == "missing":
            msg = "required"
        elif kind == "model_attributes_type" or (kind == "dict_type" and where == "request"):
            where, msg = "request body", "must be a JSON object"
        else:
            msg = str(err.get("msg", "invalid value"))
        by_where.setdefault(where, [])
        if msg not in by_where[where]:
            by_where[where].append(msg)
    return "; ".join(f"{w}: {' or '.join(m)}" for w, m in by_where.items()) or "invalid request"


def install_handlers(app: FastAPI) -> None:
    async def on_validation(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(400, validation_detail(exc))

    async def on_api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return error_response(exc.status_code, exc.detail)

    async def on_http(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        detail = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":
            detail = "no such endpoint; see /docs"
        return error_response(exc.status_code, detail, dict(exc.headers or {}))

    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(StarletteHTTPException, on_http)


async def refuse(scope: Scope, receive: Receive, send: Send, status: int, detail: str) -> None:
    """The JSON error, or on a web-page path (``/ui``) of the web app the error page, as routes do (the
    HTTP front's refusal for `openxiv.service.guards.body.RequestGuardMiddleware`)."""
    from openxiv.service.guards.access import is_ui_path

    if is_ui_path(scope.get("path", "")) and "app" in scope and hasattr(scope["app"].state, "holder"):
        from starlette.requests import Request

        from openxiv.service.http.ui_render import render

        page = render(Request(scope), "error.html", status=status, error=detail, title="Bad request")
        await page(scope, receive, send)
        return
    await send_error(send, status, detail)


class CatchAllMiddleware:
    """Turn an unexpected exception into a logged JSON 500 and finish the request normally.

    Starlette's own catch-all (``ServerErrorMiddleware``) sends the 500 and then re-raises, and the
    server closes the connection on an exception: the client's next request on that keep-alive
    connection fails too. This middleware sits inside it and does not re-raise.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            log.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"))
            if started:  # too late for a clean answer: the server ends the (incomplete) response
                return
            await send_error(send, 500, f"internal error ({type(exc).__name__}); see the server log")
