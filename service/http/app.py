"""The FastAPI application: `create_app(settings, index_root)`.

The snapshot is opened once at startup (lifespan), shared read-only by every request, swapped by
``POST /v1/admin/reload``, SIGHUP or (``OPENXIV_WATCH_INTERVAL`` > 0) when ``CURRENT`` changes, and
closed at shutdown. Routes live in ``routes_*`` modules.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio.to_thread
from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool

from openxiv.corpus.settings.model import Settings, get_settings
from openxiv.indexer import layout
from openxiv.service.holder import IndexHolder
from openxiv.service.http import routes_arxiv, routes_search, routes_ui, routes_unserved, routes_v1
from openxiv.service.http.errors import CatchAllMiddleware, install_handlers
from openxiv.service.http.guard import RequestGuardMiddleware
from openxiv.service.http.security import LOOPBACK_NAMES, AdminMiddleware, AuthMiddleware

__all__ = ["app_from_env", "create_app", "reload_triggers"]

log = logging.getLogger("openxiv.service")

DESCRIPTION = """Self-hosted literature search over a local arXiv corpus.

* **DeepXiv-compatible**: `POST /search` (the AutoResearchBench agent's request; also at
  `/arxiv/retrieve` and `/`) and `GET /arxiv/?type=retrieve|head|brief|section|raw|preview|json`
  (what `deepxiv_sdk.Reader(base_url=...)` calls).
* **v1**: `/v1/search`, `/v1/papers/{id}`, `/v1/papers/{id}/sections/{name}`, `/v1/index`.

Errors are `{"status": "error", "detail": "..."}` with a 4xx status that names the problem.
"""


def serve_concurrency() -> int:
    """Requests computed at once per process (``OPENXIV_SERVE_CONCURRENCY``, default the CPU count, at
    least 2); more wait in the event loop. A value that is not a positive integer is a `ConfigError`."""
    configured = get_settings().serve_concurrency
    return configured if configured is not None else max(2, os.cpu_count() or 2)


_background: set[asyncio.Future[None]] = set()


def _on_sighup(holder: IndexHolder) -> None:
    async def reload() -> None:
        try:
            result = await run_in_threadpool(holder.reload)
            log.info("SIGHUP reload: %s (snapshot %s)", result["status"], result["snapshot"])
        except Exception:
            log.exception("SIGHUP reload failed; still serving %s", holder.snapshot)

    task = asyncio.ensure_future(reload())
    _background.add(task)
    task.add_done_callback(_background.discard)


async def _watch(holder: IndexHolder, interval: float) -> None:
    """Reload whenever ``CURRENT`` names another snapshot (each reload is logged by the holder); a
    failure is logged once per distinct error, and the loaded snapshot keeps serving."""
    log.info("watching %s/%s every %g s", holder.index_root, layout.CURRENT, interval)
    last_error = ""
    while True:
        await asyncio.sleep(interval)
        try:
            await run_in_threadpool(holder.reload)
            last_error = ""
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            if error != last_error:
                log.warning("watch: reload failed (%s); still serving %s", error, holder.snapshot)
            last_error = error


@asynccontextmanager
async def reload_triggers(holder: IndexHolder, settings: Settings) -> AsyncIterator[None]:
    """While inside: SIGHUP reloads ``holder`` and, with ``OPENXIV_WATCH_INTERVAL`` > 0, so does a
    change of ``CURRENT``. The HTTP service and the MCP server both run under it, so they follow one
    set of reload rules."""
    loop = asyncio.get_running_loop()
    hup = False
    try:
        loop.add_signal_handler(signal.SIGHUP, _on_sighup, holder)
        hup = True
    except (NotImplementedError, RuntimeError, AttributeError, ValueError):
        log.info("SIGHUP reload not available here; use POST /v1/admin/reload (OPENXIV_ADMIN_TOKEN)")
    watcher = (
        asyncio.ensure_future(_watch(holder, settings.watch_interval))
        if settings.watch_interval > 0
        else None
    )
    try:
        yield
    finally:
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        if hup:
            loop.remove_signal_handler(signal.SIGHUP)


def create_app(settings: Settings, index_root: str | Path) -> FastAPI:
    holder = IndexHolder(Path(index_root), settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(holder.load)
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = serve_concurrency()
        try:
            async with reload_triggers(holder, settings):
                yield
        finally:
            holder.close()

    app = FastAPI(
        title="openxiv",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url="/docs",
    )
    app.state.holder = holder
    app.state.settings = settings
    install_handlers(app)
    app.include_router(routes_search.router)
    app.include_router(routes_arxiv.router)
    app.include_router(routes_v1.router)
    app.include_router(routes_unserved.router)
    app.include_router(routes_ui.router)  # the web page at /ui; GET / redirects there
    # Middleware added last runs first: catch-all, admin guard, search token, then body/text checks.
    app.add_middleware(
        RequestGuardMiddleware, max_bytes=settings.max_body_bytes, body_timeout=settings.body_timeout
    )
    if settings.api_token:
        app.add_middleware(AuthMiddleware, token=settings.api_token)
    app.add_middleware(
        AdminMiddleware, admin_token=settings.admin_token, loopback=settings.host in LOOPBACK_NAMES
    )
    app.add_middleware(CatchAllMiddleware)
    return app


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory`` (and multi-worker serving): settings from ``OPENXIV_*``."""
    settings = Settings.from_env()
    return create_app(settings, settings.index_root)
