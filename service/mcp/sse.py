"""The SSE transport of ``openxiv mcp`` (``--transport sse``): the MCP protocol of 2024-11, which
BrowseComp-Plus' server uses by default and some agent frameworks still speak.

A client opens ``GET /mcp`` (an event stream; its first event names the URL to post messages to,
``/messages/?session_id=...``) and posts its JSON-RPC messages there. The ``mcp`` SDK runs a
server's lifespan once per SSE connection, so the server is built without one (``load=False``) and
the snapshot is opened here once for the app's life (`serving`); connections come and go without
reopening or closing it. Behind the HTTP API's bearer token when one is set, like ``--transport http``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.types import ASGIApp

from openxiv.service.guards.access import AuthMiddleware
from openxiv.service.library import Library
from openxiv.service.mcp.server import MCP_PATH, serving

__all__ = ["MESSAGES_PATH", "sse_app"]

MESSAGES_PATH = "/messages/"


def sse_app(server: MCPServer, library: Library, host: str, token: str | None) -> ASGIApp:
    """The SSE app: the event stream at `MCP_PATH`, messages at `MESSAGES_PATH`, the snapshot open
    while the app runs."""
    inner = server.sse_app(sse_path=MCP_PATH, message_path=MESSAGES_PATH, host=host)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with serving(library):
            yield

    app: ASGIApp = Starlette(routes=inner.routes, lifespan=lifespan)
    return AuthMiddleware(app, token=token) if token else app
