"""Where one Milvus-backed search spends its time, per Milvus call, on a milvus-lite snapshot.

Opens a Milvus snapshot (e.g. the ``index-milvus`` that `scripts/bench_scaleout.py` builds) and times,
over the dev topic queries, each call a search makes, with `pymilvus` directly against the snapshot's
collections: BM25 over papers and over passages (grouped by paper, as the backend asks) at depth
10/100/1000, dense search over papers (unfiltered and restricted to a query's lexical matches), a
category and a date filter on the BM25 search, the exact match count (``TEXT_MATCH`` + ``count(*)``),
the evidence look-ups and the store read of a page (hydration); then `MilvusBackend.search` per mode
(first page of 10, and a page at offset 990). Wall-clock medians in ms (milvus-lite runs its server
in threads of this process), with the load average.

    nice -n 10 .venv/bin/python scripts/bench_milvus_stages.py --index <work>/index-milvus \\
        --milvus-uri <work>/milvus.db [--write]
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import load_average, write_section

from openxiv.corpus.settings.model import Settings, shared_dir
from openxiv.indexer.backend import SearchFilters

DEPTHS = (10, 100, 1000)
MODES = ("bm25", "dense", "weighted")


def topics(n: int) -> list[str]:
    with (shared_dir() / "gold" / "topic_queries_dev.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line)["query"] for line in itertools.islice(fh, n)]


def median_ms(fn: Callable[[str], Any], queries: list[str]) -> float:
    fn(queries[0])  # warm-up
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def pct(xs: list[float], p: int) -> float:
    return statistics.quantiles(xs, n=100)[p - 1] if len(xs) > 1 else xs[0]


def call_rows(backend: Any, queries: list[str]) -> list[tuple[str, float]]:
    """(call, median ms) for each Milvus call a search makes, at each depth."""
    from openxiv.indexer.engine.milvus_common import analyse, filter_expr, match_expr

    terms = {q: analyse([q], backend.stemmer)[0] for q in queries}
    qvecs = {q: backend.encoder.encode_query(q).reshape(-1) for q in queries} if backend.encoder else {}
    has_passages = "passages" in backend.collections
    rows: list[tuple[str, float]] = []

    def bm25(key: str, depth: int, expr: str | None = None, **kw: Any) -> Callable[[str], Any]:
        return lambda q: backend._search(key, terms[q], "sparse", depth, expr, **kw)

    grouped: dict[str, Any] = {"group_by_field": "paper_row", "output_fields": ["paper_row"]}

    def dense(depth: int, expr: Callable[[str], str | None] = lambda q: None) -> Callable[[str], Any]:
        return lambda q: backend._search("papers", qvecs[q].tolist(), "dense", depth, expr(q))

    for depth in DEPTHS:
        rows.append((f"BM25 papers, limit {depth}", median_ms(bm25("papers", depth), queries)))
        if has_passages:
            rows.append(
                (
                    f"BM25 passages grouped by paper, limit {depth}",
                    median_ms(bm25("passages", depth, **grouped), queries),
                )
            )
            rows.append(
                (
                    f"BM25 passages, limit {depth} (not grouped)",
                    median_ms(bm25("passages", depth, output_fields=["paper_row"]), queries),
                )
            )
    if qvecs:
        for depth in DEPTHS:
            rows.append(
                (
                    f"dense papers, limit {depth}",
                    median_ms(dense(depth), queries),
                )
            )
        matched = {q: sorted(backend._bm25_papers(terms[q], 1000, None).rows.tolist()) for q in queries}
        rows.append(
            (
                "dense papers, limit 1000, `row in [the query's BM25 papers]`",
                median_ms(dense(1000, lambda q: f"row in {matched[q]}" if matched[q] else None), queries),
            )
        )
        rows.append(
            (
                "dense papers, limit 1000, TEXT_MATCH filter (lists not complete)",
                median_ms(dense(1000, lambda q: match_expr("text", terms[q])), queries[:4]),
            )
        )
    for name, filters in (
        ("category cs.CL", SearchFilters(categories=("cs.CL",))),
        ("date range", SearchFilters(date_from=__import__("datetime").date(2025, 6, 1))),
    ):
        expr = filter_expr(backend.meta, filters)
        rows.append((f"BM25 papers, limit 10, filter {name}", median_ms(bm25("papers", 10, expr), queries)))
    rows.append(
        (
            "exact count: TEXT_MATCH + count(*) over papers",
            median_ms(
                lambda q: backend.client.query(
                    backend.collections["papers"],
                    filter=match_expr("text", terms[q]),
                    output_fields=["count(*)"],
                ),
                queries[:4],
            ),
        )
    )
    pages = {q: backend._bm25_papers(terms[q], 10, None).rows.tolist() for q in queries}
    rows.append(
        (
            "evidence of a page of 10 (passage look-ups)",
            median_ms(lambda q: backend._evidence(terms[q], pages[q], {}), queries),
        )
    )
    return rows


def mode_rows(
    index: Any, queries: list[str], modes: tuple[str, ...] = MODES, deep: bool = True
) -> list[tuple[str, list[float], list[float]]]:
    """(mode, first-page times, offset-990 times) of `MilvusBackend.search`, and the weighted mode
    with 100 candidates (``OPENXIV_CANDIDATES=100``) beside it."""
    shallow = copy.copy(index.backend)
    shallow.settings = shallow.settings.replace(candidates=100)
    out = []
    runs_of = [(m, index.backend, m) for m in modes]
    if "weighted" in modes:
        runs_of.append(("weighted, OPENXIV_CANDIDATES=100", shallow, "weighted"))
    for label, backend, mode in runs_of:
        runs: list[list[float]] = []
        for offset in (0, 990) if deep and backend is index.backend else (0,):
            backend.search(queries[0], top_k=10, offset=offset, mode=mode)
            times = []
            for q in queries:
                t = time.perf_counter()
                backend.search(q, top_k=10, offset=offset, mode=mode)
                times.append((time.perf_counter() - t) * 1000)
            runs.append(times)
        out.append((label, runs[0], runs[-1] if len(runs) > 1 else []))
        print(label, f"p50 {pct(runs[0], 50):.1f} ms", flush=True)
    return out


def overlap_at_100(index: Any, queries: list[str]) -> float:
    """Mean top-10 overlap of the weighted mode with 100 candidates against 1,000."""
    shallow = copy.copy(index.backend)
    shallow.settings = shallow.settings.replace(candidates=100)
    shares = []
    for q in queries:
        a = {h.arxiv_id for h in index.backend.search(q, top_k=10, mode="weighted").hits}
        b = {h.arxiv_id for h in shallow.search(q, top_k=10, mode="weighted").hits}
        shares.append(len(a & b) / max(len(a), 1))
    return statistics.mean(shares)


def hydration_ms(index: Any, queries: list[str]) -> float:
    hits = {q: [h.arxiv_id for h in index.backend.search(q, top_k=10, mode="bm25").hits] for q in queries}
    return median_ms(lambda q: index.store.get_papers(hits[q]), queries)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True, help="root of a Milvus-backed index")
    ap.add_argument("--milvus-uri", required=True)
    ap.add_argument("--queries", type=int, default=12)
    ap.add_argument("--skip-calls", action="store_true", help="only the per-mode searches")
    ap.add_argument("--modes", default=",".join(MODES), help="modes to time (comma-separated)")
    ap.add_argument("--no-deep", action="store_true", help="first pages only (no offset 990)")
    ap.add_argument("--write", action="store_true", help="write '## Milvus search stages' of BENCHMARKS.md")
    args = ap.parse_args()

    from openxiv.indexer.snapshot import open_index

    settings = Settings.from_env().replace(milvus_uri=args.milvus_uri)
    queries = topics(args.queries)
    with open_index(args.index, settings) as index:
        calls = [] if args.skip_calls else call_rows(index.backend, queries)
        for name, ms in calls:
            print(f"{name}: {ms:.1f} ms", flush=True)
        hydrate = hydration_ms(index, queries)
        modes = mode_rows(index, queries, tuple(args.modes.split(",")), not args.no_deep)
        overlap = overlap_at_100(index, queries) if "weighted" in args.modes else None
        papers = index.backend.meta.n
    cmd = "nice -n 10 .venv/bin/python scripts/bench_milvus_stages.py " + shlex.join(sys.argv[1:])
    lines = [
        f"`{cmd}`",
        "",
        f"milvus-lite snapshot of {papers:,} papers; {len(queries)} dev topic queries, one at a time, in "
        f"process, wall-clock after one warm-up. Load average at the end {load_average()} (2 cores shared).",
        "",
    ]
    if calls:
        lines += ["| Milvus call | median ms |", "|---|---:|"] + [f"| {n} | {ms:.1f} |" for n, ms in calls]
        lines.append("")
    lines += [
        f"Hydration (store read of a page of 10 papers): {hydrate:.1f} ms median.",
        "",
        "| mode | first page p50 / p95 ms | offset 990 p50 / p95 ms |",
        "|---|---:|---:|",
    ]
    lines += [
        f"| {m} | {pct(a, 50):.1f} / {pct(a, 95):.1f} | "
        + (f"{pct(b, 50):.1f} / {pct(b, 95):.1f} |" if b else "- |")
        for m, a, b in modes
    ]
    if overlap is not None:
        lines += [
            "",
            f"Top-10 overlap of the weighted mode with 100 candidates against 1,000: {overlap:.2f}.",
        ]
    body = "\n".join(lines)
    print(body)
    if args.write:
        write_section("Milvus search stages", body, after="Scale-out")


if __name__ == "__main__":
    main()
