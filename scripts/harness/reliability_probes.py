"""Probes of ``bench_reliability.py`` against a live server: load during rebuilds, hostile requests,
slow connections. Each returns a dict of figures; every loop is bounded in count and in time, and
only loopback addresses are used. (Process-killing probes: ``harness/reliability_kill.py``.)"""

from __future__ import annotations

import json
import select
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.client import HTTPResponse
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from harness.server import OPENXIV, Server, env

QUERIES = [
    "retrieval augmented generation",
    "diffusion models for video",
    "gravitational wave detection",
    "graph neural networks",
    "large language model reasoning",
    "exoplanet atmospheres",
    "vision transformer segmentation",
    "reinforcement learning from human feedback",
]


def _req(method: str, target: str, body: bytes = b"", ctype: str = "application/json") -> bytes:
    head = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
    if body:
        head += f"Content-Type: {ctype}\r\n"
    return head.encode() + b"\r\n" + body


def _read(sock: socket.socket) -> tuple[int, bytes]:
    resp = HTTPResponse(sock)
    resp.begin()
    return resp.status, resp.read()


def exchange(port: int, raw: bytes, timeout: float) -> dict[str, Any]:
    """Send ``raw`` on a fresh connection, then ``GET /healthz`` on the same one: was it kept alive?"""
    out: dict[str, Any] = {"status": None, "ms": None, "kept": False, "detail": ""}
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        t = time.perf_counter()
        try:
            sock.sendall(raw)
            out["status"], body = _read(sock)
            out["detail"] = body[:160].decode("utf-8", "replace")
        except OSError as exc:  # includes http.client.RemoteDisconnected: the server dropped us
            out["detail"] = f"connection error: {exc!r}"[:160]
            return out
        finally:
            out["ms"] = round((time.perf_counter() - t) * 1000, 1)
        try:
            sock.sendall(_req("GET", "/healthz"))
            out["kept"] = _read(sock)[0] == 200
        except OSError:
            out["kept"] = False
    return out


# --- (b) 8 clients while the index is rebuilt and the server reloaded ------------------------------


def _client(url: str, stop: threading.Event, deadline: float, stats: dict[str, Any], k: int) -> None:
    client = httpx.Client(base_url=url, timeout=60)
    i = k
    while not stop.is_set() and time.monotonic() < deadline:
        body = {"query": QUERIES[i % len(QUERIES)], "top_k": 10, "return_contents": True}
        i += 1
        try:
            r = client.post("/search", json=body)
        except httpx.TransportError as exc:
            with stats["lock"]:
                stats["resets"] += 1
                stats["errors"].append(repr(exc)[:200])
            client.close()
            client = httpx.Client(base_url=url, timeout=60)
            continue
        with stats["lock"]:
            stats["statuses"][r.status_code] += 1
            if r.status_code != 200:
                stats["errors"].append(f"{r.status_code}: {r.text[:200]}")
    client.close()


