"""The FastAPI application: `create_app(settings, index_root)`.

The snapshot is opened once at startup (lifespan), shared read-only by every request, swapped by
``POST /v1/admin/reload``, SIGHUP or (``OPENXIV_WATCH_INTERVAL`` > 0) when ``CURRENT`` changes, and
closed at shutdown. Routes live in ``routes_*`` modules.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.to_thread
from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool

from openxiv.corpus.settings.model import Settings
from openxiv.service.experiments.asgi import ExperimentsMiddleware
from openxiv.service.experiments.controls import Controls
from openxiv.service.guards.access import AdminMiddleware, AuthMiddleware
from openxiv.service.guards.body import RequestGuardMiddleware
from openxiv.service.holder import IndexHolder, reload_triggers
from openxiv.service.http import (
    routes_agent,
    routes_arxiv,
    routes_nav,
    routes_refs,
    routes_s2,
    routes_search,
    routes_tools,
    routes_ui,
    routes_unserved,
    routes_v1,
)
from openxiv.service.http.docs_pages import install_docs
from openxiv.service.http.errors import CatchAllMiddleware, install_handlers, refuse
from openxiv.service.launch import LOOPBACK_NAMES

__all__ = ["app_from_env", "create_app", "serve_concurrency"]


DESCRIPTION = """Self-hosted literature search over a local arXiv corpus.

* **DeepXiv-compatible**: `POST /search` (the AutoResearchBench agent's request; also at
  `/arxiv/retrieve` and `/`) and `GET /arxiv/?type=retrieve|head|brief|section|raw|preview|json|similar|find`
  (what `deepxiv_sdk.Reader(base_url=...)` calls).
* **Agents' tool shapes**: `POST /arxiv/agent/search` (+ `/stream`, NDJSON; DeepXiv's agent
  search) and `POST /retrieve` (Search-R1's retriever).
* **v1**: `/v1/search`, `/v1/papers/{id}`, `/v1/papers/{id}/sections/{name}`, `/v1/similar`, `/v1/find`,
  `/v1/passages`, `/v1/facets`, `/v1/match`, `/v1/authors`, `/v1/bibtex`, `/v1/index`.
* **Semantic Scholar-compatible**: `/graph/v1/paper/search`, `/paper/search/match`, `/paper/{id}`,
  `/paper/batch`, `/paper/{id}/references|citations`, `/snippet/search` and
  `/recommendations/v1/papers` (S2's shapes and `{"error": ...}` errors).

Errors are `{"status": "error", "detail": "..."}` with a 4xx status that names the problem.
"""


def serve_concurrency(settings: Settings) -> int:
    """Requests computed at once per process (``settings.serve_concurrency``, default the CPU count,
    at least 2); more wait in the event loop."""
    configured = settings.serve_concurrency
    return configured if configured is not None else max(2, os.cpu_count() or 2)


def create_app(settings: Settings, index_root: str | Path, controls: Controls | None = None) -> FastAPI:
    """The app over the index at ``index_root``; ``controls`` (default: `Controls.of` the settings, which
    raises `openxiv.service.experiments.controls.BadControls` on a bad one) are the experiment controls."""
    holder = IndexHolder(Path(index_root), settings, warm=settings.serve_warm)
    controls = controls if controls is not None else Controls.of(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(holder.load)
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = serve_concurrency(settings)
        try:
            async with reload_triggers(holder, settings):
                yield
        finally:
            holder.close()
            if controls is not None:
                controls.close()

    app = FastAPI(
        title="openxiv",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # /docs and /redoc with local assets: install_docs
        redoc_url=None,
    )
    install_docs(app)
    app.state.holder = holder
    app.state.settings = settings
    app.state.experiments = controls
    app.state.answer_slots = anyio.Semaphore(settings.answer_concurrency)  # agent search's LLM calls
    install_handlers(app)
    app.include_router(routes_search.router)
    app.include_router(routes_arxiv.router)
    app.include_router(routes_nav.router)  # before routes_v1 too (/v1/papers/{id}/bibtex)
    app.include_router(routes_refs.router)  # before routes_v1: /v1/papers/{id:path} would take the suffix
    app.include_router(routes_v1.router)
    app.include_router(routes_agent.router)  # DeepXiv's agent search, Search-R1's /retrieve
    app.include_router(routes_tools.router)
    app.include_router(routes_s2.router)  # /graph/v1 and /recommendations/v1 (Semantic Scholar's shapes)
    app.include_router(routes_unserved.router)
    app.include_router(routes_ui.router)  # the web page at /ui; GET / redirects there
    # Middleware added last runs first: catch-all, admin guard, search token, then body/text checks.
    app.add_middleware(
        RequestGuardMiddleware,
        max_bytes=settings.max_body_bytes,
        body_timeout=settings.body_timeout,
        refuse=refuse,
    )
    if settings.api_token:
        app.add_middleware(AuthMiddleware, token=settings.api_token)
    app.add_middleware(
        AdminMiddleware, admin_token=settings.admin_token, loopback=settings.host in LOOPBACK_NAMES
    )
    if controls is not None:  # off: not installed at all, so answers are as they were
        app.add_middleware(ExperimentsMiddleware, controls=controls, snapshot=lambda: holder.snapshot)
    app.add_middleware(CatchAllMiddleware)
    return app


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory`` (and multi-worker serving): settings from ``OPENXIV_*``."""
    settings = Settings.from_env()
    return create_app(settings, settings.index_root)
