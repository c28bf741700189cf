"""What ``openxiv mcp --transport http`` puts in front of the SDK's streamable HTTP app.

- **Read deadlines**, as `openxiv serve` has them: the same uvicorn protocol
  (`openxiv.service.guards.headers`: headers within ``OPENXIV_HEADER_TIMEOUT``, else 408 and close,
  and 431 past the header size limit) and the same ASGI guard (`openxiv.service.guards.body`: the body
  within ``OPENXIV_BODY_TIMEOUT``, its size, text that is text). A trickling client holds no socket
  for long.
- **Session policy** (`SessionLimit`): at most ``OPENXIV_MCP_MAX_SESSIONS`` sessions are open. A new
  agent is never refused for lack of room: its ``initialize`` evicts the least recently used session
  with no request in flight (no call running, no open event stream), or if every session is busy the
  least recently used one. An evicted session's id answers 404, on which MCP clients start a new
  session. Sessions still end after the SDK's idle timeout without a request. So a flood
  of ``initialize`` calls costs the flooder its own oldest sessions, and memory stays bounded by the
  cap (per-session memory: BENCHMARKS.md, Reliability).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from mcp.server.mcpserver import MCPServer

from openxiv.corpus.settings.model import Settings
from openxiv.service.guards.asgi import ASGIApp, Message, Receive, Scope, Send
from openxiv.service.guards.body import RequestGuardMiddleware

__all__ = ["SessionLimit", "guarded", "uvicorn_options"]

_SESSION_HEADER = b"mcp-session-id"


class SessionLimit:
    """ASGI middleware bounding the open sessions of ``server``'s streamable HTTP session manager."""

    def __init__(self, app: ASGIApp, server: MCPServer, max_sessions: int) -> None:
        self.app = app
        self.server = server
        self.max_sessions = max(1, max_sessions)
        self._used: OrderedDict[str, float] = OrderedDict()  # session id -> last request, oldest first
        self.evicted = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = dict(scope.get("headers", ())).get(_SESSION_HEADER)
        if session is not None:
            self._touch(session.decode("latin-1"))

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and session is None and message["status"] < 400:
                for key, value in message.get("headers", ()):
                    if key.lower() == _SESSION_HEADER:  # a session was just opened
                        self._touch(value.decode("latin-1"))
                        await self._make_room(keep=value.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, watch)

    def _touch(self, session: str) -> None:
        self._used[session] = time.monotonic()
        self._used.move_to_end(session)

    async def _make_room(self, keep: str) -> None:
        """Evict other sessions while more than the cap are open: idle ones first, oldest first."""
        manager = self.server.session_manager
        live: dict[str, Any] = manager._server_instances
        for gone in [s for s in self._used if s not in live]:
            del self._used[gone]
        while len(live) > self.max_sessions:
            # oldest first; sessions still answering their `initialize` are not yet in `_used`
            order = [s for s in self._used if s != keep] + [
                s for s in live if s != keep and s not in self._used
            ]
            idle = [s for s in order if getattr(live.get(s), "_requests_in_flight", 0) == 0]
            if not order:
                return
            victim = (idle or order)[0]
            self._used.pop(victim, None)
            transport = live.get(victim)
            if transport is not None:
                await manager._discard_session(victim, transport)
                self.evicted += 1


def guarded(app: ASGIApp, settings: Settings) -> ASGIApp:
    """``app`` behind the body guard `openxiv serve` uses (size, read deadline, text that is text)."""
    return RequestGuardMiddleware(app, max_bytes=settings.max_body_bytes, body_timeout=settings.body_timeout)


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The uvicorn protocol that enforces the header deadline and size, as for `openxiv serve`."""
    from openxiv.service.guards.headers import protocol_class

    return {"http": protocol_class(settings.http_parser), "timeout_graceful_shutdown": 5}
