"""uvicorn's h11 protocol with a time limit on reading a request's headers.

uvicorn times out only an idle keep-alive connection *after* a response (``timeout_keep_alive``). A
connection that never sends anything after connecting, or that trickles its headers a byte at a time,
is held forever: 600 such connections hold 600 sockets and file descriptors indefinitely. This
subclass gives every request ``Settings.header_timeout`` seconds, from the connection (or from its
first byte after a keep-alive response) to the end of its headers; then it answers 408 and closes.
The body has its own limit in the ASGI layer (`openxiv.service.guard`).
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from openxiv.corpus.config import Settings

__all__ = ["TimedH11Protocol"]


@functools.cache
def _header_timeout() -> float:
    # Read once per process; worker processes inherit the environment `openxiv serve` set.
    return float(Settings.from_env().header_timeout)


def _timeout_response(seconds: float) -> bytes:
    body = json.dumps(
        {"status": "error", "detail": f"request headers not received within {seconds:g} s"}
    ).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class TimedH11Protocol(H11Protocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = _header_timeout()
        self._header_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        if self._header_timer is None and self.header_timeout > 0:
            self._header_timer = self.loop.call_later(self.header_timeout, self._on_header_timeout)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:
            self._arm()
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # headers complete: the request is running
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _on_header_timeout(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.logger.debug("closing a connection that sent no complete request headers in time")
            self.transport.write(_timeout_response(self.header_timeout))
            self.transport.close()
