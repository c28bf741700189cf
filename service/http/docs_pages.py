"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) with their scripts served from this server.

FastAPI's default pages load Swagger UI, ReDoc and Google Fonts from public CDNs: blank on a machine
without internet, and every visit tells a third party. The assets come from the ``fastapi-offline``
package (a dependency: Swagger UI's dist under Apache 2.0, ReDoc's standalone bundle under MIT, both
licences named in that package's metadata), read from the installed package, never fetched. ReDoc
gets no web fonts (the browser's own fonts), and Swagger UI no online validator badge.

ReDoc's bundle draws Redocly's logo in its sidebar footer from ``cdn.redoc.ly``: the bundle is served
with that address replaced by an empty inline image (`REDOC_LOGO`). The pages carry a
Content-Security-Policy (`csp_for`) that allows scripts, styles, images and requests from this server
only (plus the page's own inline scripts, by their hashes, and ``data:`` images), so a browser
refuses whatever a future bundle would fetch from elsewhere.
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import cache
from importlib import resources
from importlib.abc import Traversable

from fastapi import FastAPI, HTTPException, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, Response

from openxiv.service.guards.access import DOCS_ASSETS

__all__ = ["ASSETS", "ASSET_PREFIX", "REDOC_LOGO", "csp_for", "install_docs"]

ASSET_PREFIX = "/docs/assets/"
ASSETS = dict(
    zip(
        DOCS_ASSETS,
        (
            "text/javascript; charset=utf-8",
            "text/css; charset=utf-8",
            "text/javascript; charset=utf-8",
            "image/png",
        ),
        strict=True,
    )
)
"""Files of ``fastapi_offline/static`` served at ``ASSET_PREFIX + name`` (open without a token)."""


REDOC_LOGO = (
    b"https://cdn.redoc.ly/redoc/logo-mini.svg",
    b"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E",
)
"""The logo ReDoc's footer loads from Redocly's CDN, and what it is replaced with in the bundle."""
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


@cache
def _asset(name: str) -> bytes:
    static: Traversable = resources.files("fastapi_offline").joinpath("static")
    data = static.joinpath(name).read_bytes()
    if name == "redoc.standalone.js":
        data = data.replace(*REDOC_LOGO)
    return data


def csp_for(html: str) -> str:
    """The Content-Security-Policy of a documentation page: this server only, and the page's own
    inline scripts by their SHA-256 (Swagger UI's start-up script)."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(m.encode()).digest()).decode() + "'"
        for m in _INLINE_SCRIPT.findall(html)
    )
    return (
        f"default-src 'none'; script-src 'self' {hashes}".rstrip() + "; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )


def _page(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = csp_for(bytes(page.body).decode())
    page.headers["X-Content-Type-Options"] = "nosniff"
    return page


def install_docs(app: FastAPI, openapi_url: str = "/openapi.json") -> None:
    """Add ``/docs``, ``/docs/oauth2-redirect``, ``/redoc`` and the assets to ``app`` (created with
    ``docs_url=None, redoc_url=None``)."""

    def base(request: Request) -> str:
        return str(request.scope.get("root_path", ""))

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = base(request)
        page = get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=root + ASSET_PREFIX + "swagger-ui-bundle.js",
            swagger_css_url=root + ASSET_PREFIX + "swagger-ui.css",
            swagger_favicon_url=root + ASSET_PREFIX + "favicon.png",
            oauth2_redirect_url=root + "/docs/oauth2-redirect",
            swagger_ui_parameters={"validatorUrl": None},
        )
        return _page(page)

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return _page(get_swagger_ui_oauth2_redirect_html())

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = base(request)
        page = get_redoc_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=root + ASSET_PREFIX + "redoc.standalone.js",
            redoc_favicon_url=root + ASSET_PREFIX + "favicon.png",
            with_google_fonts=False,
        )
        return _page(page)

    @app.get(ASSET_PREFIX + "{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        if name not in ASSETS:
            raise HTTPException(404, f"no documentation asset {name!r}")
        return Response(
            _asset(name), media_type=ASSETS[name], headers={"cache-control": "public, max-age=86400"}
        )
