"""`openxiv mcp`'s transports under the probes of issue 21 (item 9), on the real command and index.

- stdio: an unparsable line, a request whose ``params`` is a list and one holding a lone surrogate
  each get a JSON-RPC error answer (they got none), and the server goes on answering;
- streamable HTTP: headers and bodies that trickle are closed with 408 as `openxiv serve` does (they
  were held open), and a flood of ``initialize`` calls evicts the least recently used sessions
  instead of locking new agents out at the session cap.
"""

from __future__ import annotations

import json
import select
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import mcp_types
import pytest
from live_index import BIN, BuiltIndex
from mcp import Client
from test_mcp import McpHttpServer, _env, _http_transport, run_client

from openxiv.service.mcp.server import TOOLS


# ------------------------------------------------------------------------------ stdio
def _read_answers(proc: subprocess.Popen[bytes], want: set[Any], timeout: float) -> dict[Any, dict[str, Any]]:
    """JSON-RPC answers by id, until every id in ``want`` has one (or the time is up)."""
    assert proc.stdout is not None
    answers: dict[Any, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    buffer = b""
    while not want <= set(answers) and time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if not ready:
            continue
        chunk = proc.stdout.read1(65536)  # type: ignore[attr-defined]
        if not chunk:
            break
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = json.loads(line)
            answers[message.get("id")] = message
    return answers


def test_stdio_answers_every_line(test_index: BuiltIndex) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
    surrogate = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_papers","arguments":{"query":"\\ud800"}}}'
    lines = [
        json.dumps(init),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "this is not json {",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ["search_papers"]}),
        surrogate,
        json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1]}),  # no answer
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    ]
    proc = subprocess.Popen(
        [str(BIN / "openxiv"), "mcp", "--index", str(test_index.root)],
        env=_env(test_index),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(("\n".join(lines) + "\n").encode())
        proc.stdin.flush()
        answers = _read_answers(proc, {1, 2, 3, 4, None}, timeout=180)
    finally:
        proc.kill()
        proc.wait()
    assert "result" in answers[1]
    assert answers[None]["error"]["code"] == -32700
    assert (
        answers[2]["error"]["code"] == -32602
        and "params: must be an object" in answers[2]["error"]["message"]
    )
    assert answers[3]["error"]["code"] == -32602
    assert "params.arguments.query: contains a lone UTF-16 surrogate" in answers[3]["error"]["message"]
    assert {t["name"] for t in answers[4]["result"]["tools"]} == set(TOOLS)
    assert len(answers) == 5


# ------------------------------------------------------------------------------ streamable HTTP
@pytest.fixture(scope="module")
def impatient_mcp(test_index: BuiltIndex) -> Iterator[McpHttpServer]:
    server = McpHttpServer(
        test_index,
        None,
        OPENXIV_HEADER_TIMEOUT="1.5",
        OPENXIV_BODY_TIMEOUT="1.5",
        OPENXIV_MCP_MAX_SESSIONS="4",
    )
    try:
        yield server
    finally:
        server.stop()


def _closed_answer(sock: socket.socket) -> tuple[bytes, float]:
    started = time.monotonic()
    sock.settimeout(15)
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data, time.monotonic() - started


def test_http_trickling_headers_and_bodies_are_closed_with_408(impatient_mcp: McpHttpServer) -> None:
    with socket.create_connection(("127.0.0.1", impatient_mcp.port), timeout=15) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        data, took = _closed_answer(sock)
    assert data.startswith(b"HTTP/1.1 408") and took < 6, data[:200]
    with socket.create_connection(("127.0.0.1", impatient_mcp.port), timeout=15) as sock:
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"jsonrpc"'
        )
        data, took = _closed_answer(sock)
    assert data.startswith(b"HTTP/1.1 408") and b"OPENXIV_BODY_TIMEOUT" in data and took < 6, data[:300]


LEGACY = "2025-06-18"  # a handshake-era version: sessions (the newest protocol has none)


def _initialize(url: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "flood", "version": "0"},
        },
    }
    r = httpx.post(url, json=body, headers={"Accept": "application/json, text/event-stream"}, timeout=60)
    assert r.status_code == 200, r.text
    return r.headers["mcp-session-id"]


def _ping(url: str, session: str) -> int:
    r = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
        headers={
            "Accept": "application/json, text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": LEGACY,
        },
        timeout=60,
    )
    return r.status_code


def test_http_session_flood_evicts_the_oldest_instead_of_locking_agents_out(
    impatient_mcp: McpHttpServer,
) -> None:
    """With OPENXIV_MCP_MAX_SESSIONS=4, 26 `initialize` calls (20 of them 4 at a time) all succeed; the first sessions are
    gone (404, on which clients start a new session), the newest still answer, a real agent works."""
    url = impatient_mcp.url
    sessions = [_initialize(url) for _ in range(6)]
    with ThreadPoolExecutor(4) as pool:  # concurrent ones too: none may evict a session still opening
        sessions += list(pool.map(lambda _: _initialize(url), range(20)))
    assert len(set(sessions)) == 26
    assert _ping(url, sessions[0]) == 404
    assert _ping(url, sessions[-1]) == 200

    async def agent(mcp: Client) -> None:
        assert {t.name for t in (await mcp.list_tools()).tools} == set(TOOLS)

    run_client(_http_transport(url, None), agent)
