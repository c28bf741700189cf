"""Milvus (milvus-lite) against the embedded backend: same run, same corpus, same embedding cache.

Ingests the first ``--papers`` papers of the shared cs listing plus ``--fulltexts`` plain-text full
texts into a fresh corpus DB, then builds it twice from the same embedding cache (``--cache``, a copy
of a warm cache: vectors are looked up, not recomputed): the embedded snapshot (bm25s + FAISS) and a
Milvus one on a milvus-lite file. Reports build time and peak RSS (this process plus its children:
milvus-lite runs as a child process), then, per backend and mode, p50/p95 of one search call
(top_k=10, in process, after warm-up) over the dev topic and known-item queries, and the top-10
overlap between the backends; writes ``## Scale-out`` of BENCHMARKS.md with the command and the load
average.

    nice -n 10 .venv/bin/python scripts/bench_scaleout.py --work data/scratch/milvus/bench \\
        --papers 20000 --cache data/scratch/milvus/bench/embcache.sqlite
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import write_section
from bench_index import PeakRSS

from openxiv.corpus.settings.model import Settings, shared_dir

MODES = ("bm25", "dense", "weighted")


class PeakTreeRSS(PeakRSS):
    """`PeakRSS` of this process plus its children (milvus-lite runs as a child process)."""

    def rss(self) -> int:
        total = int(self.proc.memory_info().rss)
        for child in self.proc.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                total += child.memory_info().rss
        return total

    def _run(self) -> None:
        self.peak = max(self.peak, self.rss())
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self.rss())

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self.peak = max(self.peak, self.rss())


def ingest(db: Path, papers: int, fulltexts: int, settings: Settings) -> dict[str, Any]:
    from openxiv.corpus.readers import read_path
    from openxiv.corpus.store import Store

    shared = shared_dir()
    items = itertools.chain(
        itertools.islice(read_path(shared / "data/corpus/listing-cs-2503-2606.jsonl.gz"), papers),
        itertools.islice(read_path(shared / "data/fulltext/plaintext-9108-1612.jsonl.gz"), fulltexts),
    )
    with Store(db) as store:
        store.ingest(items, settings=settings)
        return dict(store.stats())


def queries(n: int, topics_only: bool = False) -> list[str]:
    shared = shared_dir()
    out: list[str] = []
    names = (
        ("topic_queries_dev.jsonl",)
        if topics_only
        else ("topic_queries_dev.jsonl", "fulltext_known_item_dev.jsonl")
    )
    for name in names:
        with (shared / "gold" / name).open(encoding="utf-8") as fh:
            out += [json.loads(line)["query"] for line in itertools.islice(fh, n // len(names))]
    return out


def measure(index: Any, qs: list[str], mode: str) -> tuple[list[float], list[list[str]]]:
    index.backend.search(qs[0], top_k=10, mode=mode)  # warm-up
    times, tops = [], []
    for q in qs:
        t = time.perf_counter()
        result = index.backend.search(q, top_k=10, mode=mode)
        times.append((time.perf_counter() - t) * 1000)
        tops.append([h.arxiv_id for h in result.hits])
    return times, tops


def pct(xs: list[float], p: float) -> float:
    return statistics.quantiles(xs, n=100)[int(p) - 1] if len(xs) > 1 else xs[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--papers", type=int, default=20000)
    ap.add_argument("--fulltexts", type=int, default=300)
    ap.add_argument("--cache", type=Path, required=True, help="embedding cache (a copy: it may be written)")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument(
        "--topics", action="store_true", help="dev topic queries only (default: topic + known-item)"
    )
    ap.add_argument("--no-write", action="store_true", help="print, do not edit BENCHMARKS.md")
    args = ap.parse_args()

    from openxiv.indexer.building.job import build_index_report
    from openxiv.indexer.snapshot import open_index

    args.work.mkdir(parents=True, exist_ok=True)
    settings = Settings.from_env().replace(data_dir=args.work, embed="papers")
    db = args.work / "corpus.sqlite"
    if not db.is_file():
        stats = ingest(db, args.papers, args.fulltexts, settings)
    else:
        from openxiv.corpus.store import Store

        with Store.open_readonly(db) as store:
            stats = dict(store.stats())
    uri = args.work / "milvus.db"
    runs = {
        "embedded": (args.work / "index", settings),
        "milvus-lite": (args.work / "index-milvus", settings.replace(backend="milvus", milvus_uri=str(uri))),
    }
    built: dict[str, dict[str, Any]] = {}
    for name, (root, s) in runs.items():
        with PeakTreeRSS() as rss:
            t = time.perf_counter()
            report = build_index_report(db, root, s, progress=False, cache_path=args.cache)
            built[name] = {
                "seconds": time.perf_counter() - t,
                "peak_rss": rss.peak,
                "stages": report.stages,
                "reused": report.manifest.embedding.reused_from_cache,
            }
        print(name, built[name], flush=True)
    qs = queries(args.queries, args.topics)
    lat: dict[str, dict[str, list[float]]] = {}
    tops: dict[str, dict[str, list[list[str]]]] = {}
    serve_rss: dict[str, int] = {}
    for name, (root, s) in runs.items():
        with PeakTreeRSS() as rss, open_index(root, s) as index:
            lat[name], tops[name] = {}, {}
            for mode in MODES:
                lat[name][mode], tops[name][mode] = measure(index, qs, mode)
                print(name, mode, f"p50 {pct(lat[name][mode], 50):.1f} ms", flush=True)
        serve_rss[name] = rss.peak

    load = os.getloadavg()
    cmd = "nice -n 10 .venv/bin/python scripts/bench_scaleout.py " + shlex.join(sys.argv[1:])
    lines = [
        f"`{cmd}`",
        "",
        f"Corpus: first {args.papers:,} papers of the shared cs listing + {args.fulltexts} plain-text full texts "
        f"({stats['papers']:,} papers, {stats['passages']:,} passages); paper vectors ({Settings().model}) "
        "from one embedding cache (the embedded build, first, encodes what the cache lacks; the Milvus "
        "build reads them all from it). Searches run in process, "
        f"top_k=10, {len(qs)} dev queries ({'topic' if args.topics else 'topic + known-item'}) per mode, one at a "
        "time, after one warm-up. "
        f"Load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (2 cores shared with other jobs).",
        "",
        "| backend | build s | build peak RSS | serve peak RSS | "
        + " | ".join(f"{m} p50 / p95 ms" for m in MODES)
        + " |",
        "|---|---:|---:|---:|" + "---:|" * len(MODES),
    ]
    for name in runs:
        b = built[name]
        cells = [f"{pct(lat[name][m], 50):.1f} / {pct(lat[name][m], 95):.1f}" for m in MODES]
        lines.append(
            f"| {name} | {b['seconds']:.1f} | {b['peak_rss'] / 2**20:.0f} MiB | "
            f"{serve_rss[name] / 2**20:.0f} MiB | " + " | ".join(cells) + " |"
        )
    overlap = {
        m: statistics.mean(
            len(set(a) & set(b)) / max(len(a), 1)
            for a, b in zip(tops["embedded"][m], tops["milvus-lite"][m], strict=True)
        )
        for m in MODES
    }
    lines += [
        "",
        "Top-10 overlap Milvus vs embedded: " + ", ".join(f"{m} {v:.2f}" for m, v in overlap.items()) + ".",
        "Build stages (s): "
        + "; ".join(f"{n}: " + ", ".join(f"{k} {v:.1f}" for k, v in built[n]["stages"].items()) for n in runs)
        + ".",
    ]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section("Scale-out", body)


if __name__ == "__main__":
    main()
