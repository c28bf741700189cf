"""Who may do what: the search token, the separate admin token, Host/Origin checks, secrets in logs.

- **Search token** (``Settings.api_token``): when set, every path but `OPEN_PATHS` and the admin
  routes needs ``Authorization: Bearer <token>``, ``?token=<token>`` or ``x-api-key: <token>`` (the
  header Semantic Scholar clients send their key in). The web page (``/ui``) also
  takes the cookie its token form (``/ui/login``) sets: an HMAC of the token (`ui_cookie_value`), so
  the cookie is not the token; ``HttpOnly``, ``SameSite=Strict``, path ``/ui``, so it never
  authenticates an API call. A browser without it is sent to the form; ``GET /`` (a redirect to
  ``/ui``), the form and the stylesheet are open.
- **Admin routes** (``/v1/admin/...``, they change what the server serves) are off unless
  ``Settings.admin_token`` is set: a search client must not be able to swap the index, and with no
  token at all any local web page could POST to them. When on, they need ``Authorization: Bearer
  <admin token>`` (never in the URL, where it would land in logs and browser history), and a request
  from a browser is refused when its ``Origin`` is another site or, on a loopback-bound server, when
  its ``Host`` is not a loopback name (a DNS-rebinding page reaches ``127.0.0.1`` under its own name).
- **Logs**: `RedactingFilter` replaces token values (``?token=``, ``Bearer ...``) by ``***`` in every
  record it sees, the uvicorn access log included (``openxiv serve`` installs it on every handler).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from openxiv.service.guards.asgi import ASGIApp, Receive, Scope, Send, send_error
from openxiv.service.launch import LOOPBACK_NAMES

__all__ = [
    "ADMIN_PREFIX",
    "OPEN_PATHS",
    "UI_COOKIE",
    "AdminMiddleware",
    "AuthMiddleware",
    "RedactingFilter",
    "is_ui_path",
    "redact",
    "ui_cookie_value",
]

DOCS_ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")
OPEN_PATHS = frozenset(
    {"/healthz", "/readyz", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"}
    | {f"/docs/assets/{name}" for name in DOCS_ASSETS}
)
"""Paths that never need the token (liveness/readiness probes and the API documentation, with the
scripts it loads from this server: `openxiv.service.http.docs_pages`)."""
ADMIN_PREFIX = "/v1/admin/"
UI_COOKIE = "openxiv_ui"
"""The web page's session cookie (see `ui_cookie_value`)."""
UI_LOGIN = "/ui/login"
UI_STATIC = "/ui/static/"


