"""Security hygiene (issue 8 item 8) on live servers: tokens out of logs, admin routes off unless
configured and guarded by their own token and by Host/Origin checks, no absolute paths in responses,
read timeouts for slow headers and bodies, reloads logged."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_index import BuiltIndex, LiveServer, copy_index

SEARCH_TOKEN = "search-Secret-1234"
ADMIN_TOKEN = "admin-Secret-5678"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


# ---------------------------------------------------------------------------- admin routes
def test_admin_routes_are_off_without_an_admin_token(client: httpx.Client) -> None:
    r = client.post("/v1/admin/reload")
    assert r.status_code == 403
    detail = r.json()["detail"]
    assert "OPENXIV_ADMIN_TOKEN" in detail and "kill -HUP" in detail


@pytest.fixture(scope="module")
def admin_server(test_index: BuiltIndex, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    private = copy_index(test_index, tmp_path_factory.mktemp("admin") / "copy")
    live = LiveServer(private.root, token=SEARCH_TOKEN, admin_token=ADMIN_TOKEN, access_log=True)
    try:
        yield live
    finally:
        live.stop()


def _reload(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url + "/v1/admin/reload", headers=headers, timeout=120)


def test_admin_routes_need_the_admin_token_not_the_search_token(admin_server: LiveServer) -> None:
    url = admin_server.url
    assert _reload(url).status_code == 401
    assert _reload(url, Authorization=f"Bearer {SEARCH_TOKEN}").status_code == 401
    assert httpx.post(url + f"/v1/admin/reload?token={ADMIN_TOKEN}").status_code == 401  # never in URLs
    ok = _reload(url, Authorization=f"Bearer {ADMIN_TOKEN}")
    assert ok.status_code == 200 and ok.json()["status"] == "unchanged"
    # and the admin token is not a search token
    search = httpx.post(
        url + "/search", json={"query": "x"}, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
    )
    assert search.status_code == 401


@pytest.mark.parametrize(
    ("headers", "needle"),
    [
        ({"Origin": "https://evil.example"}, "cross-site"),
        ({"Origin": "null"}, "cross-site"),
        ({"Host": "evil.example"}, "DNS rebinding"),
        ({"Host": "rebind.evil.example:8000", "Origin": "http://rebind.evil.example:8000"}, "DNS rebinding"),
    ],
)
def test_cross_site_and_rebinding_requests_are_refused(
    admin_server: LiveServer, headers: dict[str, str], needle: str
) -> None:
    r = _reload(admin_server.url, Authorization=f"Bearer {ADMIN_TOKEN}", **headers)
    assert r.status_code == 403 and needle in r.json()["detail"], r.text


def test_a_same_origin_request_is_accepted(admin_server: LiveServer) -> None:
    origin = f"http://127.0.0.1:{admin_server.port}"
    r = _reload(admin_server.url, Authorization=f"Bearer {ADMIN_TOKEN}", Origin=origin)
    assert r.status_code == 200, r.text


def test_reload_failure_names_no_absolute_path_and_reloads_are_logged(admin_server: LiveServer) -> None:
    root = Path(admin_server.url and _index_root(admin_server))
    current = (root / "CURRENT").read_text()
    broken = root / "snapshots" / "broken-snapshot"
    broken.mkdir()
    (root / "CURRENT").write_text("snapshots/broken-snapshot\n" if "/" in current else "broken-snapshot\n")
    try:
        r = _reload(admin_server.url, Authorization=f"Bearer {ADMIN_TOKEN}")
        assert r.status_code == 503, r.text
        detail = r.json()["detail"]
        assert str(root.parent) not in detail and "still serving snapshot" in detail
    finally:
        (root / "CURRENT").write_text(current)
    forced = httpx.post(
        admin_server.url + "/v1/admin/reload?force=true",
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        timeout=120,
    )
    assert forced.status_code == 200 and forced.json()["status"] == "reloaded"
    log = admin_server.log.read_text()
    assert f"serving snapshot {forced.json()['snapshot']}" in log  # at startup and after the reload
    assert "reload by HTTP: reloaded" in log and "reload failed" in log


def _index_root(live: LiveServer) -> Path:
    cmd = live.proc.args
    assert isinstance(cmd, list)
    return Path(cmd[cmd.index("--index") + 1])


# ---------------------------------------------------------------------------- paths and logs
def test_no_absolute_paths_in_v1_index(client: httpx.Client, server: LiveServer) -> None:
    body = client.get("/v1/index").json()
    assert body["path"] == f"snapshots/{body['snapshot']}"
    root = _index_root(server).resolve()
    for text in _strings(body):
        assert not text.startswith("/") and str(root.parent) not in text, text


def test_tokens_never_reach_the_log(admin_server: LiveServer) -> None:
    url = admin_server.url
    assert (
        httpx.get(
            url + "/arxiv/", params={"type": "head", "arxiv_id": "1502.03167", "token": SEARCH_TOKEN}
        ).status_code
        == 200
    )
    assert (
        httpx.get(
            url + "/arxiv/", params={"type": "head", "arxiv_id": "1502.03167", "token": "wrong-Guess-42"}
        ).status_code
        == 401
    )
    time.sleep(0.5)
    log = admin_server.log.read_text()
    assert "/arxiv/?type=head" in log  # the access log is on
    assert "token=***" in log
    for secret in (SEARCH_TOKEN, ADMIN_TOKEN, "wrong-Guess-42"):
        assert secret not in log


# ---------------------------------------------------------------------------- read timeouts
@pytest.fixture(scope="module", params=["httptools", "h11"])
def impatient_server(test_index: BuiltIndex, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """A server with short read timeouts, on each HTTP parser `openxiv serve` offers."""
    live = LiveServer(
        test_index.root,
        extra_env={
            "OPENXIV_HEADER_TIMEOUT": "1.5",
            "OPENXIV_BODY_TIMEOUT": "1.5",
            "OPENXIV_HTTP_PARSER": request.param,
        },
    )
    try:
        yield live
    finally:
        live.stop()


def _answer_and_close_time(sock: socket.socket, started: float) -> tuple[bytes, float]:
    sock.settimeout(15)
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data, time.monotonic() - started


def _connect(live: LiveServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", live.port), timeout=15)


def test_a_connection_that_sends_nothing_is_closed(impatient_server: LiveServer) -> None:
    with _connect(impatient_server) as sock:
        data, took = _answer_and_close_time(sock, time.monotonic())
    assert data.startswith(b"HTTP/1.1 408") and 1.0 < took < 5.0


def _trickle_headers(sock: socket.socket, started: float) -> None:
    """A request line and one more header line every 0.6 s: never complete within 1.5 s; then the
    server's answer must be the header timeout's 408."""
    sock.sendall(b"GET /healthz HTTP/1.1\r\n")
    for _ in range(3):
        time.sleep(0.6)
        try:
            sock.sendall(b"X-Slow: 1\r\n")
        except OSError:
            break
    data, took = _answer_and_close_time(sock, started)
    assert data.startswith(b"HTTP/1.1 408"), data[:200]
    assert b"headers not received" in data and took < 5.0


def test_slow_headers_are_timed_out(impatient_server: LiveServer) -> None:
    with _connect(impatient_server) as sock:
        _trickle_headers(sock, time.monotonic())


def test_slow_bodies_are_timed_out(impatient_server: LiveServer) -> None:
    started = time.monotonic()
    with _connect(impatient_server) as sock:
        sock.sendall(
            b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n" + b'{"query": "'
        )
        data, took = _answer_and_close_time(sock, started)
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), data[:300]
    assert "OPENXIV_BODY_TIMEOUT" in json.loads(body)["detail"] and 1.0 < took < 5.0


def test_normal_keep_alive_clients_are_unaffected(impatient_server: LiveServer) -> None:
    with httpx.Client(base_url=impatient_server.url, timeout=60, limits=httpx.Limits(max_connections=1)) as c:
        for _ in range(3):
            r = c.post("/search", json={"query": "attention is all you need", "top_k": 2})
            assert r.status_code == 200
            time.sleep(0.5)


def test_slow_headers_after_a_keep_alive_response_are_timed_out(impatient_server: LiveServer) -> None:
    """The deadline starts again with the first byte of the next request on the same connection."""
    with _connect(impatient_server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while b"\r\n\r\n" not in first or not first.rstrip().endswith(b"}"):
            first += sock.recv(4096)
        assert first.startswith(b"HTTP/1.1 200"), first[:200]
        # each byte cancels uvicorn's keep-alive timer (5 s); the header deadline must not be
        _trickle_headers(sock, time.monotonic())


def test_a_request_slower_than_the_header_deadline_is_answered(impatient_server: LiveServer) -> None:
    """Once the headers are in, the header deadline is off: headers sent 1 s after connecting and the
    body 1 s later (2 s in all, past the 1.5 s header deadline, within the body's own) get the answer."""
    body = json.dumps({"query": "attention is all you need", "top_k": 1}).encode()
    with _connect(impatient_server) as sock:
        time.sleep(1.0)
        sock.sendall(
            b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n"
        )
        time.sleep(1.0)
        sock.sendall(body)
        data, _ = _answer_and_close_time(sock, time.monotonic())
    assert data.startswith(b"HTTP/1.1 200"), data[:300]


def test_oversized_headers_are_431_and_closed(impatient_server: LiveServer) -> None:
    """httptools has no header size limit of its own (a client could grow one header without end) and
    h11's answered 400: both parsers answer 431 past `HEADER_LIMIT`, also when the headers trickle in."""
    HEADER_LIMIT = 16 * 1024  # openxiv.service.guards.headers.HEADER_LIMIT
    with _connect(impatient_server) as sock:
        sock.sendall(
            b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * (HEADER_LIMIT + 10) + b"\r\n\r\n"
        )
        data, _ = _answer_and_close_time(sock, time.monotonic())
    assert data.startswith(b"HTTP/1.1 431"), data[:200]
    with _connect(impatient_server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(HEADER_LIMIT // 4000 + 1):
            try:
                sock.sendall(b"X-Part: " + b"b" * 4000 + b"\r\n")
            except OSError:
                break
        data, _ = _answer_and_close_time(sock, time.monotonic())
    assert data.startswith(b"HTTP/1.1 431"), data[:200]
    with httpx.Client(base_url=impatient_server.url, timeout=30) as c:  # big but within the limit: served
        assert c.get("/healthz", headers={"X-Fine": "c" * (HEADER_LIMIT // 2)}).status_code == 200
