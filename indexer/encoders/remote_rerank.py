"""`Reranker`s reached over HTTP: a ``/rerank`` server, or a chat model ranking the list at once.

``OPENXIV_RERANK=http://127.0.0.1:8080#BAAI/bge-reranker-v2-m3`` with ``OPENXIV_RERANK_API`` naming
the server's shape, or ``auto`` to find it on the first call:

- ``tei`` (text-embeddings-inference): ``POST <base>/rerank`` with ``{"query", "texts"}``, answered by a
  list of ``{"index", "score"}``;
- ``cohere``, ``jina``, ``vllm`` (``/v1/rerank``), ``infinity``: ``POST <base>/rerank`` with ``{"model",
  "query", "documents", "top_n"}``, answered by ``{"results": [{"index", "relevance_score"}]}``;
- ``auto``: the second form first, the first one after a 4xx, then kept;
- ``chat``: an OpenAI-compatible ``POST <base>/chat/completions`` is shown the query and the numbered
  texts (the prompt file ``prompts/listwise_rerank.txt``, `LISTWISE_PROMPT`, versioned by
  `PROMPT_VERSION`: its name and the SHA-256 of its text, as the judge's prompts are) and answers their
  numbers best first; a text's score is its place from the bottom (unnamed texts keep the first
  stage's order below).

One call per search within ``remote_query_timeout`` and no retry: a failure is `RerankerUnavailable`
(the stage keeps the first stage's order and says why). Every answer can be recorded and replayed
(`openxiv.indexer.encoders.replay`, kind ``rerank``), keyed by `RemoteReranker.replay_id` (model,
shape and prompt version, not the URL), so a run reranked by a GPU server replays with it gone.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from importlib import resources
from typing import Any

import httpx
import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.sources import ConfigError
from openxiv.indexer.encoders.remote_http import (
    RemoteEndpoint,
    RemoteRefused,
    RemoteUnavailable,
    apost_json_once,
    parse_remote,
    post_json_once,
)
from openxiv.indexer.encoders.replay import ReplayCache, replay_cache
from openxiv.indexer.encoders.rerankers import RerankerUnavailable

__all__ = ["API_SHAPES", "LISTWISE_PROMPT", "PROMPT_VERSION", "RemoteReranker", "remote_reranker"]

API_SHAPES = ("auto", "tei", "infinity", "cohere", "jina", "vllm", "chat")
LISTWISE_PROMPT = (
    resources.files("openxiv.indexer.encoders")
    .joinpath("prompts", "listwise_rerank.txt")
    .read_text(encoding="utf-8")
    .rstrip("\n")
)
"""The listwise prompt: ``{query}``, ``{passages}`` (``[i] text`` lines) and ``{n}`` are filled in."""
PROMPT_VERSION = "listwise-rerank@" + hashlib.sha256(LISTWISE_PROMPT.encode("utf-8")).hexdigest()[:12]
"""Part of the replay key: an edited prompt never replays an answer to the old one."""
_FIELD = re.compile(r"\{(query|passages|n)\}")
PASSAGE_CHARS = 700
"""Characters of each text shown to a chat model (title and the start of the abstract)."""
_DOCUMENTS = ("infinity", "cohere", "jina", "vllm")


class RemoteReranker:
    """`Reranker` over a model server (module docstring)."""

    def __init__(self, endpoint: RemoteEndpoint, api: str, settings: Settings) -> None:
        if api not in API_SHAPES:
            raise ConfigError(f"OPENXIV_RERANK_API={api!r}: expected one of {', '.join(API_SHAPES)}")
        self.endpoint, self.api, self.settings = endpoint, api, settings
        self.name = f"{api}:{endpoint.model}"
        version = f":{PROMPT_VERSION}" if api == "chat" else ""
        self.replay_id = f"rerank:{endpoint.model}{version}"
        """What a recorded answer is keyed by (not the URL, nor the shape ``auto`` finds)."""
        self.fingerprint = self.replay_id + ":unprobed"
        self.replay: ReplayCache | None = replay_cache(settings)
        self._client = httpx.Client(timeout=settings.remote_query_timeout)

    # --- requests and answers ---------------------------------------------------------------------
    def _request(self, shape: str, query: str, texts: Sequence[str]) -> tuple[str, dict[str, Any]]:
        if shape == "chat":
            passages = "\n".join(
                f"[{i + 1}] {' '.join(t.split())[:PASSAGE_CHARS]}" for i, t in enumerate(texts)
            )
            fields = {"query": query, "passages": passages, "n": str(len(texts))}
            prompt = _FIELD.sub(lambda m: fields[m.group(1)], LISTWISE_PROMPT)  # one pass: no re-filling
            return "chat/completions", {
                "model": self.endpoint.model,
                "messages": [{"role": "user", "content": prompt}],
                "temperature": 0,
                "seed": 0,
                "max_tokens": 8 * len(texts) + 16,
            }
        if shape == "tei":
            return "rerank", {"query": query, "texts": list(texts), "raw_scores": False}
        return "rerank", {
            "model": self.endpoint.model,
            "query": query,
            "documents": list(texts),
            "top_n": len(texts),
            "return_documents": False,
        }

    def _scores(self, shape: str, answer: Any, n: int) -> np.ndarray:
        where = f"{self.endpoint.spec} ({shape})"
        if shape == "chat":
            return _listwise_scores(answer, n, where)
        items = answer if shape == "tei" else answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(items, list):
            raise RemoteUnavailable(f"{where}: malformed rerank answer")
        key = "score" if shape == "tei" else "relevance_score"
        out = np.full(n, np.nan, dtype=np.float32)
        try:
            for item in items:
                out[int(item["index"])] = float(item[key])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise RemoteUnavailable(f"{where}: malformed rerank answer ({exc})") from exc
        if np.isnan(out).any():
            raise RemoteUnavailable(f"{where}: scores for {int((~np.isnan(out)).sum())} of {n} texts")
        return out

    def _recorded(self, shape: str, query: str, texts: Sequence[str]) -> tuple[str, dict[str, Any], Any]:
        """The request for ``texts`` in ``shape`` and its recorded answer (None when not recorded)."""
        path, payload = self._request(shape, query, texts)
        recorded = self.replay.get("rerank", self.replay_id, payload) if self.replay is not None else None
        return path, payload, recorded

    def _settle(self, shape: str, payload: dict[str, Any], answer: Any, n: int, fresh: bool) -> np.ndarray:
        """The scores of one answer; a fresh one recorded once it parsed (a failure never is)."""
        scores = self._scores(shape, answer, n)
        if fresh and self.replay is not None:
            self.replay.put("rerank", self.replay_id, self.endpoint.spec, payload, answer)
        return scores

    def _call(self, shape: str, query: str, texts: Sequence[str]) -> np.ndarray:
        path, payload, answer = self._recorded(shape, query, texts)
        fresh = answer is None
        if fresh:
            answer = post_json_once(
                self._client, self.endpoint, path, payload, self.settings.remote_query_timeout
            )
        return self._settle(shape, payload, answer, len(texts), fresh)

    async def _acall(self, shape: str, query: str, texts: Sequence[str]) -> np.ndarray:
        """`_call` on the event loop (a client per call: the process's loops come and go)."""
        path, payload, answer = self._recorded(shape, query, texts)
        fresh = answer is None
        if fresh:
            timeout = self.settings.remote_query_timeout
            async with httpx.AsyncClient(timeout=timeout) as client:
                answer = await apost_json_once(client, self.endpoint, path, payload, timeout)
        return self._settle(shape, payload, answer, len(texts), fresh)

    def _shapes(self) -> list[str]:
        """The shapes to try in order: the named one, or (``auto``) the documents form, then TEI's."""
        return [_shape(self.api)] if self.api != "auto" else ["cohere", "tei"]

    def _found(self, shape: str) -> None:
        if self.api == "auto":
            self.api = shape

    @staticmethod
    def _failed(exc: RemoteRefused | RemoteUnavailable, *, last: bool) -> None:
        """One shape's call failed (`score` and `ascore` alike): a refusal leaves the next shape to try
        (a 4xx for the documents form: text-embeddings-inference's), anything else, or a refusal of
        the last shape, is `RerankerUnavailable`."""
        if isinstance(exc, RemoteRefused) and not last:
            return
        raise RerankerUnavailable(str(exc)) from exc

    # --- Reranker -----------------------------------------------------------------------------------
    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One float32 score per text; `RerankerUnavailable` when the server cannot answer now."""
        if len(texts) == 0:
            return np.zeros(0, dtype=np.float32)
        shapes = self._shapes()
        for i, shape in enumerate(shapes):
            try:
                scores = self._call(shape, query, texts)
            except (RemoteRefused, RemoteUnavailable) as exc:
                self._failed(exc, last=i + 1 == len(shapes))
                continue
            self._found(shape)
            return scores
        raise AssertionError("unreachable")

    async def ascore(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """`score` awaited on the event loop, so the wait holds no compute slot (the service's
        event-loop search awaits it between the first stage and the page)."""
        if len(texts) == 0:
            return np.zeros(0, dtype=np.float32)
        shapes = self._shapes()
        for i, shape in enumerate(shapes):
            try:
                scores = await self._acall(shape, query, texts)
            except (RemoteRefused, RemoteUnavailable) as exc:
                self._failed(exc, last=i + 1 == len(shapes))
                continue
            self._found(shape)
            return scores
        raise AssertionError("unreachable")

    def probe(self) -> str:
        """Score a fixed pair now and fold the answer into `fingerprint` (a benchmark row then says
        which scorer ordered it); the fingerprint."""
        scores = self.score(
            "dense retrieval", ["Dense passage retrieval for open-domain QA.", "Galaxy rotation curves."]
        )
        digest = hashlib.sha256(np.round(scores, 2).tobytes()).hexdigest()[:12]
        self.fingerprint = f"{self.replay_id}:{digest}"
        return self.fingerprint


def _shape(api: str) -> str:
    return "cohere" if api in _DOCUMENTS else api


def _listwise_scores(answer: Any, n: int, where: str) -> np.ndarray:
    """Scores from a chat model's ordering: the k-th number named scores ``n - k``; numbers out of
    range or repeated are ignored; texts it did not name score below, in their given order."""
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise RemoteUnavailable(f"{where}: malformed chat answer ({exc})") from exc
    named: list[int] = []
    for token in re.findall(r"\d+", str(content or "")):
        i = int(token) - 1
        if 0 <= i < n and i not in named:
            named.append(i)
    if not named:
        raise RemoteUnavailable(f"{where}: the chat model named no passage ({str(content)[:80]!r})")
    order = named + [i for i in range(n) if i not in named]
    scores = np.empty(n, dtype=np.float32)
    scores[order] = np.arange(n, 0, -1, dtype=np.float32)
    return scores


def remote_reranker(
    value: str, api: str, settings: Settings, setting: str = "OPENXIV_RERANK"
) -> RemoteReranker:
    """The reranker a ``http://host:port[/v1]#model`` setting names (nothing is sent yet)."""
    return RemoteReranker(parse_remote(value, setting, settings.remote_api_key), api, settings)
