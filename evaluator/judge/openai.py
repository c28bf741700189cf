"""The ``openai`` back end: any OpenAI-compatible ``POST {base_url}/chat/completions`` over HTTP.

Bounded concurrency (``concurrency`` httpx clients of one connection each, taken from a queue), a timeout
per request, and retries with exponential backoff (``backoff * 2**(attempt-1)`` seconds, or the
server's ``Retry-After`` when longer) on timeouts, connection errors, 429, 5xx, a body that is not
the chat-completion JSON, and an answer with neither content nor reasoning text. Other 4xx answers
(bad key, unknown model) are not retried. Requests already in the cache are not sent; every answer
received is appended to the cache before it is used. An item that still fails is returned with its
error (``timeout``, ``connection``, ``http_429``, ``http_500``, ``malformed``, ``empty``...), which the
report counts as not judged.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import httpx
import orjson

from openxiv.evaluator.judge.cache import JudgeCache
from openxiv.evaluator.judge.protocol import Answer, JudgeRequest, cache_key

__all__ = ["OpenAIJudge"]

RETRY_STATUS = frozenset({408, 409, 425, 429})
_JSON = {"content-type": "application/json"}
"""The body is UTF-8 JSON written by orjson: a report in Chinese is half the bytes of escaped JSON, and
encoding costs a fraction of json.dumps (BENCHMARKS.md, "Judge")."""


class OpenAIJudge:
    backend = "openai"
    unavailable: str | None = None

    def __init__(self, base_url: str, model: str, cache: JudgeCache, *, api_key: str | None = None,
                 concurrency: int = 16, timeout: float = 120.0, retries: int = 5,
                 backoff: float = 1.0) -> None:  # fmt: skip
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.cache = cache
        self.api_key = api_key
        self.concurrency = concurrency
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    def answer(self, requests: list[JudgeRequest]) -> list[Answer]:
        return asyncio.run(self._answer_all(requests))

    async def _answer_all(self, requests: list[JudgeRequest]) -> list[Answer]:
        keys = [cache_key(r.prompt_version, self.model, r.payload_messages()) for r in requests]
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        # One client with one connection per slot: httpcore's shared pool scans every connection for
        # every queued request, which costs more CPU than the request itself at 32 connections
        # (BENCHMARKS.md, "Judge"). Taking a client from the queue is the concurrency bound.
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        slots = min(self.concurrency, max(1, len(first)))
        tls = ssl.create_default_context()  # loaded once: the CA bundle costs ~40 ms per client
        clients = [
            httpx.AsyncClient(headers=headers, timeout=self.timeout, limits=one, verify=tls)
            for _ in range(slots)
        ]
        pool: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        for c in clients:
            pool.put_nowait(c)
        try:
            unique = await asyncio.gather(*(self._one(pool, requests[i], k) for k, i in first.items()))
        finally:
            for c in clients:
                await c.aclose()
        by_key = dict(zip(first, unique, strict=True))
        out = []
        for i, k in enumerate(keys):
            a = by_key[k]
            # a request repeated within one batch is answered once; its repeats count as cache hits
            out.append(
                a if first[k] == i else Answer(a.text, a.reasoning, a.error, cached=a.text is not None)
            )
        return out

    async def _one(self, pool: asyncio.Queue[httpx.AsyncClient], req: JudgeRequest, key: str) -> Answer:
        hit = self.cache.get(key)
        if hit is not None:
            return Answer(hit.get("text"), hit.get("reasoning"), cached=True)
        body = {"model": self.model, "messages": req.payload_messages(), "temperature": req.temperature,
                "max_tokens": req.max_tokens}  # fmt: skip
        error, wait = "error", 0.0
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(max(wait, self.backoff * 2 ** (attempt - 1)))
            client = await pool.get()  # a retry waits for its backoff without holding a slot
            try:
                error, wait, got = await self._call(client, body)
            finally:
                pool.put_nowait(client)
            if got is not None:
                text, reasoning = got
                self.cache.put(key, req.prompt_version, self.model, req.item, text, reasoning)
                return Answer(text, reasoning, attempts=attempt + 1)
            if error.startswith("http_4") and not error.startswith(tuple(f"http_{s}" for s in RETRY_STATUS)):
                return Answer(None, error=error, attempts=attempt + 1)
        return Answer(None, error=error, attempts=self.retries + 1)

    async def _call(
        self, client: httpx.AsyncClient, body: dict[str, Any]
    ) -> tuple[str, float, tuple[str, str | None] | None]:
        """``(error, retry_after, (text, reasoning) or None)`` of one HTTP attempt."""
        try:
            resp = await client.post(
                f"{self.base_url}/chat/completions", content=orjson.dumps(body), headers=_JSON
            )
        except httpx.TimeoutException:
            return "timeout", 0.0, None
        except httpx.HTTPError as exc:
            return f"connection: {type(exc).__name__}", 0.0, None
        if resp.status_code != 200:
            return f"http_{resp.status_code}", _retry_after(resp), None
        try:
            message = orjson.loads(resp.content)["choices"][0]["message"]
            content = message.get("content") or ""
            reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
            if not isinstance(content, str) or not isinstance(reasoning, str):
                raise TypeError("content is not text")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            return f"malformed: {type(exc).__name__}", 0.0, None
        if content.strip():
            return "", 0.0, (content, None)
        if reasoning.strip():  # a reasoning model that spent its tokens thinking: keep what it thought
            return "", 0.0, ("", reasoning)
        return "empty", 0.0, None


def _retry_after(resp: httpx.Response) -> float:
    try:
        return min(60.0, float(resp.headers.get("retry-after", 0)))
    except ValueError:
        return 0.0
