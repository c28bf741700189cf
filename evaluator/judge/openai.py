"""The ``openai`` back end: any OpenAI-compatible ``POST {base_url}/chat/completions`` over HTTP.

Bounded concurrency (an `asyncio.Semaphore` and an aiohttp connection pool of the same size), a
timeout per request, and retries with exponential backoff (``backoff * 2**(attempt-1)`` seconds, or
the server's ``Retry-After`` when longer; a retry waits without holding a slot) on timeouts,
connection errors, 429, 5xx, a body that is not the chat-completion JSON, and an answer with neither
content nor reasoning text. Other 4xx answers (bad key, unknown model) are not retried. Requests
already in the cache are not sent; every answer received is appended to the cache before it is used.
An item that still fails is returned with its error (``timeout``, ``connection``, ``http_429``,
``http_500``, ``malformed``, ``empty``...), which the report counts as not judged.

aiohttp, not httpx: at 32 requests in flight httpx's connection pool costs several times aiohttp's
CPU per request (BENCHMARKS.md, "Judge"); bodies are UTF-8 JSON written by orjson.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import orjson

from openxiv.evaluator.judge.cache import JudgeCache
from openxiv.evaluator.judge.protocol import Answer, JudgeRequest, cache_key

__all__ = ["OpenAIJudge"]

RETRY_STATUS = frozenset({408, 409, 425, 429})
_JSON = {"content-type": "application/json"}


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
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        sem = asyncio.Semaphore(self.concurrency)
        connector = aiohttp.TCPConnector(limit=self.concurrency)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        async with aiohttp.ClientSession(connector=connector, headers=headers, timeout=timeout) as session:
            unique = await asyncio.gather(
                *(self._one(session, sem, requests[i], k) for k, i in first.items())
            )
        by_key = dict(zip(first, unique, strict=True))
        out = []
        for i, k in enumerate(keys):
            a = by_key[k]
            # a request repeated within one batch is answered once; its repeats count as cache hits
            out.append(
                a if first[k] == i else Answer(a.text, a.reasoning, a.error, cached=a.text is not None)
            )
        return out

    async def _one(
        self, session: aiohttp.ClientSession, sem: asyncio.Semaphore, req: JudgeRequest, key: str
    ) -> Answer:
        hit = self.cache.get(key)
        if hit is not None:
            return Answer(hit.get("text"), hit.get("reasoning"), cached=True)
        body = orjson.dumps({"model": self.model, "messages": req.payload_messages(),
                             "temperature": req.temperature, "max_tokens": req.max_tokens})  # fmt: skip
        error, wait = "error", 0.0
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(max(wait, self.backoff * 2 ** (attempt - 1)))
            async with sem:
                error, wait, got = await self._call(session, body)
            if got is not None:
                text, reasoning = got
                self.cache.put(key, req.prompt_version, self.model, req.item, text, reasoning)
                return Answer(text, reasoning, attempts=attempt + 1)
            if error.startswith("http_4") and not error.startswith(tuple(f"http_{s}" for s in RETRY_STATUS)):
                return Answer(None, error=error, attempts=attempt + 1)
        return Answer(None, error=error, attempts=self.retries + 1)

    async def _call(
        self, session: aiohttp.ClientSession, body: bytes
    ) -> tuple[str, float, tuple[str, str | None] | None]:
        """``(error, retry_after, (text, reasoning) or None)`` of one HTTP attempt."""
        try:
            async with session.post(f"{self.base_url}/chat/completions", data=body, headers=_JSON) as resp:
                raw = await resp.read()
                status, retry_after = resp.status, resp.headers.get("retry-after")
        except TimeoutError:
            return "timeout", 0.0, None
        except aiohttp.ClientError as exc:
            return f"connection: {type(exc).__name__}", 0.0, None
        if status != 200:
            return f"http_{status}", _seconds(retry_after), None
        return _message(raw)


def _message(raw: bytes) -> tuple[str, float, tuple[str, str | None] | None]:
    try:
        message: Any = orjson.loads(raw)["choices"][0]["message"]
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


def _seconds(retry_after: str | None) -> float:
    try:
        return min(60.0, float(retry_after or 0))
    except ValueError:
        return 0.0
