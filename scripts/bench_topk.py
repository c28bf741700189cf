"""Exact top-k BM25 (`openxiv.indexer.engine.maxscore`) against scoring every posting, in one run.

Two steps, each printing markdown rows (with the load average) for BENCHMARKS.md «Scale»:

- ``kernel``: the paper side's pass (top ``--depth`` rows and the matching rows) and the feedback
  query (its 20 expansion terms, only where the query matches) over one BM25 matrix, on the 103 dev
  topic queries, exhaustive and pruned in turn per query, CPU milliseconds per query (``time.process_time``)
  and a check that every list is the same rows and score bits. ``--copies R`` stacks ``R`` copies of
  the matrix side by side (rows ``d + i·n``, the same idf): a corpus ``R`` times as long with the
  same term densities, to see the kernels at millions of rows without building millions of papers.
- ``cold``: a snapshot's files dropped from the page cache (``posix_fadvise(DONTNEED)``: use a copy
  no other process maps), then ``openxiv serve`` started with each ``OPENXIV_SERVE_WARM`` in turn:
  seconds until ``/readyz`` says ready, then the dev topic queries one at a time over HTTP in the
  default mode: p50 / p95 of the requests sent in the first minute after ready.
- ``serve``: a snapshot served with ``OPENXIV_BM25_PRUNING`` off and on, alternately: in process,
  the default mode's p50 / p95 one query at a time (``--rounds`` passes, warm), then ``openxiv serve
  --workers 2`` under 8 closed-loop clients (`harness.load.phase`): requests/s, p50 / p95 and the
  server's CPU milliseconds per request.

    nice -n 5 .venv/bin/python scripts/bench_topk.py kernel --bm25 <snapshot>/bm25_papers --copies 1
    nice -n 5 .venv/bin/python scripts/bench_topk.py serve --index data/index
    nice -n 5 .venv/bin/python scripts/bench_topk.py cold --index <a copy of data/index>
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import topic_queries
from harness.timing import pcts

from openxiv.indexer.engine.doc_terms import DocTerms
from openxiv.indexer.engine.maxscore import mark_matches, top_k_pruned
from openxiv.indexer.engine.prf import FeedbackConfig, expand, expanded_scores
from openxiv.indexer.engine.sparse import SparseIndex
from openxiv.indexer.engine.topk import top_k_rows


def _stacked(ix: SparseIndex, copies: int) -> SparseIndex:
    """The index with ``copies`` copies of its rows side by side (same vocabulary and weights)."""
    n = ix.n_docs
    ptr = np.asarray(ix.indptr, np.int64)
    df = np.diff(ptr)
    data, ind = np.asarray(ix.data), np.asarray(ix.indices)
    if copies == 1:
        return ix
    new_ptr = np.zeros_like(ptr)
    np.cumsum(df * copies, out=new_ptr[1:])
    col = np.repeat(np.arange(df.size), df)
    within = np.arange(data.size) - ptr[col]
    out_d = np.empty(data.size * copies, np.float32)
    out_i = np.empty(data.size * copies, ind.dtype)
    for c in range(copies):
        dst = new_ptr[col] + c * df[col] + within
        out_d[dst] = data
        out_i[dst] = ind + c * n
    stacked = copy.copy(ix)
    stacked.data, stacked.indptr, stacked.indices, stacked.n_docs = out_d, new_ptr, out_i, n * copies
    return stacked


def _same(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
    return bool(np.array_equal(a[0], b[0]) and a[1].tobytes() == b[1].tobytes())


def _tightness(ix: SparseIndex, queries: list[str], window: int = 8192, block: int = 128) -> str:
    """How loose a term's bound is: its mean posting, the mean of its largest per window of rows and
    per block of postings, each over its largest, averaged over the dev queries' terms by postings."""
    sums, total = np.zeros(3), 0
    for t in {int(t) for q in queries for t in ix.query_tokens(q)}:
        lo, hi = int(ix.indptr[t]), int(ix.indptr[t + 1])
        if hi - lo < block:
            continue
        d, rows = np.asarray(ix.data[lo:hi]), np.asarray(ix.indices[lo:hi])
        starts = np.unique(np.searchsorted(rows, np.arange(0, ix.n_docs, window)))
        starts = starts[starts < d.size]
        top = float(d.max())
        ratios = (
            d.mean(),
            np.maximum.reduceat(d, starts).mean(),
            np.maximum.reduceat(d, np.arange(0, d.size, block)).mean(),
        )
        sums += (hi - lo) * np.asarray(ratios) / top
        total += hi - lo
    m = sums / max(total, 1)
    return f"bounds over the largest weight: mean posting {m[0]:.2f}, largest per {window} rows {m[1]:.2f}, per {block} postings {m[2]:.2f}"


