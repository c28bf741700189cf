"""The fusion modes on milvus-lite against the embedded backend: same corpus, same run.

For each ``--work`` directory (``--papers`` each, in order): ingests the first papers of the shared cs
listing plus ``--fulltexts`` plain-text full texts (once; later runs reuse the corpus and both
snapshots), builds an embedded and a Milvus snapshot from the same embedding cache (``--cache``: a copy
of a warm cache, vectors looked up, not recomputed), then times `MilvusBackend.search` per fusion mode
(first page of 10, one query at a time, after one warm-up) at the default fusion depth
(``OPENXIV_MILVUS_FUSION_DEPTH`` 0: every side ``candidates`` deep) and at ``--shallow`` (100, the
default before), with the median milliseconds of each stage over the queries, and the top-10 overlap of
each with the embedded backend on the same papers: the mean over the queries and the lowest query.

``--ablate`` first measures what each stage the Milvus path lacked costs: the embedded backend with one
stage switched off (the feedback query, the query-kind rule, the per-query passage calibration, or
every side 100 deep) against the embedded default, and the Milvus answers against each of those.

``--write`` adds the report as a dated subsection at the end of ``## Milvus fusion`` of BENCHMARKS.md
(earlier subsections stay), with the command and the load average.

    nice -n 5 .venv/bin/python scripts/bench_milvus_fusion.py --work data/bench/milvus20k --papers 20000 \\
        --work data/bench/milvus4k --papers 4000 --cache data/bench/milvus20k/embcache.sqlite --ablate --write
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import re
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.report import BENCH, load_average
from harness.timing import percentile

from openxiv.corpus.settings.model import Settings, shared_dir

MODES = ("weighted", "rrf", "zscore")
ABLATIONS: dict[str, dict[str, Any]] = {
    "no feedback query (`OPENXIV_PRF_DOCS=0`)": {"prf_docs": 0},
    "no query-kind rule (`OPENXIV_KIND_RATIO=0`)": {"kind_ratio": 0.0},
    "fixed passage factor (`OPENXIV_PASSAGE_NORM=fixed`)": {"passage_norm": "fixed"},
    "all three off": {"prf_docs": 0, "kind_ratio": 0.0, "passage_norm": "fixed"},
    "every side 100 deep (`OPENXIV_CANDIDATES=100`)": {"candidates": 100},
}

Tops = dict[str, list[list[str]]]


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
    """Milliseconds and top 10 per query, and the median milliseconds of each stage."""
    backend.search(queries[0], top_k=10, mode=mode)  # warm-up
    times, tops = [], []
    stages: dict[str, list[float]] = {}
    for q in queries:
        t = time.perf_counter()
        res = backend.search(q, top_k=10, mode=mode)
        times.append((time.perf_counter() - t) * 1000)
        tops.append([h.arxiv_id for h in res.hits])
        for k, v in res.timings_ms.items():
            stages.setdefault(k, []).append(v)
    return times, tops, {k: statistics.median(v) for k, v in stages.items()}


def shares(a: list[list[str]], b: list[list[str]]) -> list[float]:
    """Per query: the share of ``b``'s top 10 that ``a`` holds."""
    return [len(set(x) & set(y)) / max(len(y), 1) for x, y in zip(a, b, strict=True)]


def overlap(a: list[list[str]], b: list[list[str]]) -> float:
    return statistics.mean(shares(a, b))


def build(
    work: Path, papers: int, args: argparse.Namespace, settings: Settings
) -> dict[str, tuple[Path, Settings]]:
    from openxiv.indexer.building.job import build_index_report

    work.mkdir(parents=True, exist_ok=True)
    db = work / "corpus.sqlite"
    if not db.is_file():
        ingest(db, papers, args.fulltexts, settings)
    uri = work / "milvus.db"
    runs = {
        "embedded": (work / "index", settings),
        "milvus": (work / "index-milvus", settings.replace(backend="milvus", milvus_uri=str(uri))),
    }
    for name, (root, s) in runs.items():
        if not (root / "CURRENT").is_file():
            t = time.perf_counter()
            build_index_report(db, root, s, progress=False, cache_path=args.cache)
            print(f"built {name} in {time.perf_counter() - t:.1f} s", flush=True)
    return runs


def embedded_tops(root: Path, settings: Settings, queries: list[str], modes: tuple[str, ...]) -> Tops:
    from openxiv.indexer.snapshot import open_index

    with open_index(root, settings) as index:
        return {m: run(index.backend, queries, m)[1] for m in modes}


