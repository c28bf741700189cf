"""Serving speed with the run ledger on against off (issue 40: within 10%).

Two fresh ``openxiv serve`` processes on the same index at the same time, one plain and one with
``--ledger`` (a temporary folder), both warmed up with the same queries. Then:

1. paired, one client: each dev query is sent to both servers (``POST /search``, top_k=10, with
   evidence; the ledger server through a tagged base URL ``/runs/bench/q/<n>``), the order swapped
   every query, so both see the same machine load; per query the latency ratio ledger/plain, and
   each server's CPU per request (psutil: the server's own CPU, robust on a shared machine);
2. concurrent: ``--clients`` clients on one server, then the same queries on the other, four
   alternating blocks; throughput of each.

Each server sees each query once, so neither finds the other's caches warm. The load average is
printed beside the timings.

    .venv/bin/python scripts/bench_ledger.py data/index                 # prints, rewrites `## Run ledger overhead`
    .venv/bin/python scripts/bench_ledger.py data/index --requests 100 --no-write
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import SharedData, load_queries
from harness.load import phase
from harness.report import load_average, write_section
from harness.server import Server
from harness.timing import percentile


def timed_post(client: httpx.Client, path: str, query: str) -> float:
    t = time.perf_counter()
    r = client.post(path, json={"query": query, "top_k": 10, "return_contents": True})
    elapsed = (time.perf_counter() - t) * 1000
    if r.status_code != 200:
        raise RuntimeError(f"{path}: {r.status_code} {r.text[:200]}")
    return elapsed


def paired(plain: Server, ledger: Server, queries: list[str]) -> dict[str, float]:
    lat: dict[str, list[float]] = {"plain": [], "ledger": []}
    ratios = []
    cpu0 = {"plain": plain.cpu_s(), "ledger": ledger.cpu_s()}
    with (
        httpx.Client(base_url=plain.url, timeout=120) as a,
        httpx.Client(base_url=ledger.url, timeout=120) as b,
    ):
        for i, q in enumerate(queries):
            order = [("plain", a, "/search"), ("ledger", b, f"/runs/bench/q/{i}/search")]
            for name, client, path in order if i % 2 == 0 else order[::-1]:
                lat[name].append(timed_post(client, path, q))
            ratios.append(lat["ledger"][-1] / lat["plain"][-1])
    n = len(queries)
    return {
        "plain_p50": percentile(lat["plain"], 50),
        "ledger_p50": percentile(lat["ledger"], 50),
        "plain_mean": statistics.fmean(lat["plain"]),
        "ledger_mean": statistics.fmean(lat["ledger"]),
        "ratio_median": statistics.median(ratios),
        "plain_cpu_ms": (plain.cpu_s() - cpu0["plain"]) / n * 1000,
        "ledger_cpu_ms": (ledger.cpu_s() - cpu0["ledger"]) / n * 1000,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("index", type=Path, help="index directory (holds CURRENT), e.g. data/index")
    ap.add_argument("--requests", type=int, default=300, help="paired queries (default 300)")
    ap.add_argument("--clients", type=int, default=4, help="clients of the concurrent phase (default 4)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = ap.parse_args()

    queries = load_queries(SharedData.default(), args.warmup + 2 * args.requests)
    warm, one, many = (
        queries[: args.warmup],
        queries[args.warmup : args.warmup + args.requests],
        queries[args.warmup + args.requests :],
    )
    load_before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        plain = Server(args.index)
        ledger = Server(args.index, extra=("--ledger", str(Path(tmp) / "ledger")))
        try:
            for base in (plain.url, ledger.url + "/runs/warm"):
                phase(base, warm, 1)
            p = paired(plain, ledger, one)
            blocks = [many[i::4] for i in range(4)]
            qps: dict[str, list[float]] = {"plain": [], "ledger": []}
            for i, block in enumerate(blocks):
                for name, server, base in [
                    ("plain", plain, plain.url),
                    ("ledger", ledger, ledger.url + "/runs/bench"),
                ][:: 1 if i % 2 == 0 else -1]:
                    qps[name].append(phase(base, block, args.clients, server)["qps"])
        finally:
            plain.stop()
            ledger.stop()
        from openxiv.corpus.ledger.store import LedgerReader

        recorded = sum(1 for r in LedgerReader(Path(tmp) / "ledger").records() if r.run == "bench")
    load_after = load_average()
    q_plain, q_ledger = statistics.fmean(qps["plain"]), statistics.fmean(qps["ledger"])
    lines = [
        f"`python scripts/bench_ledger.py {args.index}` ({args.requests} paired queries, then "
        f"{len(many)} queries at {args.clients} clients in 4 alternating blocks), both servers up at once on one index; "
        f"load average before {load_before}, after {load_after} (2 cores, shared).",
        "",
        "| | ledger off | ledger on | on / off |",
        "| --- | ---: | ---: | ---: |",
        f"| one client, p50 ms | {p['plain_p50']:.1f} | {p['ledger_p50']:.1f} | {p['ledger_p50'] / p['plain_p50']:.3f} |",
        f"| one client, mean ms | {p['plain_mean']:.1f} | {p['ledger_mean']:.1f} | {p['ledger_mean'] / p['plain_mean']:.3f} |",
        f"| one client, median of per-query ratios | | | {p['ratio_median']:.3f} |",
        f"| server CPU per request, ms | {p['plain_cpu_ms']:.1f} | {p['ledger_cpu_ms']:.1f} | {p['ledger_cpu_ms'] / p['plain_cpu_ms']:.3f} |",
        f"| {args.clients} clients, requests/s | {q_plain:.1f} | {q_ledger:.1f} | {q_ledger / q_plain:.3f} |",
        "",
        f"The ledger recorded {recorded} of the {args.requests + len(many)} measured calls (each with its body; "
        "commit before the answer's last byte, `synchronous=NORMAL`). Target: on / off at most 1.10.",
    ]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section("Run ledger overhead", body)


if __name__ == "__main__":
    main()
