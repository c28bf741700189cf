"""A closed loop of clients against a live server: each sends its share of the queries one after
another (``POST /search``, top_k=10, with contents); latency, the backend's ``Server-Timing``,
errors, throughput and the server's CPU per request."""

from __future__ import annotations

import threading
import time
from typing import TypedDict

import httpx

from harness.server import LoopbackProcess, server_timing


class Phase(TypedDict):
    """What one phase of `phase` measured."""

    lat: list[float]
    """Client-clock milliseconds of each answered request."""
    timings: list[dict[str, float]]
    """Each answer's ``Server-Timing`` (the backend's stages, ms)."""
    errors: list[str]
    wall: float
    qps: float
    cpu_ms: float
    """The server's CPU per request (NaN without a server)."""
    loop_cpu_ms: float
    """Of it, the event-loop threads' (the HTTP layer)."""


def run_client(
    url: str, queries: list[str], lat: list[float], timings: list[dict[str, float]], errors: list[str]
) -> None:
    with httpx.Client(base_url=url, timeout=120) as client:
        for q in queries:
            t = time.perf_counter()
            try:
                r = client.post("/search", json={"query": q, "top_k": 10, "return_contents": True})
                ok = r.status_code == 200 and len(r.json()["result"]) == 10
            except httpx.HTTPError as exc:
                errors.append(repr(exc))
                continue
            lat.append((time.perf_counter() - t) * 1000)
            if not ok:
                errors.append(f"{r.status_code}: {r.text[:200]}")
            timings.append(server_timing(r.headers.get("server-timing", "")))


def phase(url: str, queries: list[str], clients: int, server: LoopbackProcess | None = None) -> Phase:
    cpu0 = server.cpu_s() if server is not None else 0.0
    loop0 = server.loop_cpu_s() if server is not None else 0.0
    lat: list[float] = []
    timings: list[dict[str, float]] = []
    errors: list[str] = []
    shares = [queries[i::clients] for i in range(clients)]
    threads = [threading.Thread(target=run_client, args=(url, s, lat, timings, errors)) for s in shares]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t
    cpu = server.cpu_s() - cpu0 if server is not None else float("nan")
    loop = server.loop_cpu_s() - loop0 if server is not None else float("nan")
    return {
        "lat": lat,
        "timings": timings,
        "errors": errors,
        "wall": wall,
        "qps": len(lat) / wall,
        "cpu_ms": cpu / max(len(lat), 1) * 1000,
        "loop_cpu_ms": loop / max(len(lat), 1) * 1000,
    }