def ablation(
    runs: dict[str, tuple[Path, Settings]], ref: Tops, milvus: Tops, queries: list[str]
) -> list[str]:
    """The ablation table: each embedded variant against the embedded default, and Milvus against it."""
    root, settings = runs["embedded"]
    modes = tuple(ref)
    lines = [
        "| embedded backend | vs embedded default (" + " / ".join(modes) + ") | Milvus vs it |",
        "|---|---:|---:|",
    ]
    for label, change in ABLATIONS.items():
        tops = embedded_tops(root, settings.replace(**change), queries, modes)
        own = " / ".join(f"{overlap(tops[m], ref[m]):.2f}" for m in modes)
        other = " / ".join(f"{overlap(milvus[m], tops[m]):.2f}" for m in modes)
        lines.append(f"| {label} | {own} | {other} |")
        print(lines[-1], flush=True)
    return lines


def measure(work: Path, papers: int, args: argparse.Namespace) -> str:
    from openxiv.indexer.snapshot import open_index

    settings = Settings.from_env().replace(data_dir=work, embed="papers")
    runs = build(work, papers, args, settings)
    if args.build_only:
        return ""
    modes = tuple(args.modes.split(","))
    queries = topics(args.queries)
    ref = embedded_tops(*runs["embedded"], queries, modes)
    rows, tops_at = [], {}
    root, milvus_settings = runs["milvus"]
    for depth in (0, args.shallow):
        label = f"{depth} deep" if depth else "candidates deep (default)"
        with open_index(root, milvus_settings.replace(milvus_fusion_depth=depth)) as index:
            n = index.backend.meta.n
            for mode in modes:
                times, tops, st = run(index.backend, queries, mode)
                tops_at[(depth, mode)] = tops
                per = shares(tops, ref[mode])
                rows.append(
                    (mode, label, times, statistics.mean(per), min(per), queries[per.index(min(per))], st)
                )
                print(mode, label, f"p50 {percentile(times, 50):.1f} ms", rows[-1][3:5], st, flush=True)
    load = load_average()
    lines = [
        f"milvus-lite snapshot of {n:,} papers; {len(queries)} dev topic queries, first page of 10, one at a "
        f"time, in process, after one warm-up. Load average at the end {load} (2 cores shared).",
        "",
        "| mode | Milvus sides | p50 / p95 ms | top-10 overlap vs embedded: mean / lowest query | median stage ms |",
        "|---|---|---:|---:|---|",
    ]
    for mode, label, times, mean, low, low_q, st in rows:
        stage = ", ".join(f"{k} {v:.0f}" for k, v in st.items())
        p50, p95 = percentile(times, 50), percentile(times, 95)
        lines.append(
            f"| {mode} | {label} | {p50:.1f} / {p95:.1f} | {mean:.2f} / {low:.1f} ({low_q}) | {stage} |"
        )
    if args.ablate:
        milvus = {m: tops_at[(0, m)] for m in modes}
        lines += [
            "",
            "What each stage costs (embedded backend with it off; Milvus at the default depth):",
            "",
        ]
        lines += ablation(runs, ref, milvus, queries)
    return "\n".join(lines)


def write_subsection(body: str, path: Path = BENCH) -> None:
    """Add ``body`` as the last subsection of ``## Milvus fusion`` (earlier subsections kept)."""
    text = path.read_text(encoding="utf-8")
    found = re.search(r"^## Milvus fusion\n.*?(?=^## |\Z)", text, re.S | re.M)
    if found is None:
        text = text.rstrip() + "\n\n## Milvus fusion\n\n" + body.strip() + "\n"
    else:
        end = found.end()
        text = text[:end].rstrip() + "\n\n" + body.strip() + "\n\n" + text[end:].lstrip()
    path.write_text(text.rstrip() + "\n", encoding="utf-8")
    print(f"wrote a subsection of '## Milvus fusion' of {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, action="append", required=True, help="repeatable")
    ap.add_argument("--papers", type=int, action="append", help="per --work, in order (default 20000)")
    ap.add_argument("--fulltexts", type=int, default=300)
    ap.add_argument("--cache", type=Path, required=True, help="embedding cache (a copy: it may be written)")
    ap.add_argument("--queries", type=int, default=12)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--shallow", type=int, default=100, help="the shallow fusion depth also timed")
    ap.add_argument("--ablate", action="store_true", help="the embedded backend with each stage off")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument(
        "--write", action="store_true", help="add a subsection to '## Milvus fusion' of BENCHMARKS.md"
    )
    args = ap.parse_args()
    papers = args.papers or [20000] * len(args.work)
    if len(papers) != len(args.work):
        ap.error("give --papers once per --work, or not at all")
    bodies = [measure(work, n, args) for work, n in zip(args.work, papers, strict=True)]
    if args.build_only:
        return
    cmd = "nice -n 5 .venv/bin/python scripts/bench_milvus_fusion.py " + shlex.join(sys.argv[1:])
    day = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = "\n\n".join(
        [f"### {day}: every side `candidates` deep, feedback, query kind, calibration", f"`{cmd}`", *bodies]
    )
    print(body)
    if args.write:
        write_subsection(body)


if __name__ == "__main__":
    main()