def step_kernel(args: argparse.Namespace) -> None:
    ix = SparseIndex.load(args.bm25)
    bounds = ix.ensure_term_max()
    big = _stacked(ix, args.copies)
    data, ptr, ind, n = big.data, big.indptr, big.indices, big.n_docs
    terms, config = DocTerms(ix), FeedbackConfig()
    queries = topic_queries()
    cpu: dict[str, list[float]] = {
        k: [] for k in ("first_exh", "first_pruned", "mark", "fb_exh", "fb_pruned")
    }
    same = 0
    load0 = os.getloadavg()
    for rnd in range(args.rounds + 1):  # round 0 compiles and reads the pages in: untimed
        for q in queries:
            tokens = ix.query_tokens(q)
            t = time.process_time()
            scores = big.scores(tokens)
            exh = top_k_rows(scores, args.depth)
            matched = scores > 0
            t1 = time.process_time()
            pruned = top_k_pruned(data, ptr, ind, bounds, n, tokens, args.depth)
            t2 = time.process_time()
            marks = mark_matches(ptr, ind, n, tokens)
            t3 = time.process_time()
            ex_terms, weights = expand(
                terms, scores[: ix.n_docs], config
            )  # the copies' feedback papers: the first copy's
            w = weights.astype(np.float32)
            t4 = time.process_time()
            fb_exh = top_k_rows(expanded_scores(big, ex_terms, w, scores), args.depth)
            t5 = time.process_time()
            fb_pruned = top_k_pruned(data, ptr, ind, bounds, n, ex_terms, args.depth, w, matched)
            t6 = time.process_time()
            if rnd == 0:
                same += (
                    _same(exh, pruned) and _same(fb_exh, fb_pruned) and bool(np.array_equal(marks, matched))
                )
                continue
            for key, ms in zip(cpu, (t1 - t, t2 - t1, t3 - t2, t5 - t4, t6 - t5), strict=True):
                cpu[key].append(ms * 1000)
    load1 = os.getloadavg()
    med = {k: float(np.mean(v)) for k, v in cpu.items()}
    print(f"{n:,} rows, {data.size:,} postings ({args.copies} cop{'y' if args.copies == 1 else 'ies'} of "
          f"{args.bm25}), depth {args.depth}, {len(queries)} queries x {args.rounds} rounds; "
          f"identical lists: {same} of {len(queries)}; load {load0[0]:.1f} / {load1[0]:.1f}")  # fmt: skip
    print(
        "| rows | first pass exhaustive | pruned + match pass | ratio | feedback exhaustive | pruned | ratio |"
    )
    first_p = med["first_pruned"] + med["mark"]
    print(
        f"| {n:,} | {med['first_exh']:.2f} | {med['first_pruned']:.2f} + {med['mark']:.2f} | "
        f"{first_p / med['first_exh']:.2f} | {med['fb_exh']:.2f} | {med['fb_pruned']:.2f} | "
        f"{med['fb_pruned'] / med['fb_exh']:.2f} |"
    )


def _in_process(index: Path, queries: list[str], pruning: bool) -> dict[str, Any]:
    from harness.scale import time_queries

    from openxiv.corpus.settings.model import Settings
    from openxiv.indexer.snapshot import open_index

    settings = Settings.from_env().replace(bm25_pruning=pruning)
    stages: list[dict[str, float]] = []
    with open_index(index, settings) as ix:
        time_queries(ix.backend, queries, settings.fusion)  # warm
        out: dict[str, Any] = dict(pcts(time_queries(ix.backend, queries, settings.fusion, stages=stages)))
    names = sorted({k for t in stages for k in t} - {"total"})
    out["stages"] = ", ".join(f"{k} {pcts([t.get(k, 0.0) for t in stages])['p50']:.1f}" for k in names)
    return out


