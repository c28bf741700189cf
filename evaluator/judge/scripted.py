"""A scripted OpenAI-compatible chat server on loopback: tests, benchmarks and offline demos.

``ScriptedServer(rule, delay=0.05)`` serves ``POST /v1/chat/completions`` on ``127.0.0.1`` (a free
port) from a thread, answering each request with ``rule(messages)`` (a table lookup, a hash...)
after ``delay`` seconds. ``faults`` injects failures: ``{substring: [fault, ...]}``, where a request
whose last message contains ``substring`` gets the listed faults on its first calls, in order, then
its answer. Faults: ``timeout`` (answers after ``hang`` seconds), ``429``/``500``/``503`` (status),
``malformed`` (a body that is not JSON), ``nochoices`` (JSON without ``choices``), ``reasoning``
(empty content, the answer as the last line of ``reasoning_content``), ``empty`` (empty content and
no reasoning). ``calls`` counts requests, ``max_in_flight`` the most answered at once::

    with ScriptedServer(lambda msgs: "Yes") as srv:
        judge = OpenAIJudge(srv.base_url, "scripted", JudgeCache(None))
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from typing import Any

import orjson
import uvicorn

__all__ = ["ScriptedServer"]

Rule = Callable[[list[dict[str, str]]], str]


class ScriptedServer:
    def __init__(self, rule: Rule, *, delay: float = 0.0, faults: dict[str, list[str]] | None = None,
                 hang: float = 5.0) -> None:  # fmt: skip
        self.rule = rule
        self.delay = delay
        self.hang = hang
        self.faults = {k: list(v) for k, v in (faults or {}).items()}
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.fault_log: list[str] = []
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    def _fault(self, text: str) -> str | None:
        with self._lock:
            for key, queue in self.faults.items():
                if key in text and queue:
                    fault = queue.pop(0)
                    self.fault_log.append(fault)
                    return fault
        return None

    async def _reply(self, body: bytes) -> tuple[int, bytes]:
        try:
            req = orjson.loads(body)
            msgs = req["messages"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return 400, b'{"error": {"message": "bad request"}}'
        fault = self._fault(str(msgs[-1].get("content", "")) if msgs else "")
        await asyncio.sleep(self.hang if fault == "timeout" else self.delay)
        if fault in ("429", "500", "503"):
            return int(fault), b'{"error": {"message": "scripted failure"}}'
        if fault == "malformed":
            return 200, b'{"choices": [{"message": {"content": "Yes"'
        if fault == "nochoices":
            return 200, b'{"object": "chat.completion"}'
        answer = self.rule(msgs)
        message: dict[str, Any] = {"role": "assistant", "content": answer}
        if fault == "reasoning":
            message = {"role": "assistant", "content": "", "reasoning_content": f"Let me check.\n{answer}"}
        elif fault == "empty":
            message = {"role": "assistant", "content": ""}
        out = {
            "object": "chat.completion",
            "model": req.get("model"),
            "choices": [{"index": 0, "message": message}],
        }
        return 200, orjson.dumps(out)

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        with self._lock:
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if scope["path"] == "/v1/chat/completions" and scope["method"] == "POST":
                status, payload = await self._reply(body)
            else:
                status, payload = 404, b'{"error": {"message": "not found"}}'
        finally:
            with self._lock:
                self.in_flight -= 1
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})  # fmt: skip
        await send({"type": "http.response.body", "body": payload})

    def start(self) -> ScriptedServer:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(self._app, interface="asgi3", log_level="warning", loop="asyncio", timeout_keep_alive=30,
                                backlog=2048)  # fmt: skip
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the scripted judge server did not start")
            threading.Event().wait(0.01)
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
            self._server = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
