"""``openxiv mcp`` on stdio: every line read gets an answer, the SDK's transport with a screen in front.

The SDK's stdio transport hands a line it cannot validate to the session as an exception, which logs
it and answers nothing: an agent that sent an unparsable line, a request whose ``params`` is not an
object, or a string with a lone UTF-16 surrogate (``"\\ud800"``: valid JSON, not text; it would fail
later when the answer is encoded) waits forever. Here each line is screened first:

- not JSON: JSON-RPC ``-32700`` (parse error, ``id: null``);
- a lone surrogate anywhere: ``-32602`` naming where (``params.arguments.query``);
- not a JSON-RPC message (``params`` a list, no ``method``, a batch): ``-32602`` or ``-32600`` with the
  request's ``id`` when it has one.

A notification (no ``id``) that fails is dropped, as JSON-RPC says; a blank line is ignored. Lines
that pass go to the SDK unchanged. Answers and the server's own messages share one writer, a line at
a time, so they never interleave.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

from openxiv.service.guards.body import lone_surrogate_at

__all__ = ["run_stdio", "screen_line"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
_DROP: dict[str, Any] = {}


def _answer(message: Any, code: int, text: str) -> dict[str, Any]:
    """The error response to ``message``, or `_DROP` for a notification (nothing may answer it)."""
    if isinstance(message, dict) and "method" in message and "id" not in message:
        return _DROP
    msg_id = message.get("id") if isinstance(message, dict) else None
    if not isinstance(msg_id, str | int) or isinstance(msg_id, bool):
        msg_id = None
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}}


def screen_line(line: str) -> dict[str, Any] | None:
    """``None`` for a line the SDK can take, else the error response to send (`_DROP`: none)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        return _answer(None, PARSE_ERROR, f"Parse error: the line is not JSON ({exc})")
    where = lone_surrogate_at(message)
    if where is not None:
        return _answer(
            message,
            INVALID_PARAMS,
            f"{where}: contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which is not text",
        )
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as exc:
        if (
            isinstance(message, dict)
            and "method" in message
            and not isinstance(message.get("params", {}), dict)
        ):
            got = type(message["params"]).__name__
            return _answer(message, INVALID_PARAMS, f"params: must be an object, got {got}")
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        return _answer(message, INVALID_REQUEST, f"Invalid Request: {where}: {first['msg']}")
    return None


class _LineWriter:
    """stdout for the SDK's writer and for the screen's answers: each ``write`` is a whole line."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        data = text.encode("utf-8", "backslashreplace")
        async with self._lock:
            await anyio.to_thread.run_sync(self._write, data)

    def _write(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    async def flush(self) -> None:
        return None


class _ScreenedLines:
    """The lines of ``stdin`` the SDK can take; the others are answered on ``out`` here."""

    def __init__(self, stdin: BinaryIO, out: _LineWriter) -> None:
        self._lines = anyio.wrap_file(io.TextIOWrapper(stdin, encoding="utf-8", errors="replace"))
        self._out = out

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            if not line.strip():
                continue
            answer = screen_line(line)
            if answer is None:
                yield line
            elif answer is not _DROP:
                await self._out.write(json.dumps(answer) + "\n")


def run_stdio(server: MCPServer) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must never reach the protocol stream
    out = _LineWriter(stdout)

    async def main() -> None:
        lowlevel = server._lowlevel_server
        screened: Any = _ScreenedLines(stdin, out)
        async with stdio_server(stdin=screened, stdout=out) as (read, write):  # type: ignore[arg-type]
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(main)