def is_ui_path(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


def ui_cookie_value(token: str) -> str:
    """What the web page's cookie holds: an HMAC of the token, so a leaked cookie is not the API token."""
    return hmac.new(token.encode(), b"openxiv web page session", hashlib.sha256).hexdigest()


def _cookie(scope: Scope, name: str) -> str | None:
    for part in (_header(scope, b"cookie") or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


ADMIN_OFF = (
    "admin endpoints are off: start the server with OPENXIV_ADMIN_TOKEN=<secret> (or "
    "`openxiv serve --admin-token <secret>`) and send 'Authorization: Bearer <secret>'; "
    "without HTTP, `kill -HUP <pid of openxiv serve>` reloads the index"
)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _bearer(scope: Scope) -> bytes | None:
    value = _header(scope, b"authorization")
    if value is None:
        return None
    scheme, _, given = value.partition(" ")
    return given.strip().encode() if scheme.lower() == "bearer" else None


def _hostname(host_header: str) -> str:
    """``example.com:8000`` -> ``example.com``; ``[::1]:8000`` -> ``::1``."""
    return (urlsplit("//" + host_header).hostname or "").lower()


class AuthMiddleware:
    """Require the search token on every path but `OPEN_PATHS` and the admin routes (own token)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()
        self.ui_cookie = ui_cookie_value(token).encode()

    @staticmethod
    def _open(scope: Scope, path: str) -> bool:
        return (
            path in OPEN_PATHS
            or path.startswith(ADMIN_PREFIX)
            or path == UI_LOGIN
            or path.startswith(UI_STATIC)
            or (path == "/" and scope.get("method") in ("GET", "HEAD"))
        )

    def _allowed(self, scope: Scope) -> bool:
        given = _bearer(scope)
        if given is not None and hmac.compare_digest(given, self.token):
            return True
        key = _header(scope, b"x-api-key")  # how Semantic Scholar clients send their key
        if key is not None and hmac.compare_digest(key.strip().encode(), self.token):
            return True
        if is_ui_path(scope.get("path", "")):
            cookie = _cookie(scope, UI_COOKIE)
            if cookie is not None and hmac.compare_digest(cookie.encode(), self.ui_cookie):
                return True
        query = scope.get("query_string", b"").decode("latin-1")
        if "token=" in query:
            for value in parse_qs(query).get("token", []):
                if hmac.compare_digest(value.encode(), self.token):
                    return True
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or self._open(scope, path) or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        if is_ui_path(path):  # a browser: to the token form, then back here
            query = scope.get("query_string", b"").decode("latin-1")
            back = path + (f"?{query}" if query and "token=" not in query else "")
            location = f"{UI_LOGIN}?next={quote(back, safe='')}".encode("latin-1")
            await send(
                {
                    "type": "http.response.start",
                    "status": 303,
                    "headers": [(b"location", location), (b"content-length", b"0")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        await send_error(
            send,
            401,
            "this openxiv server needs a token: send 'Authorization: Bearer <token>' or '?token=<token>'",
            [(b"www-authenticate", b"Bearer")],
        )


class AdminMiddleware:
    """Guard ``/v1/admin/...``: off without an admin token; else token, Origin and Host checks."""

    def __init__(self, app: ASGIApp, admin_token: str | None, loopback: bool) -> None:
        self.app = app
        self.token = admin_token.encode() if admin_token else None
        self.loopback = loopback

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """``(status, detail)`` when the request may not use an admin route, else ``None``."""
        if self.token is None:
            return 403, ADMIN_OFF
        host = _header(scope, b"host") or ""
        if self.loopback and _hostname(host) not in LOOPBACK_NAMES:
            return 403, (
                f"Host {host!r} refused: this server listens on loopback and takes admin requests "
                "only for localhost, 127.0.0.1 or [::1] (protection against DNS rebinding)"
            )
        origin = _header(scope, b"origin")
        if origin is not None and (origin == "null" or urlsplit(origin).netloc.lower() != host.lower()):
            return 403, f"cross-site request refused: Origin {origin!r} is not this server ({host})"
        given = _bearer(scope)
        if given is None or not hmac.compare_digest(given, self.token):
            return 401, "admin endpoints need 'Authorization: Bearer <admin token>' (OPENXIV_ADMIN_TOKEN)"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith(ADMIN_PREFIX):
            refused = self.refusal(scope)
            if refused is not None:
                extra = [(b"www-authenticate", b"Bearer")] if refused[0] == 401 else []
                await send_error(send, refused[0], refused[1], extra)
                return
        await self.app(scope, receive, send)


_SECRET_PARAM = re.compile(r"(\b(?:token|api_token|admin_token)=)[^&\s\"']+", re.IGNORECASE)
_BEARER = re.compile(r"(\bBearer\s+)[^\s\"',]+", re.IGNORECASE)


def redact(text: str) -> str:
    """``?token=abc`` -> ``?token=***``; ``Bearer abc`` -> ``Bearer ***``."""
    return _BEARER.sub(r"\1***", _SECRET_PARAM.sub(r"\1***", text))


def _redact_arg(value: Any) -> Any:
    return redact(value) if isinstance(value, str) else value


class RedactingFilter(logging.Filter):
    """Redact token values in a record's message and its string arguments.

    The arguments are redacted in place rather than pre-formatted, because uvicorn's access
    formatter reads them positionally (client, method, path with query, version, status).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redact_arg(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: _redact_arg(v) for k, v in record.args.items()}
        return True
