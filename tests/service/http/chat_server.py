"""A scripted OpenAI-compatible chat server on loopback that also streams: the agent search's answer
LLM in tests (the idea of `openxiv.evaluator.judge.scripted.ScriptedServer`, plus ``"stream": true``).

``ChatServer(rule)`` serves ``POST /v1/chat/completions`` from a thread on a free port, answering
with ``rule(messages)``; a streamed answer is sent as server-sent events, one chunk per word, with
``finish_reason`` ``length`` when the text has more words than ``max_tokens`` (it is then cut there)
and ``stop`` otherwise. ``status`` makes every request fail with that HTTP status. ``requests`` keeps
each request body received.

``hold()`` makes every request wait until ``release()``, and ``delay`` (seconds) makes each answer
that late (a slow LLM): ``waiting`` counts the requests held right now, ``disconnected`` those whose
client went away meanwhile.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

Rule = Callable[[list[dict[str, str]]], str]


class ChatServer:
    def __init__(self, rule: Rule, *, status: int = 200, delay: float = 0.0) -> None:
        self.rule = rule
        self.delay = delay
        self.status = status
        self.requests: list[dict[str, Any]] = []
        self._open = threading.Event()
        self._open.set()
        self.waiting = 0
        self.disconnected = 0
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        self._server = uvicorn.Server(uvicorn.Config(app, port=self.port, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    async def _chat(self, request: Request) -> Response:
        body = orjson.loads(await request.body())
        self.requests.append(body)
        if not await self._held(request):
            return Response(status_code=499)
        if self.status != 200:
            return Response(b'{"error": "scripted failure"}', status_code=self.status)
        words = self.rule(body["messages"]).split(" ")
        limit = int(body.get("max_tokens") or len(words))
        reason = "length" if len(words) > limit else "stop"
        words = words[:limit]
        if not body.get("stream"):
            message = {"role": "assistant", "content": " ".join(words)}
            return Response(
                orjson.dumps({"choices": [{"index": 0, "message": message, "finish_reason": reason}]}),
                media_type="application/json",
            )

        async def chunks() -> AsyncIterator[bytes]:
            for i, w in enumerate(words):
                piece = w if i == 0 else " " + w
                yield (
                    b"data: "
                    + orjson.dumps({"choices": [{"index": 0, "delta": {"content": piece}}]})
                    + b"\n\n"
                )
            end = {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}
            yield b"data: " + orjson.dumps(end) + b"\n\ndata: [DONE]\n\n"

        return StreamingResponse(chunks(), media_type="text/event-stream")

    def hold(self) -> None:
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    async def _held(self, request: Request) -> bool:
        """Wait while held and for ``delay``; ``False`` when the client disconnected meanwhile."""
        self.waiting += 1
        until = time.monotonic() + self.delay
        try:
            while not self._open.is_set() or time.monotonic() < until:
                if await request.is_disconnected():
                    self.disconnected += 1
                    return False
                await asyncio.sleep(0.05)
            return True
        finally:
            self.waiting -= 1

    def __enter__(self) -> ChatServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("chat server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
