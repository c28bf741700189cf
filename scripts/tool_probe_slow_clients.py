"""Slow-client probe: how long a running openxiv server lets slow connections hold a socket.

Opens N connections (default 600) of three kinds in equal parts: ``idle`` (connect, send nothing),
``headers`` (send a request line, then one header byte every ``--drip`` seconds, never finishing)
and ``body`` (complete headers announcing a body, then one body byte every ``--drip`` seconds).
Prints, every 5 s up to ``--seconds``, how many of each are still open, and the time of one normal
``GET /healthz`` made while they are held. Without read timeouts every connection stays open for
the whole run; with them (``OPENXIV_HEADER_TIMEOUT``, ``OPENXIV_BODY_TIMEOUT``) they close after the
limit.

    python scripts/tool_probe_slow_clients.py http://127.0.0.1:8000 --connections 600 --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import time
from urllib.parse import urlsplit

KINDS = ("idle", "headers", "body")


async def slow_client(host: str, port: int, kind: str, drip: float, open_: dict[str, int]) -> None:
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        return
    open_[kind] += 1
    try:
        if kind == "headers":
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        elif kind == "body":
            writer.write(
                b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100000\r\n\r\n"
            )
        while True:
            if kind != "idle":
                writer.write(b"a")
                await writer.drain()
            try:
                if await asyncio.wait_for(reader.read(4096), drip) == b"":
                    return  # closed by the server
            except TimeoutError:
                continue
    except OSError:
        return
    finally:
        open_[kind] -= 1
        writer.close()


async def healthz_ms(host: str, port: int) -> float:
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    await writer.drain()
    await reader.read()
    writer.close()
    return (time.perf_counter() - started) * 1000


async def main(url: str, connections: int, seconds: float, drip: float) -> None:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    open_ = dict.fromkeys(KINDS, 0)
    tasks = [
        asyncio.create_task(slow_client(host, port, KINDS[i % 3], drip, open_)) for i in range(connections)
    ]
    started = time.monotonic()
    print(f"{connections} slow connections to {url} (drip every {drip:g} s)")
    print("  t (s)  idle  headers  body  healthz (ms)")
    while (elapsed := time.monotonic() - started) < seconds:
        await asyncio.sleep(5)
        elapsed = time.monotonic() - started
        ms = await healthz_ms(host, port)
        print(f"  {elapsed:5.0f}  {open_['idle']:4d}  {open_['headers']:7d}  {open_['body']:4d}  {ms:12.1f}")
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("url")
    parser.add_argument("--connections", type=int, default=600)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--drip", type=float, default=1.0)
    args = parser.parse_args()
    asyncio.run(main(args.url, args.connections, args.seconds, args.drip))
