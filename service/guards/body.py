"""What every request passes before a route sees it: body size, body read time, text that is text.

One ASGI middleware for all routes (GET and POST), so no route has to remember these checks:

- a body larger than ``max_bytes`` is refused with 413 (by ``Content-Length`` before reading, or
  while streaming a chunked body);
- a body that does not arrive within ``body_timeout`` seconds is refused with 408: a client that
  trickles its body cannot hold a worker (the header read timeout is the server's, see
  `openxiv.service.guards.headers`);
- a query-string parameter whose percent-encoded bytes are not UTF-8 is a 400 naming it (Starlette
  would silently turn them into U+FFFD);
- a JSON string with a lone UTF-16 surrogate (``"\\ud800"``, valid JSON, not valid text) is a 400
  naming where it is (``query[1]``). Such a string cannot be encoded, so it would otherwise fail deep
  in the tokenizer or in the response serialiser as a 500.

The body is read once and replayed to the app, so routes parse it as usual. A bad query string is
answered by the front's ``refuse`` (the JSON error by default; the HTTP front's web page shows its
error page there, `openxiv.service.http.errors.refuse`).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote_to_bytes

from openxiv.service.guards.asgi import ASGIApp, Message, Receive, Scope, Send, send_error

__all__ = ["Refusal", "RequestGuardMiddleware", "lone_surrogate_at", "refuse_json", "undecodable_parameter"]

_BODYLESS = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def lone_surrogate_at(value: Any, where: str = "") -> str | None:
    """The location (``query[1]``, ``authors[0]``) of the first string holding a lone surrogate."""
    if isinstance(value, str):
        return (where or "request body") if _has_lone_surrogate(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            if _has_lone_surrogate(str(key)):
                return name
            found = lone_surrogate_at(item, name)
            if found:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = lone_surrogate_at(item, f"{where}[{i}]")
            if found:
                return found
    return None


def undecodable_parameter(query_string: bytes) -> str | None:
    """The name of the first query parameter whose value (or name) is not valid UTF-8."""
    for pair in query_string.split(b"&"):
        raw_name, _, raw_value = pair.partition(b"=")
        name_bytes = unquote_to_bytes(raw_name.replace(b"+", b" "))
        try:
            name = name_bytes.decode("utf-8")
        except UnicodeDecodeError:
            return name_bytes.decode("utf-8", "replace")
        try:
            unquote_to_bytes(raw_value.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            return name
    return None


Refusal = Callable[[Scope, Receive, Send, int, str], Awaitable[None]]
"""How a front answers a refused request: ``(scope, receive, send, status, detail)``."""


async def refuse_json(scope: Scope, receive: Receive, send: Send, status: int, detail: str) -> None:
    """The JSON error (`openxiv.service.guards.asgi.send_error`)."""
    await send_error(send, status, detail)


class RequestGuardMiddleware:
    def __init__(
        self, app: ASGIApp, max_bytes: int, body_timeout: float, refuse: Refusal = refuse_json
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.body_timeout = body_timeout
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        bad = undecodable_parameter(scope.get("query_string", b""))
        if bad is not None:
            message = f"{bad}: not valid UTF-8 (percent-encode the text as UTF-8)"
            await self.refuse(scope, receive, send, 400, message)
            return
        for key, value in scope.get("headers", ()):
            if key == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    await send_error(send, 400, "Content-Length is not a number")
                    return
                if length > self.max_bytes:
                    await send_error(
                        send, 413, f"request body of {length} bytes; the limit is {self.max_bytes}"
                    )
                    return
        if scope.get("method") in _BODYLESS:
            await self.app(scope, receive, send)
            return
        body = await self._read_body(receive, send)
        if body is None:
            return
        if _SURROGATE_ESCAPE.search(body):
            where = self._surrogate_in(body)
            if where is not None:
                await send_error(
                    send,
                    400,
                    f"{where}: contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), "
                    "which is not text",
                )
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read_body(self, receive: Receive, send: Send) -> bytes | None:
        """The whole body within the size and time limits, or ``None`` after answering 413/408."""
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + self.body_timeout
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                await send_error(
                    send,
                    408,
                    f"request body not received within {self.body_timeout:g} s (OPENXIV_BODY_TIMEOUT)",
                    [(b"connection", b"close")],
                )
                return None
            if message["type"] != "http.request":  # client went away
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await send_error(send, 413, f"request body over the limit of {self.max_bytes} bytes")
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    @staticmethod
    def _surrogate_in(body: bytes) -> str | None:
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError):
            return None  # not JSON: the route reports that itself
        return lone_surrogate_at(parsed)
