"""Errors as clean JSON (``{"status": "error", "detail": ...}``), request-size limit, bearer token.

Every client mistake becomes a 4xx whose ``detail`` names the problem: validation errors are 400
(not FastAPI's default 422, because the DeepXiv SDK maps 400 to ``BadRequestError``), unknown papers
and sections 404, a missing token 401, an oversized body 413. Anything unexpected is logged and
answered with a JSON 500 that leaks no internals.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

__all__ = [
    "OPEN_PATHS",
    "ApiError",
    "AuthMiddleware",
    "BadRequest",
    "BodyLimitMiddleware",
    "NotFound",
    "NotReady",
    "install_handlers",
]

log = logging.getLogger("openxiv.service")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/healthz", "/readyz", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"})
"""Paths that never need the token (liveness/readiness probes and the API documentation)."""


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


class NotReady(ApiError, RuntimeError):
    """No index is loaded (starting up or shutting down)."""

    status_code = 503


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

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, f"internal error ({type(exc).__name__}); see the server log")

    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_unexpected)


async def _send_json(send: Send, status: int, detail: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps({"status": "error", "detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodyLimitMiddleware:
    """Refuse request bodies over ``max_bytes`` (by Content-Length, or while streaming) with 413."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", ()):
            if key == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    await _send_json(send, 400, "Content-Length is not a number")
                    return
                if length > self.max_bytes:
                    await _send_json(
                        send, 413, f"request body of {length} bytes; the limit is {self.max_bytes}"
                    )
                    return
                await self.app(scope, receive, send)
                return
        if scope.get("method") in ("GET", "HEAD", "OPTIONS", "DELETE"):
            await self.app(scope, receive, send)
            return
        # No Content-Length (chunked): read the body first, at most max_bytes, then replay it.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _send_json(send, 413, f"request body over the limit of {self.max_bytes} bytes")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class AuthMiddleware:
    """Require ``Authorization: Bearer <token>`` or ``?token=<token>`` on every path but `OPEN_PATHS`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    def _allowed(self, scope: Scope) -> bool:
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                scheme, _, given = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token):
                    return True
        query = scope.get("query_string", b"").decode("latin-1")
        if "token=" in query:
            for given in parse_qs(query).get("token", []):
                if hmac.compare_digest(given.encode(), self.token):
                    return True
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        await _send_json(
            send,
            401,
            "this openxiv server needs a token: send 'Authorization: Bearer <token>' or '?token=<token>'",
            [(b"www-authenticate", b"Bearer")],
        )
