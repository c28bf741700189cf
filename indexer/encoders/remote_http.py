"""One client for every model server openxiv talks to: ``/v1/embeddings``, ``/rerank``, chat.

A model server is named by a URL with the model after ``#``: ``http://127.0.0.1:7997/v1#BAAI/bge-m3``
(`parse_remote`). Two ways to call it, with one set of rules:

- `post_json` (builds): retries a timeout, a connection error, a 429, a 5xx and an answer that is not
  JSON, waiting ``backoff * 2**attempt`` seconds or what a ``Retry-After`` header says (capped at
  `MAX_RETRY_AFTER_S`); any other 4xx is `RemoteRefused` at once, naming the server's own message.
- `post_json_once` and `apost_json_once` (a search): one attempt within the time left, no retry; a
  failure is `RemoteUnavailable`, which a search turns into a warning (or a 503 with no other side).

The async form lets the HTTP front wait for a query vector on the event loop, holding no compute slot
(`openxiv.service.http.routes_search`).
"""

from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import dataclass
from typing import Any

import httpx

from openxiv.corpus.settings.sources import ConfigError

__all__ = [
    "MAX_RETRY_AFTER_S",
    "RemoteEndpoint",
    "RemoteRefused",
    "RemoteUnavailable",
    "apost_json_once",
    "is_remote",
    "parse_remote",
    "post_json",
    "post_json_once",
]

log = logging.getLogger("openxiv.indexer")
MAX_RETRY_AFTER_S = 60.0
"""The longest ``Retry-After`` obeyed; a server asking for more is waited this long per retry."""
_RETRYABLE = frozenset({408, 425, 429, 500, 502, 503, 504})


class RemoteUnavailable(RuntimeError):
    """The server cannot answer now (down, too slow, overloaded, or answered nonsense): a search goes
    on without it and says so; a build has retried and gives up."""


class RemoteRefused(ConfigError):
    """The server answered, but not what the setting asks for (another model, another width, a 4xx):
    a configuration problem, never retried."""


def is_remote(value: str | None) -> bool:
    """Whether a model setting names a server (``http://`` or ``https://``)."""
    return (value or "").strip().lower().startswith(("http://", "https://", "http:http", "http:https"))


@dataclass(frozen=True)
class RemoteEndpoint:
    """A server's base URL (up to ``/v1`` for OpenAI-compatible ones) and the model it is asked for."""

    base_url: str
    model: str
    api_key: str | None = None

    @property
    def spec(self) -> str:
        return f"{self.base_url}#{self.model}"

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}


def parse_remote(value: str, setting: str = "OPENXIV_MODEL", api_key: str | None = None) -> RemoteEndpoint:
    """``http://host:port/v1#model`` (also spelt ``http:http://host:port/v1#model``) as an endpoint;
    `ConfigError` naming ``setting`` when the URL or the model is missing."""
    raw = value.strip()
    if raw.lower().startswith(("http:http", "http:https")):
        raw = raw[len("http:") :]
    url, _, model = raw.partition("#")
    url = url.rstrip("/")
    parsed = httpx.URL(url) if url else None
    if parsed is None or not parsed.host or parsed.scheme not in ("http", "https"):
        raise ConfigError(f"{setting}={value!r}: expected http://host:port/v1#<model name>")
    if not model.strip():
        raise ConfigError(
            f"{setting}={value!r}: name the served model after '#', e.g. {url}#BAAI/bge-m3 "
            "(the name the server lists at GET /v1/models)"
        )
    return RemoteEndpoint(url, model.strip(), api_key)


def _server_message(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return text[:300] if text else response.reason_phrase


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, min(float(value), MAX_RETRY_AFTER_S))
    except ValueError:
        return None  # an HTTP date: back off as usual


def _decode(response: httpx.Response, where: str) -> Any:
    """The JSON of a 2xx answer; `RemoteRefused` for a 4xx the server will refuse again,
    `RemoteUnavailable` for anything worth retrying (with ``retry_after`` set on the error)."""
    if response.status_code in _RETRYABLE or response.status_code >= 500:
        err = RemoteUnavailable(f"{where}: HTTP {response.status_code} {_server_message(response)}")
        err.retry_after = _retry_after(response)  # type: ignore[attr-defined]
        raise err
    if response.status_code >= 400:
        raise RemoteRefused(f"{where}: HTTP {response.status_code} {_server_message(response)}")
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RemoteUnavailable(f"{where}: the answer is not JSON ({exc})") from exc


def post_json(
    client: httpx.Client,
    endpoint: RemoteEndpoint,
    path: str,
    payload: dict[str, Any],
    *,
    timeout: float,
    retries: int,
    backoff: float,
) -> Any:
    """POST ``payload`` with retries (module docstring); the decoded JSON answer."""
    where = f"{endpoint.url(path)} ({endpoint.model})"
    attempt = 0
    while True:
        try:
            response = client.post(
                endpoint.url(path), json=payload, headers=endpoint.headers(), timeout=timeout
            )
            return _decode(response, where)
        except RemoteRefused:
            raise
        except (httpx.HTTPError, RemoteUnavailable) as exc:
            said = str(exc) if isinstance(exc, RemoteUnavailable) else f"{where}: {type(exc).__name__} {exc}"
            if attempt >= retries:
                raise RemoteUnavailable(f"gave up after {attempt + 1} attempts: {said}") from exc
            wait = getattr(exc, "retry_after", None)
            if wait is None:
                wait = backoff * (2**attempt) * (1 + 0.25 * random.random())
            log.warning("%s; retry %d/%d in %.1f s", said, attempt + 1, retries, wait)
            time.sleep(wait)
            attempt += 1


def post_json_once(
    client: httpx.Client, endpoint: RemoteEndpoint, path: str, payload: dict[str, Any], timeout: float
) -> Any:
    """One POST within ``timeout`` seconds; `RemoteUnavailable` on any failure but a refusal."""
    where = f"{endpoint.url(path)} ({endpoint.model})"
    try:
        response = client.post(endpoint.url(path), json=payload, headers=endpoint.headers(), timeout=timeout)
    except httpx.HTTPError as exc:
        raise RemoteUnavailable(f"{where}: {type(exc).__name__} {exc}".strip()) from exc
    return _decode(response, where)


async def apost_json_once(
    client: httpx.AsyncClient, endpoint: RemoteEndpoint, path: str, payload: dict[str, Any], timeout: float
) -> Any:
    """`post_json_once` on the event loop."""
    where = f"{endpoint.url(path)} ({endpoint.model})"
    try:
        response = await client.post(
            endpoint.url(path), json=payload, headers=endpoint.headers(), timeout=timeout
        )
    except httpx.HTTPError as exc:
        raise RemoteUnavailable(f"{where}: {type(exc).__name__} {exc}".strip()) from exc
    return _decode(response, where)
