"""A scripted model server on loopback: OpenAI-compatible ``/v1/embeddings``, the two ``/rerank``
shapes and ``/v1/chat/completions``, with faults on demand (the idea of tests/service/http/chat_server.py).

``ModelServer(embed)`` answers embeddings with ``embed(texts)`` (a real encoder's rows in the end-to-end
tests) and rerank requests with the inner products of those rows. ``faults`` is a queue: each request
takes the next one first (``"timeout"`` answers after `slow_s`, ``"429"`` with ``Retry-After``,
``"500"``, ``"malformed"`` (not JSON), ``"wrong_dim"``, ``"wrong_model"``, ``"ok"``); ``always`` is a
fault every request gets once the queue is empty. ``requests`` keeps ``(time, path, body)`` of each.
``stop`` ends it; the port then refuses connections, as a crashed server's does. ``hold`` keeps every
request waiting (``waiting`` counts them) until ``release``: a server slower than any timeout, whose
wait a test can watch without timing anything.
"""

from __future__ import annotations

import asyncio
import hashlib
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

Embed = Callable[[list[str]], np.ndarray]


def hashed_embed(texts: list[str], dim: int = 16) -> np.ndarray:
    """A stand-in vector per text for fault tests (a seeded random unit vector of its hash)."""
    rows = []
    for t in texts:
        rng = np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16))
        v = rng.standard_normal(dim).astype(np.float32)
        rows.append(v / np.linalg.norm(v))
    return np.asarray(rows, dtype=np.float32).reshape(len(texts), dim)


class ModelServer:
    def __init__(self, embed: Embed, model: str = "scripted-model", retry_after: str = "0") -> None:
        self.embed, self.model, self.retry_after = embed, model, retry_after
        self.faults: list[str] = []
        self.always: str | None = None
        self.slow_s = 3.0
        self.chat_answer = "2, 1"
        self.requests: list[tuple[float, str, dict[str, Any]]] = []
        self._open = threading.Event()
        self._open.set()
        self.waiting = 0
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        app = Starlette(
            routes=[
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
                Route("/v1/rerank", self._rerank_documents, methods=["POST"]),
                Route("/tei/rerank", self._rerank_texts, methods=["POST"]),
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
            ]
        )
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> ModelServer:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("scripted model server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    @property
    def spec(self) -> str:
        return f"{self.base_url}#{self.model}"

    def hold(self) -> None:
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def calls(self, path: str) -> list[dict[str, Any]]:
        return [body for _, p, body in self.requests if p == path]

    async def _fault(self, request: Request) -> tuple[dict[str, Any], str, Response | None]:
        body = orjson.loads(await request.body())
        self.requests.append((time.monotonic(), request.url.path, body))
        if not self._open.is_set():
            self.waiting += 1
            while not self._open.is_set():
                await asyncio.sleep(0.02)
            self.waiting -= 1
        fault = self.faults.pop(0) if self.faults else (self.always or "ok")
        if fault == "timeout":
            await asyncio.sleep(self.slow_s)
        if fault == "429":
            return body, fault, Response(b'{"error":"slow down"}', 429, {"Retry-After": self.retry_after})
        if fault == "500":
            return body, fault, Response(b'{"error":"scripted failure"}', 500)
        if fault == "400":
            return body, fault, Response(b'{"error":"unknown field"}', 422)
        if fault == "malformed":
            return body, fault, Response(b'{"data": [', 200, media_type="application/json")
        return body, fault, None

    async def _embeddings(self, request: Request) -> Response:
        body, fault, failed = await self._fault(request)
        if failed is not None:
            return failed
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vecs = self.embed(texts)
        if body.get("dimensions"):
            vecs = vecs[:, : int(body["dimensions"])]
        if fault == "wrong_dim":
            vecs = vecs[:, :-1]
        model = "another-model" if fault == "wrong_model" else body.get("model", self.model)
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]
        return _json({"object": "list", "model": model, "data": data})

    def _similarities(self, query: str, texts: list[str]) -> np.ndarray:
        vecs = self.embed([query, *texts])
        return vecs[1:] @ vecs[0]

    async def _rerank_documents(self, request: Request) -> Response:
        body, _, failed = await self._fault(request)
        if failed is not None:
            return failed
        if "documents" not in body:
            return Response(b'{"error":"documents: field required"}', 422)
        scores = self._similarities(body["query"], body["documents"])
        results = [{"index": i, "relevance_score": float(s)} for i, s in enumerate(scores)]
        results.sort(key=lambda r: -r["relevance_score"])
        return _json({"model": body.get("model"), "results": results})

    async def _rerank_texts(self, request: Request) -> Response:
        body, _, failed = await self._fault(request)
        if failed is not None:
            return failed
        if "texts" not in body:
            return Response(b'{"error":"texts: missing field"}', 422)
        scores = self._similarities(body["query"], body["texts"])
        return _json(
            sorted(({"index": i, "score": float(s)} for i, s in enumerate(scores)), key=lambda r: -r["score"])
        )

    async def _chat(self, request: Request) -> Response:
        _, _, failed = await self._fault(request)
        if failed is not None:
            return failed
        message = {"role": "assistant", "content": self.chat_answer}
        return _json({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


def _json(obj: Any) -> Response:
    return Response(orjson.dumps(obj), media_type="application/json")
