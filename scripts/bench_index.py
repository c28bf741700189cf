"""Demo index build of the whole shared corpus, then query latency (and quality) per side.

Stages: ingest every shared input (listing files, plain-text and unarXive full texts, PDFs) into a
fresh corpus DB (skipped with ``--db`` pointing at an existing one), then `build_index` with the
given embedding settings. Reports wall time per stage, peak RSS per stage (sampled every 0.2 s),
snapshot size per part, and, on the built snapshot, per-mode query latency (p50/p95 of the whole
`HybridBackend.search` call and of its encode / dense / bm25 parts) with Recall@100 on the dev topic
queries and success@10 on the dev known-item queries.

    .venv/bin/python scripts/bench_index.py --work /tmp/openxiv-demo [--embed papers] [--model ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import SharedData
from harness.report import write_section
from harness.timing import PeakRSS, percentile

from openxiv.corpus.settings.model import Settings

MODES = ("bm25_papers", "bm25_passages", "bm25", "dense_papers", "dense_passages", "dense", "rrf", "weighted")


def ingest_all(shared: SharedData, db: Path) -> dict[str, Any]:
    from openxiv.corpus.readers import read_path
    from openxiv.corpus.store import Store

    inputs = shared.ingest_inputs

    def items() -> Iterator[Any]:
        for p in inputs:
            yield from read_path(p)

    with Store(db) as store:
        summary = store.ingest(items())
        return {"summary": summary.as_dict(), "stats": store.stats()}


def load_queries(shared: SharedData) -> tuple[list[tuple[str, set[str]]], list[tuple[str, str, set[str]]]]:
    topics = []
    for name in SharedData.TOPIC_SETS:
        for line in shared.gold(name).read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            topics.append((q["query"], set(q["relevant"])))
    known = []
    for line in shared.gold(shared.KNOWN_ITEM).read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        known.append((q["kind"], q["query"], set(q["relevant"])))
    return topics, known


def bench_queries(backend: Any, shared: SharedData, known_n: int) -> list[dict[str, Any]]:
    topics, known = load_queries(shared)
    known = known[:known_n]
    out = []
    for mode in MODES:
        try:
            backend.search("warm up query", top_k=10, mode=mode)
        except ValueError:
            continue
        wall: list[float] = []
        parts: dict[str, list[float]] = {"encode": [], "dense": [], "bm25": []}
        recalls: list[float] = []
        succ: dict[str, list[float]] = {"exact": [], "keywords": []}
        for q, rel in topics:
            t = time.perf_counter()
            res = backend.search(q, top_k=100, mode=mode)
            wall.append((time.perf_counter() - t) * 1000)
            for k in parts:
                if k in res.timings_ms:
                    parts[k].append(res.timings_ms[k])
            recalls.append(len({h.arxiv_id for h in res.hits} & rel) / len(rel))
        for kind, q, rel in known:
            t = time.perf_counter()
            res = backend.search(q, top_k=10, mode=mode)
            wall.append((time.perf_counter() - t) * 1000)
            for k in parts:
                if k in res.timings_ms:
                    parts[k].append(res.timings_ms[k])
            succ[kind].append(float(any(h.arxiv_id in rel for h in res.hits)))
        row = {
            "mode": mode,
            "p50": statistics.median(wall),
            "p95": percentile(wall, 95),
            "recall100": statistics.fmean(recalls),
            "succ10_exact": statistics.fmean(succ["exact"]) if succ["exact"] else float("nan"),
            "succ10_keywords": statistics.fmean(succ["keywords"]) if succ["keywords"] else float("nan"),
        }
        for k, v in parts.items():
            row[f"{k}_p50"] = statistics.median(v) if v else None
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--work", type=Path, default=Path("/tmp/openxiv-demo"), help="working dir (DB, index, cache)"
    )
    ap.add_argument("--db", type=Path, default=None, help="existing corpus DB (skips the ingest stage)")
    ap.add_argument("--embed", default=None, help="papers|passages|both|none (default: Settings)")
    ap.add_argument("--model", default=None)
    ap.add_argument("--max-tokens", type=int, default=None)
    ap.add_argument("--known", type=int, default=600, help="known-item queries to run per mode")
    ap.add_argument("--data-dir", type=Path, default=None, help="data dir for models (default: --work)")
    ap.add_argument(
        "--cache", type=Path, default=None, help="embedding cache (default: WORK/embcache.sqlite)"
    )
    ap.add_argument("--rebuild", action="store_true", help="time a second build with every vector cached")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    from openxiv.indexer.building.job import build_index_report
    from openxiv.indexer.snapshot import open_index

    shared = SharedData.default()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    settings = Settings.from_env().replace(
        data_dir=args.data_dir or work, embed=args.embed, model=args.model, embed_max_tokens=args.max_tokens
    )
    cache = args.cache or work / "embcache.sqlite"
    stages: list[tuple[str, float, int]] = []
    t_all = time.perf_counter()
    db = args.db
    ingest_info: dict[str, Any] = {}
    if db is None:
        db = work / "corpus.sqlite"
        if db.exists():
            db.unlink()
        t = time.perf_counter()
        with PeakRSS() as rss:
            ingest_info = ingest_all(shared, db)
        stages.append(("ingest", time.perf_counter() - t, rss.peak))
        print("ingest", json.dumps(ingest_info["stats"]), flush=True)
    t = time.perf_counter()
    with PeakRSS() as rss:
        report = build_index_report(db, work / "index", settings, progress=True, cache_path=cache)
    build_s = time.perf_counter() - t
    stages += [(f"index: {k}", v, 0) for k, v in report.stages.items()]
    stages.append(("index build (total)", build_s, rss.peak))
    total_s = time.perf_counter() - t_all
    rebuild: dict[str, Any] | None = None
    if args.rebuild:
        # what an incremental update costs: same corpus, every vector already in the cache
        t = time.perf_counter()
        with PeakRSS() as rrss:
            again = build_index_report(db, work / "index", settings, progress=False, cache_path=cache)
        rebuild = {
            "seconds": time.perf_counter() - t,
            "stages": again.stages,
            "peak": rrss.peak,
            "embedding": again.manifest.embedding,
        }
        print("rebuild", json.dumps(rebuild, default=str), flush=True)
    m = report.manifest
    print(json.dumps({"stages": report.stages, "sizes": m.sizes_bytes, "peak_rss": rss.peak}), flush=True)

    with PeakRSS() as qrss, open_index(work / "index", settings) as ix:
        rows = bench_queries(ix.backend, shared, args.known)

    mib = 1024 * 1024
    emb, c = m.embedding, m.counts
    lines = [
        f"Whole shared corpus: {c.papers:,} papers ({m.corpus.papers_with_fulltext or 0:,} with full text), "
        f"{c.passages:,} passages, {c.paper_vectors:,} paper + "
        f"{c.passage_vectors:,} passage vectors; embed=`{emb.embedded}`"
        + (
            f", {emb.encoder}, {emb.max_tokens} tokens (encoded {emb.encoded:,}, reused {emb.reused_from_cache:,} from the cache)"
            if emb.embedded != "none"
            else ""
        )
        + f". Total wall time {total_s / 60:.1f} min on this 2-core machine (other jobs may have shared it).",
        "",
        "| stage | seconds | peak RSS MiB |",
        "|---|---:|---:|",
    ]
    lines += [f"| {n} | {s:.1f} | {(p / mib):.0f} |" if p else f"| {n} | {s:.1f} | |" for n, s, p in stages]
    if rebuild is not None:
        emb2 = rebuild["embedding"]
        lines += [
            "",
            f"Rebuild of the same corpus (the incremental path: BM25 rebuilt, vectors from the cache — encoded "
            f"{emb2.encoded:,}, reused {emb2.reused_from_cache:,}): {rebuild['seconds']:.1f} s, peak RSS "
            f"{rebuild['peak'] / mib:.0f} MiB; "
            + ", ".join(f"{k} {v:.1f}s" for k, v in rebuild["stages"].items())
            + ".",
        ]
    lines += ["", "| snapshot part | MiB |", "|---|---:|"]
    lines += [f"| {k} | {v / mib:.1f} |" for k, v in m.sizes_bytes.items()]
    lines += [
        "",
        f"Queries on the built snapshot (in process, one at a time; {len(rows) and 103} topic queries at top_k=100 + "
        f"{args.known} known-item queries at top_k=10 per mode; query-time peak RSS {qrss.peak / mib:.0f} MiB):",
        "",
        "| mode | p50 ms | p95 ms | encode p50 | dense p50 | bm25 p50 | topic R@100 | known exact S@10 | known keywords S@10 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def f(v: Any, fmt: str = ".1f") -> str:
        return "" if v is None or v != v else format(v, fmt)

    for r in rows:
        lines.append(
            f"| {r['mode']} | {f(r['p50'])} | {f(r['p95'])} | {f(r['encode_p50'])} | {f(r['dense_p50'])} | "
            f"{f(r['bm25_p50'])} | {f(r['recall100'], '.3f')} | {f(r['succ10_exact'], '.3f')} | {f(r['succ10_keywords'], '.3f')} |"
        )
    cmd = f"`.venv/bin/python scripts/bench_index.py --work {args.work}"
    cmd += "".join(
        f" --{k} {v}"
        for k, v in (("embed", args.embed), ("model", args.model), ("max-tokens", args.max_tokens))
        if v
    )
    cmd += " --rebuild" if args.rebuild else ""
    cmd += f" --data-dir {args.data_dir}" if args.data_dir else ""
    cmd += f" --cache {args.cache}" if args.cache else ""
    lines += ["", f"Command: {cmd}`"]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section("Index build", body)


if __name__ == "__main__":
    main()
