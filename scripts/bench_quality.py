"""Retrieval quality of openxiv's search on the real dev query sets, configuration by configuration.

Runs the dev topic queries (Recall@10/@100, nDCG@10) and the full-text known-item queries (MRR@10,
success@1/@10 per kind) through the same backend code path the service uses, scores them with
openxiv's own evaluator (`openxiv.evaluator.ranked`), times every query, prints a table, rewrites the
``## Retrieval quality`` section of BENCHMARKS.md and draws quality against latency into
``docs/quality_vs_latency.png``.

    .venv/bin/python scripts/bench_quality.py --index data/index [--index other/index ...]

Each ``--index`` is one snapshot (one encoder); every fusion configuration runs on each. Another
snapshot built with another encoder (``openxiv index build --model model2vec:...``) adds its rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from openxiv.corpus.config import Settings, repo_root, shared_dir
from openxiv.evaluator.ranked import score_ranked
from openxiv.indexer.snapshot import open_index

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import write_section

TOPIC_FILES = ("topic_queries_dev.jsonl", "topic_queries_more_dev.jsonl")
KNOWN_ITEM_FILE = "fulltext_known_item_dev.jsonl"

# name -> (mode, settings changes, family weights). Weights are explicit so that the rows do not move
# when the shipped defaults (corpus/config.py) change.
BM25_DENSE = {"bm25": 1.0, "dense": 1.0}
CONFIGS: dict[str, tuple[str, dict[str, Any], dict[str, float]]] = {
    "bm25 (papers + passages)": ("bm25", {}, {}),
    "bm25 papers only": ("bm25_papers", {}, {}),
    "dense only": ("dense", {}, {}),
    "hybrid rrf 1:1": ("rrf", {"rrf_k": 60}, BM25_DENSE),
    "hybrid rrf 1:0.3": ("rrf", {"rrf_k": 60}, {"bm25": 1.0, "dense": 0.3}),
    "hybrid weighted 1:1": ("weighted", {}, BM25_DENSE),
    "hybrid weighted 1:0.5": ("weighted", {}, {"bm25": 1.0, "dense": 0.5}),
    "hybrid weighted 1:0.3 (default)": ("weighted", {}, {"bm25": 1.0, "dense": 0.3}),
    "hybrid zscore 1:0.5": ("zscore", {}, {"bm25": 1.0, "dense": 0.5}),
}
DENSE_MODES = ("dense", "rrf", "weighted", "zscore")


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run_queries(
    backend: Any, queries: list[dict[str, Any]], mode: str, depth: int
) -> tuple[dict, list[float]]:
    run: dict[str, list[tuple[str, float]]] = {}
    latencies = []
    for q in queries:
        t = time.perf_counter()
        result = backend.search(q["query"], top_k=depth, mode=mode)
        latencies.append((time.perf_counter() - t) * 1000)
        # scores decrease down the list; pass rank-derived scores so ties keep the engine's order
        run[q["qid"]] = [(h.arxiv_id, float(depth - i)) for i, h in enumerate(result.hits)]
    return run, latencies


def evaluate(queries: list[dict[str, Any]], run: dict, ks: tuple[int, ...]) -> dict[str, float]:
    qrels = {q["qid"]: {str(d): 1 for d in q["relevant"]} for q in queries}
    report = score_ranked(qrels, run, ks=ks, n_boot=200)
    return {name: agg.value for name, agg in report.aggregates.items() if agg.value is not None}


def measure(index_dir: Path, settings: Settings, configs: dict[str, Any]) -> list[dict[str, Any]]:
    gold = shared_dir() / "gold"
    topics = [q for f in TOPIC_FILES for q in load_jsonl(gold / f)]
    known = load_jsonl(gold / KNOWN_ITEM_FILE)
    opened = open_index(index_dir, settings)
    rows = []
    try:
        base = opened.backend
        encoder = (opened.manifest.get("embedding") or {}).get("model", "none")
        base.search("warm up the encoder and the numba kernels", top_k=10)
        for name, (mode, changes, weights) in configs.items():
            if mode in DENSE_MODES and "dense_papers" not in base.sides:
                continue
            backend = base.tuned(side_weights=weights, **changes) if (changes or weights) else base
            try:
                trun, tlat = run_queries(backend, topics, mode, 100)
            except ValueError as exc:  # e.g. dense mode on an index built without vectors
                print(f"skip {name}: {exc}")
                continue
            topic = evaluate(topics, trun, (10, 100))
            krun, klat = run_queries(backend, known, mode, 10)
            per_kind = {}
            for kind in ("exact", "keywords"):
                subset = [q for q in known if q["kind"] == kind]
                per_kind[kind] = evaluate(subset, {q["qid"]: krun[q["qid"]] for q in subset}, (1, 10))
            lat = tlat + klat
            row = {
                "index": str(index_dir),
                "encoder": encoder,
                "config": name,
                "topic_recall@10": topic["recall@10"],
                "topic_recall@100": topic["recall@100"],
                "topic_ndcg@10": topic["ndcg@10"],
                "exact_mrr@10": per_kind["exact"]["mrr@10"],
                "exact_success@1": per_kind["exact"]["success@1"],
                "exact_success@10": per_kind["exact"]["success@10"],
                "kw_mrr@10": per_kind["keywords"]["mrr@10"],
                "kw_success@1": per_kind["keywords"]["success@1"],
                "kw_success@10": per_kind["keywords"]["success@10"],
                "p50_ms": statistics.median(lat),
                "p95_ms": sorted(lat)[int(0.95 * (len(lat) - 1))],
                "build_s": _build_seconds(opened.manifest),
            }
            rows.append(row)
            print(json.dumps(row))
    finally:
        opened.close()
    return rows


def _build_seconds(manifest: dict[str, Any]) -> float | None:
    seconds = (manifest.get("build") or {}).get("seconds")
    return None if seconds is None else float(seconds)


def _minutes(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds / 60:.1f}"


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| encoder | configuration | topic R@10 | topic R@100 | topic nDCG@10 | exact MRR@10 | exact S@1 | "
        "exact S@10 | keywords MRR@10 | keywords S@1 | keywords S@10 | p50 ms | p95 ms | index build min |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {r['encoder']} | {r['config']} | {r['topic_recall@10']:.3f} | {r['topic_recall@100']:.3f} | "
        f"{r['topic_ndcg@10']:.3f} | {r['exact_mrr@10']:.3f} | {r['exact_success@1']:.3f} | "
        f"{r['exact_success@10']:.3f} | {r['kw_mrr@10']:.3f} | {r['kw_success@1']:.3f} | "
        f"{r['kw_success@10']:.3f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | "
        f"{_minutes(r['build_s'])} |\n"
        for r in rows
    )
    return head + body


def plot(rows: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for r in rows:
        ax.scatter(r["p50_ms"], r["topic_recall@100"], s=40)
        ax.annotate(
            f"{r['config']}\n[{r['encoder']}]",
            (r["p50_ms"], r["topic_recall@100"]),
            fontsize=7,
            xytext=(4, 4),
            textcoords="offset points",
        )
    ax.set_xlabel("median query latency, ms (backend, one thread)")
    ax.set_ylabel("topic Recall@100 (103 dev queries)")
    ax.set_title("openxiv retrieval quality against latency")
    ax.grid(alpha=0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", action="append", type=Path, required=True, help="index root or snapshot")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args()
    settings = Settings.from_env()
    rows: list[dict[str, Any]] = []
    for index_dir in args.index:
        # BM25 rows do not depend on the encoder: keep them once (from the first index)
        done = {r["config"] for r in rows if r["config"].startswith("bm25")}
        rows += measure(index_dir, settings, {k: v for k, v in CONFIGS.items() if k not in done})
    text = table(rows)
    print(text)
    if args.no_write:
        return
    cmd = "HF_HUB_OFFLINE=1 .venv/bin/python scripts/bench_quality.py " + " ".join(
        f"--index {p}" for p in args.index
    )
    plot(rows, repo_root() / "docs" / "quality_vs_latency.png")
    write_section(
        "Retrieval quality",
        "Dev query sets from `../shared/gold`: 103 topic queries (labels incomplete, so recall is the headline) "
        "and 600 full-text known-item queries (300 `exact` sentences, 300 `keywords` bags). Latency is the "
        "backend alone, one query at a time; service overhead is in the service section.\n\n"
        + text
        + "\n![quality against latency](docs/quality_vs_latency.png)\n\nCommand: `"
        + cmd
        + "`\n",
    )


if __name__ == "__main__":
    main()
