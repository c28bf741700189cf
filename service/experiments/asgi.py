"""The experiments middleware: tags, faults, replay, cutoffs and the ledger around every API call.

Both network fronts install it (``openxiv serve`` and ``openxiv mcp --transport http``) when any
control is on (`openxiv.service.experiments.controls.Controls.of`); otherwise it is not there at all,
so a plain server answers exactly as before. For one call, in order:

1. the tags: ``/runs/<run>/q/<question>`` is taken off the path (or the headers read); a bad tag is
   a 400 naming it;
2. a fault (``--faults``): its latency awaited on the event loop (no compute slot held), or its
   answer (429, 5xx, quota) sent instead of serving;
3. a replayed answer (``--replay``): the recorded status, body and `KEPT_HEADERS`, or a 409 naming
   the call;
4. otherwise the route runs with the call's `CallState` (its question's ceiling, ``--cutoffs``);
5. the ledger record is committed (``--ledger``), in a thread of its own limiter, before the last
   byte of the answer goes out: a client never holds an answer the ledger could lose.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

import anyio
import anyio.to_thread

from openxiv.corpus.ledger.records import LedgerRecord
from openxiv.corpus.ledger.store import body_sha256
from openxiv.service.experiments.context import CallState, in_call
from openxiv.service.experiments.controls import Controls
from openxiv.service.experiments.describe import describe, request_key
from openxiv.service.experiments.tags import BadTag, Tagged, split_tags
from openxiv.service.guards.asgi import ASGIApp, Message, Receive, Scope, Send, send_error

__all__ = ["KEPT_HEADERS", "UNRECORDED", "ExperimentsMiddleware", "kept_headers"]

log = logging.getLogger("openxiv.service")

KEPT_HEADERS = ("retry-after", "daily-limit", "www-authenticate", "location", "allow")
"""Response headers a client acts on, kept in the ledger and sent again by replay: when to retry (a
429's or 503's ``Retry-After``, injected or not), DeepXiv's ``Daily-Limit``, how to authenticate, where
a redirect goes, which methods a route allows; also every ``RateLimit-*`` and ``X-RateLimit-*``.
Not kept: ``content-type`` (a field of its own), ``content-length`` (recomputed), ``server-timing`` (the
recorded run's timings)."""
_KEPT_PREFIXES = ("ratelimit-", "x-ratelimit-")


def kept_headers(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """The `KEPT_HEADERS` among raw ASGI ``headers``, names in lower case (a repeated one joined with
    ``, ``)."""
    out: dict[str, str] = {}
    for raw_name, raw_value in headers:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name in KEPT_HEADERS or name.startswith(_KEPT_PREFIXES):
            out[name] = f"{out[name]}, {value}" if name in out else value
    return out


UNRECORDED = ("/healthz", "/readyz", "/docs", "/redoc", "/openapi.json", "/ui", "/favicon.ico", "/static")
"""Paths served as usual but neither recorded, faulted nor replayed (probes, docs, the web page)."""


def _recorded(path: str) -> bool:
    return not any(path == p or path.startswith(p + "/") for p in UNRECORDED)


class ExperimentsMiddleware:
    def __init__(
        self, app: ASGIApp, *, controls: Controls, snapshot: Callable[[], str | None], front: str = "http"
    ) -> None:
        self.app = app
        self.controls = controls
        self.snapshot = snapshot
        self.front = front
        self._writes = anyio.CapacityLimiter(1)  # ledger commits: a thread of their own, no compute slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        try:
            tagged = split_tags(scope["path"], headers)
        except BadTag as exc:
            await send_error(send, 400, str(exc))
            return
        if tagged.prefix:
            scope = dict(scope, path=tagged.path, raw_path=tagged.path.encode())
        if not _recorded(tagged.path):
            await self.app(scope, receive, send)
            return
        await Call(self, scope, tagged).run(receive, send)


class Call:
    """One recorded call through the middleware."""

    def __init__(self, mw: ExperimentsMiddleware, scope: Scope, tagged: Tagged):
        self.mw = mw
        self.scope = scope
        self.tagged = tagged
        self.started = time.perf_counter()
        self.time = datetime.now(UTC).isoformat(timespec="microseconds")
        self.body = bytearray()
        self.status = 0
        self.content_type = ""
        self.headers: dict[str, str] = {}
        self.response = bytearray()
        self.fault: str | None = None
        self.state = CallState(
            run=tagged.run, question=tagged.question, ceiling=mw.controls.ceiling(tagged.question)
        )

    async def run(self, receive: Receive, send: Send) -> None:
        controls = self.mw.controls
        fault = controls.faults.decide(self.tagged.run, self.tagged.path) if controls.faults else None
        if fault is not None:
            self.fault = fault.label
            if fault.delay:
                await anyio.sleep(fault.delay)
            if fault.status is not None:
                await self._drain(receive)
                await self._answer(send, fault.status, fault.content_type, fault.body, fault.headers)
                return
        if controls.replay is not None:
            await self._drain(receive)
            await self._replay(send)
            return
        with in_call(self.state):
            await self.mw.app(self.scope, self._teeing(receive), self._capturing(send))

    async def _drain(self, receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return
            self.body += message.get("body", b"")
            if not message.get("more_body"):
                return

    def _key(self) -> str:
        return request_key(
            self.scope["method"], self.tagged.path, self.scope.get("query_string", b""), bytes(self.body)
        )

    async def _replay(self, send: Send) -> None:
        replay = self.mw.controls.replay
        assert replay is not None
        recorded = replay.answer(self.tagged.run, self.tagged.question, self._key())
        if recorded is None:
            who = f"run {self.tagged.run!r} question {self.tagged.question!r}"
            query = self.scope.get("query_string", b"").decode("latin-1")
            what = f"{self.scope['method']} {self.tagged.path}{'?' + query if query else ''}"
            shown = bytes(self.body[:300]).decode("utf-8", "replace")
            detail = f"not in the replayed ledger: {what} ({who}){' body ' + shown if shown else ''}"
            body = json.dumps({"status": "error", "detail": detail}).encode()
            await self._answer(send, 409, "application/json", body, {})
            return
        self.fault = recorded.fault
        await self._answer(
            send, recorded.status, recorded.content_type, recorded.body, recorded.headers, replayed=True
        )

    async def _answer(
        self,
        send: Send,
        status: int,
        content_type: str,
        body: bytes,
        extra: dict[str, str],
        replayed: bool = False,
    ) -> None:
        """Answer without the route: a fault's or a replayed answer, ``extra`` its other headers."""
        self.status, self.content_type, self.response = status, content_type, bytearray(body)
        headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
        headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
        self.headers = kept_headers(headers)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await self._commit(replayed=replayed)
        await send({"type": "http.response.body", "body": body})

    def _teeing(self, receive: Receive) -> Receive:
        async def tee() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                self.body += message.get("body", b"")
            return message

        return tee

    def _capturing(self, send: Send) -> Send:
        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.status = int(message["status"])
                for k, v in message.get("headers", ()):
                    if k.lower() == b"content-type":
                        self.content_type = v.decode("latin-1")
                self.headers = kept_headers(message.get("headers", ()))
            elif message["type"] == "http.response.body":
                self.response += message.get("body", b"")
                if not message.get("more_body"):
                    await self._commit()
            await send(message)

        return capture

    async def _commit(self, replayed: bool = False) -> None:
        writer = self.mw.controls.ledger
        if writer is None:
            return
        record = self._record(replayed)
        try:
            await anyio.to_thread.run_sync(
                writer.append, record, bytes(self.response), limiter=self.mw._writes
            )
        except Exception:  # a full disk must not take the answer with it; the log says what was lost
            log.exception("ledger: the call %s %s was not recorded", self.scope["method"], self.tagged.path)

    def _record(self, replayed: bool) -> LedgerRecord:
        query = self.scope.get("query_string", b"")
        body, response = bytes(self.body), bytes(self.response)
        what = describe(self.scope["method"], self.tagged.path, query, body, response, self.content_type)
        ceiling = self.state.ceiling
        served = None if (replayed or (self.fault and self.status >= 400)) else self.mw.snapshot()
        return LedgerRecord(
            time=self.time,
            run=self.tagged.run,
            question=self.tagged.question,
            front=self.mw.front,
            method=self.scope["method"],
            route=self.tagged.path,
            kind=what.kind,
            params=what.params,
            status=self.status,
            latency_ms=round((time.perf_counter() - self.started) * 1000, 3),
            snapshot=served,
            request_key=request_key(self.scope["method"], self.tagged.path, query, body),
            body_sha256=body_sha256(response),
            body_bytes=len(response),
            content_type=self.content_type,
            returned=what.returned,
            read=what.read,
            cutoff=ceiling.isoformat() if ceiling else None,
            leaks=len(self.state.leaked),
            leaked=tuple(self.state.leaked),
            fault=self.fault,
            replayed=replayed,
            headers=self.headers,
        )
