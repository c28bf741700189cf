"""The ASGI types the guards and middleware are written against, and their JSON error answer.

Middleware has no Request object, so it answers a refusal itself (`send_error`), in the shape every
route's error has: ``{"status": "error", "detail": ...}``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

__all__ = ["ASGIApp", "Message", "Receive", "Scope", "Send", "send_error"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def send_error(send: Send, status: int, detail: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """Answer ``{"status": "error", "detail": ...}`` from ASGI middleware (no Request object there)."""
    body = json.dumps({"status": "error", "detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
