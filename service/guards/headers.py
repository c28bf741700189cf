"""uvicorn's HTTP protocols with a time limit on reading a request's headers.

uvicorn times out only an idle keep-alive connection *after* a response (``timeout_keep_alive``). A
connection that never sends anything after connecting, or that trickles its headers a byte at a time,
is held forever: 600 such connections hold 600 sockets and file descriptors indefinitely. These
subclasses give every request ``Settings.header_timeout`` seconds, from the connection (or from its
first byte after a keep-alive response) to the end of its headers; then it answers 408 and closes.
The body has its own limit in the ASGI layer (`openxiv.service.guards.body`).

Two parsers carry the same guard: `TimedHttpToolsProtocol` (httptools, llhttp's C parser: the
default, less CPU per request) and `TimedH11Protocol` (h11, pure Python). ``Settings.http_parser``
chooses (`protocol_class`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from openxiv.corpus.settings.model import Settings

__all__ = ["TimedH11Protocol", "TimedHttpToolsProtocol", "protocol_class"]


@functools.cache
def _header_timeout() -> float:
    # Read once per process; worker processes inherit the environment `openxiv serve` set.
    return float(Settings.from_env().header_timeout)


HEADER_LIMIT = 16 * 1024
"""Bytes a request line and its headers may take (as h11's default and Node's); past it 431 and close.
httptools (llhttp) has no limit of its own: a client could otherwise grow one header without end."""
_HEADERS_END = re.compile(rb"\r?\n\r?\n")


def _error_response(status: str, detail: str) -> bytes:
    body = json.dumps({"status": "error", "detail": detail}).encode()
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


def _timeout_response(seconds: float) -> bytes:
    return _error_response("408 Request Timeout", f"request headers not received within {seconds:g} s")


class _HeaderDeadline(asyncio.Protocol):
    """The timer both protocols share: armed while a connection owes the headers of a request.

    It starts with the connection and ends with it; a subclass says when a connection owes headers
    (`_awaiting_headers`) and calls `_arm` / `_disarm` from its parser's events. On expiry, a
    connection still owing headers gets the 408 and is closed."""

    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    logger: Any
    header_timeout: float
    _header_timer: asyncio.TimerHandle | None

    def _init_deadline(self) -> None:
        self.header_timeout = _header_timeout()
        self._header_timer = None
        self._header_bytes = 0
        self._header_tail = b""

    def _awaiting_headers(self) -> bool:
        raise NotImplementedError

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._awaiting_headers():
            self._arm()
            if self._headers_too_large(data):
                return
        super().data_received(data)

    def _headers_too_large(self, data: bytes) -> bool:
        """Count the bytes of the headers being received; past `HEADER_LIMIT` answer 431 and close."""
        window = self._header_tail + data
        end = _HEADERS_END.search(window)
        size = self._header_bytes - len(self._header_tail) + (end.end() if end else len(window))
        if end is None:
            self._header_bytes += len(data)
            self._header_tail = window[-3:]
        if size <= HEADER_LIMIT:
            return False
        if not self.transport.is_closing():
            self.logger.debug("closing a connection whose request headers exceed %d bytes", HEADER_LIMIT)
            detail = f"request headers larger than {HEADER_LIMIT} bytes"
            self.transport.write(_error_response("431 Request Header Fields Too Large", detail))
            self.transport.close()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._header_timer is None and self.header_timeout > 0:
            self._header_timer = self.loop.call_later(self.header_timeout, self._on_header_timeout)

    def _disarm(self) -> None:
        self._header_bytes, self._header_tail = 0, b""
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _on_header_timeout(self) -> None:
        self._header_timer = None
        if self._awaiting_headers() and not self.transport.is_closing():
            self.logger.debug("closing a connection that sent no complete request headers in time")
            self.transport.write(_timeout_response(self.header_timeout))
            self.transport.close()


class TimedH11Protocol(_HeaderDeadline, H11Protocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._init_deadline()

    def _awaiting_headers(self) -> bool:
        return self.conn.their_state is h11.IDLE

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._awaiting_headers():  # headers complete: the request is running
            self._disarm()


class TimedHttpToolsProtocol(_HeaderDeadline, HttpToolsProtocol):
    """httptools parses every byte it is given at once, so a request's headers end at the parser's
    ``on_headers_complete``. Between requests (none yet, or the last response complete) the
    connection owes headers: data arriving then arms the timer, as in the h11 protocol's idle state.
    Bytes of a pipelined request that arrive while a response is still being computed do not: once
    that response is sent, uvicorn's keep-alive timer runs until more bytes come, and those arm it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._init_deadline()
        self._body_pending = False

    def _awaiting_headers(self) -> bool:
        # a response sent before its request's body was read (an early 413) leaves the rest of that
        # body to arrive: those bytes are body, not the headers of a next request
        return self.cycle is None or (self.cycle.response_complete and not self._body_pending)

    def on_headers_complete(self) -> None:
        self._disarm()
        self._body_pending = True
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._body_pending = False
        super().on_message_complete()


def protocol_class(parser: str) -> type[H11Protocol | HttpToolsProtocol]:
    """The protocol class for ``Settings.http_parser`` (``httptools`` or ``h11``)."""
    if parser == "h11":
        return TimedH11Protocol
    if parser == "httptools":
        return TimedHttpToolsProtocol
    raise ValueError(f"http_parser={parser!r}: expected httptools or h11")
