"""The fusion modes on milvus-lite against the embedded backend: same corpus, same run.

Ingests the first ``--papers`` papers of the shared cs listing plus ``--fulltexts`` plain-text full
texts into ``--work`` (once; later runs reuse it), builds an embedded and a Milvus snapshot from the
same embedding cache (``--cache``: a copy of a warm cache, vectors looked up, not recomputed), then
times `MilvusBackend.search` per fusion mode (first page of 10, one query at a time, after one
warm-up) with the shallow fusion depth (``OPENXIV_MILVUS_FUSION_DEPTH``, the default) and with the
sides asked ``candidates`` deep as before (``OPENXIV_MILVUS_FUSION_DEPTH=0``), the stage timings of
one query, and the top-10 overlap of each against the embedded backend on the same papers. Writes
``## Milvus fusion`` of BENCHMARKS.md with the command and the load average.

    nice -n 5 .venv/bin/python scripts/bench_milvus_fusion.py --work data/bench/milvus20k \\
        --papers 20000 --cache data/bench/milvus20k/embcache.sqlite --write
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.report import load_average, write_section
from harness.timing import percentile

from openxiv.corpus.settings.model import Settings, shared_dir

MODES = ("weighted", "rrf", "zscore")


def ingest(db: Path, papers: int, fulltexts: int, settings: Settings) -> None:
    from openxiv.corpus.readers import read_path
    from openxiv.corpus.store import Store

    shared = shared_dir()
    items = itertools.chain(
        itertools.islice(read_path(shared / "data/corpus/listing-cs-2503-2606.jsonl.gz"), papers),
        itertools.islice(read_path(shared / "data/fulltext/plaintext-9108-1612.jsonl.gz"), fulltexts),
    )
    with Store(db) as store:
        store.ingest(items, settings=settings)


def topics(n: int) -> list[str]:
    with (shared_dir() / "gold" / "topic_queries_dev.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line)["query"] for line in itertools.islice(fh, n)]


def run(backend: Any, queries: list[str], mode: str) -> tuple[list[float], list[list[str]], dict[str, float]]:
    backend.search(queries[0], top_k=10, mode=mode)  # warm-up
    times, tops, stages = [], [], {}
    for q in queries:
        t = time.perf_counter()
        res = backend.search(q, top_k=10, mode=mode)
        times.append((time.perf_counter() - t) * 1000)
        tops.append([h.arxiv_id for h in res.hits])
        stages = dict(res.timings_ms)
    return times, tops, stages


def overlap(a: list[list[str]], b: list[list[str]]) -> float:
    return statistics.mean(len(set(x) & set(y)) / max(len(y), 1) for x, y in zip(a, b, strict=True))


def build(args: argparse.Namespace, settings: Settings) -> dict[str, tuple[Path, Settings]]:
    from openxiv.indexer.building.job import build_index_report

    args.work.mkdir(parents=True, exist_ok=True)
    db = args.work / "corpus.sqlite"
    if not db.is_file():
        ingest(db, args.papers, args.fulltexts, settings)
    uri = args.work / "milvus.db"
    runs = {
        "embedded": (args.work / "index", settings),
        "milvus": (args.work / "index-milvus", settings.replace(backend="milvus", milvus_uri=str(uri))),
    }
    for name, (root, s) in runs.items():
        if not (root / "CURRENT").is_file():
            t = time.perf_counter()
            build_index_report(db, root, s, progress=False, cache_path=args.cache)
            print(f"built {name} in {time.perf_counter() - t:.1f} s", flush=True)
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--papers", type=int, default=20000)
    ap.add_argument("--fulltexts", type=int, default=300)
    ap.add_argument("--cache", type=Path, required=True, help="embedding cache (a copy: it may be written)")
    ap.add_argument("--queries", type=int, default=12)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--before-modes", default="weighted", help="modes also timed at full depth (before)")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--write", action="store_true", help="write '## Milvus fusion' of BENCHMARKS.md")
    args = ap.parse_args()

    from openxiv.indexer.snapshot import open_index

    settings = Settings.from_env().replace(data_dir=args.work, embed="papers")
    runs = build(args, settings)
    if args.build_only:
        return
    modes = tuple(args.modes.split(","))
    queries = topics(args.queries)
    with open_index(runs["embedded"][0], runs["embedded"][1]) as index:
        ref = {m: run(index.backend, queries, m)[1] for m in modes}
    # the ranking both backends share: the embedded one without its feedback query and query-kind rule
    shared = runs["embedded"][1].replace(prf_docs=0, kind_ratio=0.0)
    with open_index(runs["embedded"][0], shared) as index:
        ref_shared = {m: run(index.backend, queries, m)[1] for m in modes}
    rows, stages = [], {}
    with open_index(runs["milvus"][0], runs["milvus"][1]) as index:
        papers = index.backend.meta.n
        deep = copy.copy(index.backend)
        deep.settings = deep.settings.replace(milvus_fusion_depth=0)
        before = set(filter(None, args.before_modes.split(",")))
        for mode in modes:
            variants = [(f"{index.backend.settings.milvus_fusion_depth} deep (default)", index.backend)]
            if mode in before:
                variants.insert(0, (f"{deep.settings.candidates} deep (before)", deep))
            for label, backend in variants:
                times, tops, st = run(backend, queries, mode)
                rows.append((mode, label, times, overlap(tops, ref[mode]), overlap(tops, ref_shared[mode])))
                stages[(mode, label)] = st
                print(mode, label, f"p50 {percentile(times, 50):.1f} ms", rows[-1][3:], st, flush=True)
    load = load_average()
    cmd = "nice -n 5 .venv/bin/python scripts/bench_milvus_fusion.py " + shlex.join(sys.argv[1:])
    lines = [
        f"`{cmd}`",
        "",
        f"milvus-lite snapshot of {papers:,} papers; {len(queries)} dev topic queries, first page of 10, "
        f"one at a time, in process, after one warm-up. Load average at the end {load} (2 cores shared). "
        "Overlap: against the embedded backend's default answer, and against it without the feedback "
        "query and the query-kind rule (`OPENXIV_PRF_DOCS=0`, `OPENXIV_KIND_RATIO=0`), which Milvus does not run.",
        "",
        "| mode | Milvus sides | p50 / p95 ms | top-10 overlap vs embedded (default / no feedback) "
        "| stages of the last query (ms) |",
        "|---|---|---:|---:|---|",
    ]
    for mode, label, times, ov, ov_shared in rows:
        stage = ", ".join(f"{k} {v:.0f}" for k, v in stages[(mode, label)].items())
        lines.append(
            f"| {mode} | {label} | {percentile(times, 50):.1f} / {percentile(times, 95):.1f} | {ov:.2f} / {ov_shared:.2f} | {stage} |"
        )
    body = "\n".join(lines)
    print(body)
    if args.write:
        write_section("Milvus fusion", body, after="Milvus search stages")


if __name__ == "__main__":
    main()