def load_during_rebuilds(
    server: Server, db: Path, cache: Path, seconds: float, clients: int = 8, period: float = 5.0
) -> dict[str, Any]:
    """``clients`` threads search while ``index build`` runs back to back and a reload goes every ``period`` s."""
    stats: dict[str, Any] = {"lock": threading.Lock(), "statuses": Counter(), "resets": 0, "errors": []}
    stop = threading.Event()
    deadline = time.monotonic() + seconds
    threads = [
        threading.Thread(target=_client, args=(server.url, stop, deadline, stats, k)) for k in range(clients)
    ]
    for th in threads:
        th.start()
    build_cmd = [OPENXIV, "index", "build", "--db", str(db), "--index", str(server.root), "--embed", "papers"]
    build_cmd += ["--cache", str(cache), "--no-progress"]
    builds: list[int] = []
    reloads: Counter[str] = Counter()
    builder: subprocess.Popen[bytes] | None = None
    try:
        while time.monotonic() < deadline:
            if builder is None or builder.poll() is not None:
                if builder is not None:
                    builds.append(builder.returncode)
                builder = subprocess.Popen(
                    build_cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            time.sleep(min(period, max(0.0, deadline - time.monotonic())))
            try:
                auth = {"Authorization": f"Bearer {server.admin_token}"} if server.admin_token else {}
                r = httpx.post(server.url + "/v1/admin/reload", headers=auth, timeout=120)
                reloads[f"{r.status_code} {r.json().get('status', '')}".strip()] += 1
            except (httpx.HTTPError, ValueError) as exc:
                reloads[type(exc).__name__] += 1
    finally:
        stop.set()
        for th in threads:
            th.join(timeout=120)
        if builder is not None:
            try:
                builds.append(builder.wait(timeout=600))
            except subprocess.TimeoutExpired:
                builder.kill()
                builds.append(builder.wait())
    statuses: Counter[int] = stats["statuses"]
    return {
        "seconds": seconds,
        "clients": clients,
        "requests": sum(statuses.values()) + stats["resets"],
        "statuses": dict(sorted(statuses.items())),
        "5xx": sum(n for s, n in statuses.items() if s >= 500),
        "resets": stats["resets"],
        "errors": sorted(set(stats["errors"]))[:10],
        "builds": builds,
        "reloads": dict(reloads),
    }


# --- (c) hostile requests ----------------------------------------------------------------------------


def _deep(depth: int) -> bytes:
    return b'{"query": "x", "extra": ' + b"[" * depth + b"]" * depth + b"}"


def hostile_requests(authors: list[str], categories: list[str]) -> list[tuple[str, bytes]]:
    """(name, raw HTTP request) pairs: what a careless or hostile client might send."""
    j = json.dumps  # ASCII output: a lone surrogate goes out as the JSON escape \\ud800
    qs = [f"{q} {i}" for i in range(7) for q in QUERIES][:50]
    long_queries = [" ".join(f"w{i}x{k}" for k in range(300))[:2000] for i in range(50)]
    return [
        (
            "lone surrogate, POST /search",
            _req("POST", "/search", j({"query": "attention \ud800 is all"}).encode()),
        ),
        ("lone surrogate, POST /v1/search", _req("POST", "/v1/search", j({"query": "a \udfff b"}).encode())),
        (
            "surrogate as raw UTF-8 bytes (invalid), GET /arxiv/",
            _req("GET", "/arxiv/?type=retrieve&query=a%ED%A0%80b"),
        ),
        ("invalid UTF-8 in a JSON body", _req("POST", "/search", b'{"query": "caf\xff\xfe"}')),
        ("NUL in the query", _req("POST", "/search", j({"query": "attention\u0000all"}).encode())),
        (
            "before 0001, POST /search",
            _req(
                "POST",
                "/search",
                j({"query": "x", "date_search_type": "before", "date_str": "0001"}).encode(),
            ),
        ),
        (
            "before 0001, GET /arxiv/",
            _req("GET", "/arxiv/?type=retrieve&query=x&date_search_type=before&date_str=0001"),
        ),
        (
            "after 9999-12-31",
            _req(
                "POST",
                "/search",
                j({"query": "x", "date_search_type": "after", "date_str": "9999-12-31"}).encode(),
            ),
        ),
        (
            "between 0001 and 9999",
            _req(
                "POST",
                "/search",
                j({"query": "x", "date_search_type": "between", "date_str": ["0001", "9999"]}).encode(),
            ),
        ),
        ("date_from 0000", _req("GET", "/v1/search?q=x&date_from=0000")),
        ("top_k 1e308", _req("POST", "/search", b'{"query": "x", "top_k": 1e308}')),
        ("top_k NaN", _req("POST", "/search", b'{"query": "x", "top_k": NaN}')),
        ("offset 2**70", _req("POST", "/search", b'{"query": "x", "offset": 1180591620717411303424}')),
        ("JSON nested 50,000 deep (100 kB)", _req("POST", "/search", _deep(50_000))),
        ("JSON nested 400,000 deep (800 kB)", _req("POST", "/search", _deep(400_000))),
        ("5 MB body", _req("POST", "/search", j({"query": "x" * 5_000_000}).encode())),
        ("100,000-char query", _req("POST", "/search", j({"query": "attention " * 10_000}).encode())),
        ("2,000-char query (the limit)", _req("POST", "/search", j({"query": long_queries[0]}).encode())),
        (
            "50 queries x 2,000 chars",
            _req("POST", "/search", j({"query": long_queries, "top_k": 100}).encode()),
        ),
        (
            "50 queries x 50 authors",
            _req("POST", "/search", j({"query": qs, "authors": authors[:50], "top_k": 100}).encode()),
        ),
        (
            "50 queries x 40 categories x dates",
            _req(
                "POST",
                "/search",
                j(
                    {
                        "query": qs,
                        "categories": categories[:40],
                        "date_search_type": "between",
                        "date_str": ["2000", "2030"],
                        "top_k": 100,
                    }
                ).encode(),
            ),
        ),
        (
            "50 queries x 50 authors x 40 categories, offset 10000",
            _req(
                "POST",
                "/search",
                j(
                    {
                        "query": qs,
                        "authors": authors[:50],
                        "categories": categories[:40],
                        "top_k": 100,
                        "offset": 10_000,
                        "return_contents": True,
                    }
                ).encode(),
            ),
        ),
        (
            "GET /arxiv/ with 50 x 50 authors",
            _req(
                "GET",
                "/arxiv/?type=retrieve&"
                + "&".join(f"query=q{i}" for i in range(50))
                + "".join(f"&authors={quote(a)}" for a in authors[:50]),
            ),
        ),
        ("URL of 60 kB", _req("GET", "/v1/search?q=" + "a" * 60_000)),
        ("unknown endpoint", _req("GET", "/admin")),
        ("path traversal", _req("GET", "/v1/papers/..%2F..%2Fetc%2Fpasswd")),
        ("unknown method", _req("PATCH", "/search", b"{}")),
        ("text/plain body", _req("POST", "/search", b'{"query": "x"}', "text/plain")),
        ("form body", _req("POST", "/search", b"query=x", "application/x-www-form-urlencoded")),
    ]


def probe_hostile(
    port: int, authors: list[str], categories: list[str], timeout: float
) -> list[dict[str, Any]]:
    rows = []
    for name, raw in hostile_requests(authors, categories):
        row = exchange(port, raw, timeout)
        row["name"], row["bytes"] = name, len(raw)
        rows.append(row)
        print(
            f"  {name}: {row['status']} in {row['ms']} ms, kept={row['kept']} {row['detail'][:80]}",
            flush=True,
        )
    return rows


# --- (d) slow connections -----------------------------------------------------------------------


def _normal_search(url: str) -> int:
    return httpx.post(
        url + "/search", json={"query": "graph neural networks", "top_k": 5}, timeout=30
    ).status_code


def probe_slow(
    url: str,
    port: int,
    n: int,
    hold: float,
    interval: float = 2.0,
    path: str = "/search",
    normal: Callable[[str], int] = _normal_search,
) -> dict[str, Any]:
    """``n`` connections to ``path``, half sending headers and half a body one small piece every
    ``interval`` s; meanwhile ``normal(url)`` once a second (its status is counted)."""
    socks: list[socket.socket] = []
    closed_at: list[float | None] = []
    t0 = time.monotonic()
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        start = b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if i % 2:
            s.sendall(start)
        else:
            s.sendall(start + b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
        s.setblocking(False)
        socks.append(s)
        closed_at.append(None)
    counts: Counter[str] = Counter()
    lat: list[float] = []
    stop = threading.Event()

    def normal_client() -> None:
        while not stop.is_set():
            t = time.perf_counter()
            try:
                counts[str(normal(url))] += 1
                lat.append((time.perf_counter() - t) * 1000)
            except httpx.HTTPError as exc:
                counts[type(exc).__name__] += 1
            stop.wait(1.0)

    th = threading.Thread(target=normal_client)
    th.start()
    tick = 0
    while time.monotonic() - t0 < hold:
        time.sleep(interval)
        tick += 1
        for i, s in enumerate(socks):
            if closed_at[i] is not None:
                continue
            try:
                readable, _, _ = select.select([s], [], [], 0)
                if readable and not s.recv(4096):
                    raise ConnectionResetError
                s.send(b"X-Slow-%d: a\r\n" % tick if i % 2 else b" ")
            except OSError:
                closed_at[i] = time.monotonic() - t0
    stop.set()
    th.join(timeout=60)
    for s in socks:
        s.close()
    closed = [c for c in closed_at if c is not None]
    lat.sort()
    return {
        "connections": n,
        "hold_s": hold,
        "held_to_the_end": sum(c is None for c in closed_at),
        "closed_by_server": len(closed),
        "first_close_s": round(min(closed), 1) if closed else None,
        "normal_requests": dict(counts),
        "normal_p50_ms": round(lat[len(lat) // 2], 1) if lat else None,
        "normal_max_ms": round(lat[-1], 1) if lat else None,
    }
