"""Judged-metric throughput: FINDER checklist judgements against a local endpoint answering in 50 ms.

A scripted OpenAI-compatible server (`openxiv.evaluator.judge.scripted`) runs in a child process on
loopback and answers every request after ``--delay`` seconds. Two runs:

1. ``openxiv eval finder``'s scorer on the 100 shared reports (419 judgements), live, then replayed
   from the cache it wrote (identical numbers checked);
2. the cross product of the 100 reports and all 419 checklist items (41,900 judgements, the
   issue's "100 reports × 419 items"), in batches of ``--batch`` reports, every call live.

Usage: ``.venv/bin/python scripts/bench_judge.py [--delay 0.05] [--concurrency 32] [--reports 100]
[--no-write]``; prints the numbers and rewrites the ``## Judge`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import load_average, write_section

from openxiv.evaluator.finder import CHECKLIST_PARAMS, read_checklist, read_reports, score_checklist
from openxiv.evaluator.judge import (
    JudgeCache,
    JudgeRequest,
    OpenAIJudge,
    ReplayJudge,
    messages,
    package_prompt,
)
from openxiv.evaluator.judge.scripted import ScriptedServer
from openxiv.evaluator.shared import SharedData

REPORTS = "reports/claude-3-7-sonnet-latest.jsonl"


def _rule(msgs: list[dict[str, str]]) -> str:
    return "Yes" if len(msgs[-1]["content"]) % 2 else "No"


def _serve(delay: float, port_q: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    with ScriptedServer(_rule, delay=delay) as srv:
        port_q.put((srv.base_url, 0, 0.0, 0))
        stop.wait()
        port_q.put((srv.base_url, srv.max_in_flight, time.process_time(), srv.calls))


def _client_cpu(base_url: str, n: int, concurrency: int) -> dict[str, float]:
    """CPU ms per request of httpx (one AsyncClient, pool of ``concurrency``) and aiohttp (one session)."""
    import aiohttp
    import httpx
    import orjson

    body = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 30000}]})
    url, headers = base_url + "/chat/completions", {"content-type": "application/json"}

    async def with_httpx() -> None:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        sem = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(limits=limits) as client:

            async def one() -> None:
                async with sem:
                    (await client.post(url, content=body, headers=headers)).raise_for_status()

            await asyncio.gather(*(one() for _ in range(n)))

    async def with_aiohttp() -> None:
        sem = asyncio.Semaphore(concurrency)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

            async def one() -> None:
                async with sem, session.post(url, data=body, headers=headers) as resp:
                    await resp.read()

            await asyncio.gather(*(one() for _ in range(n)))

    out = {}
    for name, fn in (("httpx", with_httpx), ("aiohttp", with_aiohttp)):
        c0 = time.process_time()
        asyncio.run(fn())
        out[name] = 1000 * (time.process_time() - c0) / n
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--reports", type=int, default=100, help="reports of the cross-product run")
    ap.add_argument("--batch", type=int, default=10, help="reports per judge call of the cross-product run")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    finder = SharedData.default().gold("finder")
    tasks, arts = read_checklist(finder / "checklist.jsonl"), read_reports(finder / REPORTS)
    prompt = package_prompt("finder_checklist")
    ctx = mp.get_context("spawn")
    port_q, stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_serve, args=(args.delay, port_q, stop), daemon=True)
    proc.start()
    base_url, _, _, _ = port_q.get(timeout=60)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp) / "cache.jsonl"
            judge = OpenAIJudge(
                base_url, "bench", JudgeCache(cache), concurrency=args.concurrency, backoff=0.1
            )
            t0 = time.perf_counter()
            live = score_checklist(tasks, arts, judge, prompt)
            t_live = time.perf_counter() - t0
            judge.cache.close()
            t0 = time.perf_counter()
            again = score_checklist(tasks, arts, ReplayJudge("bench", JudgeCache(cache)), prompt)
            t_replay = time.perf_counter() - t0
            same = (
                live.per_item == again.per_item
                and live.counts["micro_pass_rate"] == again.counts["micro_pass_rate"]
            )
        items = [(t.id, k, title, desc) for t in tasks for k, (title, desc) in enumerate(t.items, 1)]
        ids = [t.id for t in tasks][: args.reports]
        cross = OpenAIJudge(base_url, "bench-x", JudgeCache(None), concurrency=args.concurrency, backoff=0.1)
        n = unjudged = 0
        t0, c0 = time.perf_counter(), time.process_time()
        for b in range(0, len(ids), args.batch):
            reqs = [
                JudgeRequest(f"{rid}x{tid}.{k}", prompt.version,
                             messages(prompt, title=title, description=desc, article=arts[rid]), *CHECKLIST_PARAMS)
                for rid in ids[b : b + args.batch] for tid, k, title, desc in items
            ]  # fmt: skip
            answers = cross.answer(reqs)
            n += len(answers)
            unjudged += sum(a.text is None for a in answers)
        t_cross, c_cross = time.perf_counter() - t0, time.process_time() - c0
        clients = _client_cpu(base_url, 1000, args.concurrency)
    finally:
        stop.set()
        _, max_in_flight, server_cpu, served = port_q.get(timeout=30)
        proc.join(timeout=30)
    load = load_average()
    rate_live, rate_cross = 419 / t_live, n / t_cross
    bound = args.concurrency / args.delay
    print(
        f"live 419 judgements: {t_live:.2f} s ({rate_live:.0f}/s); replay {t_replay:.2f} s; identical: {same}"
    )
    print(f"cross product {n} judgements: {t_cross:.1f} s ({rate_cross:.0f}/s), {unjudged} not judged; "
          f"max in flight {max_in_flight} (bound {args.concurrency}); ideal {bound:.0f}/s; load {load}")  # fmt: skip
    print(
        f"CPU per judgement: client {1000 * c_cross / n:.2f} ms (cross run), server {1000 * server_cpu / served:.2f} ms per request served"
    )
    print(
        f"client CPU per request (1000 posts): httpx {clients['httpx']:.2f} ms, aiohttp {clients['aiohttp']:.2f} ms"
    )
    if args.no_write:
        return
    cmd = (f"`nice -n 10 .venv/bin/python scripts/bench_judge.py --delay {args.delay} --concurrency {args.concurrency} "
           f"--reports {args.reports}`")  # fmt: skip
    body = f"""Command: {cmd} (load average before the write: {load}). A scripted OpenAI-compatible server in a