def _clients(index: Path, queries: list[str], pruning: bool) -> dict[str, Any]:
    from harness.load import phase
    from harness.server import Server

    os.environ["OPENXIV_BM25_PRUNING"] = "1" if pruning else "0"
    os.environ["OPENXIV_SERVE_WARM"] = "before-ready"
    server = Server(index, workers=2)
    try:
        phase(server.url, queries[:16], 8, server)  # each worker compiles and reads its pages
        out = phase(server.url, queries, 8, server)
    finally:
        server.stop()
    return {"qps": out["qps"], "cpu_ms": out["cpu_ms"], **pcts(out["lat"])}


def step_serve(args: argparse.Namespace) -> None:
    queries = topic_queries()
    rows: list[str] = []
    for rnd in range(args.rounds):
        for pruning in (False, True):
            load = os.getloadavg()[0]
            one = _in_process(args.index, queries, pruning)
            many = _clients(args.index, queries * 2, pruning)
            name = "pruned" if pruning else "exhaustive"
            rows.append(
                f"| {rnd + 1} | {name} | {one['p50']:.1f} / {one['p95']:.1f} | {many['qps']:.1f} | "
                f"{many['p50']:.0f} / {many['p95']:.0f} | {many['cpu_ms']:.1f} | {one['stages']} | {load:.1f} |"
            )
            print(rows[-1], flush=True)
    print(
        "| round | BM25 | default mode one at a time p50 / p95 ms | 8 clients, 2 workers: req/s | p50 / p95 ms | server CPU ms / request | load |"
    )
    print("\n".join(rows))


def _evict(snapshot: Path) -> int:
    """Drop ``snapshot``'s files from the page cache (pages another process maps stay); bytes."""
    total = 0
    for p in snapshot.rglob("*"):
        if p.is_file():
            fd = os.open(p, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
            total += p.stat().st_size
    return total


def step_cold(args: argparse.Namespace) -> None:
    import httpx
    from harness.server import Server

    from openxiv.indexer.snapshot import current_snapshot

    snap = current_snapshot(args.index)
    assert snap is not None, f"no snapshot under {args.index}"
    queries = topic_queries()
    print(
        "| warm | load | ready s | requests in the first minute | p50 ms | p95 ms | all requests p50 / p95 ms |"
    )
    for warm in args.modes:
        evicted = _evict(snap)
        os.environ["OPENXIV_SERVE_WARM"] = warm
        load = os.getloadavg()[0]
        t0 = time.monotonic()
        server = Server(args.index, workers=1)
        ready = time.monotonic() - t0
        lat: list[tuple[float, float]] = []
        try:
            with httpx.Client(base_url=server.url, timeout=120) as c:
                t_ready = time.monotonic()
                for q in queries:
                    t = time.monotonic()
                    c.post("/search", json={"query": q, "top_k": 10}).raise_for_status()
                    lat.append((t - t_ready, (time.monotonic() - t) * 1000))
        finally:
            server.stop()
        first = [ms for at, ms in lat if at < 60.0]
        a, f = pcts([ms for _, ms in lat]), pcts(first)
        print(
            f"| {warm} | {load:.1f} | {ready:.1f} | {len(first)} | {f['p50']:.0f} | {f['p95']:.0f} | "
            f"{a['p50']:.0f} / {a['p95']:.0f} |  (evicted {evicted / 2**20:.0f} MiB)",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="step", required=True)
    k = sub.add_parser("kernel")
    k.add_argument("--bm25", type=Path, required=True, help="a snapshot's bm25_papers folder")
    k.add_argument("--copies", type=int, default=1)
    k.add_argument("--depth", type=int, default=1000)
    k.add_argument("--rounds", type=int, default=2)
    s = sub.add_parser("serve")
    s.add_argument("--index", type=Path, required=True)
    s.add_argument("--rounds", type=int, default=2)
    c = sub.add_parser("cold")
    c.add_argument("--index", type=Path, required=True)
    c.add_argument("--modes", nargs="+", default=["off", "background", "before-ready"])
    args = ap.parse_args()
    {"kernel": step_kernel, "serve": step_serve, "cold": step_cold}[args.step](args)


if __name__ == "__main__":
    main()
