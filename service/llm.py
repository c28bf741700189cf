"""A small client of an OpenAI-compatible chat endpoint: the agent search's answer writer.

``POST {answer_base_url}/chat/completions`` (vLLM, llama.cpp, Ollama, hosted APIs), blocking
(`ChatEndpoint.complete`) or streamed as server-sent events (`ChatEndpoint.stream`, ``"stream":
true``: ``data: {choices: [{delta: {content}}]}`` lines up to ``data: [DONE]``). Both are async: a
call waits on the network in the event loop, never in a worker thread (whose slots are the server's
compute slots), and is cancelled with the task awaiting it, e.g. when its client disconnects. Its settings are the
service's own (``OPENXIV_ANSWER_*``, `ChatEndpoint.from_settings`): the evaluator's judge client
(`openxiv.evaluator.judge.openai`) is above the service in the layer rule and batches with retries,
where an answer to one waiting client wants one attempt within a deadline. Any failure (connection,
timeout, a status other than 200, a body that is not a chat completion) is an `AnswerLLMError` whose
message names the endpoint and what went wrong.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from openxiv.corpus.settings.model import Settings
from openxiv.service.errors import ApiError

__all__ = ["AnswerLLMError", "ChatEndpoint", "Completion"]

Message = dict[str, str]


class AnswerLLMError(ApiError):
    """The answer LLM failed; answered 502 (bad gateway) by a blocking request."""

    status_code = 502


@dataclass(frozen=True)
class Completion:
    text: str
    truncated: bool
    """The endpoint stopped at ``max_tokens`` (``finish_reason == "length"``)."""


@dataclass(frozen=True)
class ChatEndpoint:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0

    @classmethod
    def from_settings(cls, settings: Settings) -> ChatEndpoint | None:
        """The configured endpoint, or ``None`` when ``answer_base_url`` is unset (no LLM)."""
        if not settings.answer_base_url:
            return None
        if not settings.answer_model:
            raise AnswerLLMError("OPENXIV_ANSWER_MODEL: required when OPENXIV_ANSWER_BASE_URL is set")
        return cls(
            settings.answer_base_url.rstrip("/"),
            settings.answer_model,
            settings.answer_api_key,
            settings.answer_timeout,
        )

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    def _body(self, messages: list[Message], max_tokens: int, stream: bool) -> bytes:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens}
        if stream:
            body["stream"] = True
        return orjson.dumps(body)

    def _fail(self, what: str) -> AnswerLLMError:
        return AnswerLLMError(f"answer LLM {self.model!r} at {self.url}: {what}")

    async def complete(self, messages: list[Message], max_tokens: int) -> Completion:
        """One chat completion, whole."""
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                resp = await client.post(
                    self.url, content=self._body(messages, max_tokens, False), headers=self._headers()
                )
        except httpx.TimeoutException:
            raise self._fail(f"silent for {self.timeout:g} s (OPENXIV_ANSWER_TIMEOUT)") from None
        except httpx.HTTPError as exc:
            raise self._fail(f"{type(exc).__name__}: {exc}") from None
        if resp.status_code != 200:
            raise self._fail(f"HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            choice = orjson.loads(resp.content)["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise self._fail(f"not a chat completion ({type(exc).__name__})") from None
        if not isinstance(text, str):
            raise self._fail("message content is not text")
        return Completion(text.strip(), choice.get("finish_reason") == "length")

    async def stream(self, messages: list[Message], max_tokens: int) -> AsyncIterator[str | Completion]:
        """The answer's pieces of text as the endpoint sends them, then one `Completion` holding the
        whole text and whether it was cut at ``max_tokens``."""
        parts: list[str] = []
        finish: str | None = None
        try:
            async with (
                httpx.AsyncClient(timeout=self.timeout) as client,
                client.stream(
                    "POST", self.url, content=self._body(messages, max_tokens, True), headers=self._headers()
                ) as resp,
            ):
                if resp.status_code != 200:
                    head = (await resp.aread())[:200].decode(errors="replace")
                    raise self._fail(f"HTTP {resp.status_code}: {head}")
                async for line in resp.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    piece, reason = _delta(data)
                    finish = reason or finish
                    if piece:
                        parts.append(piece)
                        yield piece
        except httpx.TimeoutException:
            raise self._fail(f"silent for {self.timeout:g} s (OPENXIV_ANSWER_TIMEOUT)") from None
        except httpx.HTTPError as exc:
            raise self._fail(f"{type(exc).__name__}: {exc}") from None
        except ValueError as exc:
            raise self._fail(f"a streamed chunk is not a chat completion chunk ({exc})") from None
        yield Completion("".join(parts).strip(), finish == "length")


def _delta(data: str) -> tuple[str, str | None]:
    """The text and finish reason of one streamed chunk (``ValueError`` when it is not one)."""
    try:
        choice = orjson.loads(data)["choices"][0]
        piece = (choice.get("delta") or {}).get("content") or ""
        reason = choice.get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError, orjson.JSONDecodeError) as exc:
        raise ValueError(type(exc).__name__) from None
    if not isinstance(piece, str):
        raise ValueError("delta content is not text")
    return piece, reason