child process on loopback answers every chat request after {args.delay * 1000:.0f} ms; the judge
(`openxiv.evaluator.judge.openai`, aiohttp, at most {args.concurrency} requests in flight) sends the
FINDER checklist prompt with the whole report (about 20 kB) per request. At {args.concurrency} in
flight and {args.delay * 1000:.0f} ms per answer the ceiling is {bound:.0f} judgements/s.

| run | judgements | seconds | judgements/s |
|---|---:|---:|---:|
| `openxiv eval finder` scorer, 100 shared reports, live (cache written) | 419 | {t_live:.2f} | {rate_live:.0f} |
| the same, replayed from the cache (no endpoint) | 419 | {t_replay:.2f} | {419 / t_replay:.0f} |
| {len(ids)} reports × all 419 checklist items, live | {n} | {t_cross:.1f} | {rate_cross:.0f} |

Replay gave identical per-task results and micro pass rate: {same}. Not judged: {unjudged}. Most
requests the server saw at once: {max_in_flight} (bound: {args.concurrency}). CPU per judgement of
the cross-product run: {1000 * c_cross / n:.2f} ms in the scoring process (building the request,
its cache key, HTTP), {1000 * server_cpu / served:.2f} ms per request in the scripted server (all {served} it answered); the machine was
shared (load above), so judgements/s on an idle machine are higher.

Why aiohttp: the CPU per request of 1,000 posts of a 30 kB body at {args.concurrency} in flight to the
same server was {clients["httpx"]:.2f} ms with one httpx `AsyncClient` (its connection pool scans
every connection for every queued request) and {clients["aiohttp"]:.2f} ms with one aiohttp session.
"""
    write_section("Judge", body, after="Evaluator")


if __name__ == "__main__":
    main()
