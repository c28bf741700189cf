"""Lucene beside openxiv in one sitting (issue 42, item 4): the same papers' titles and abstracts
indexed by Lucene (Anserini through Pyserini, its own venv: ``make pyserini-venv``), Lucene BM25
against openxiv's ``bm25_papers`` and its default mode on the dev query sets.

    .venv/bin/python scripts/bench_lucene.py --db data/corpus.sqlite --index data/index

Steps, all in this one run: export the corpus SQLite (read-only) as a Pyserini JsonCollection under
``--work``; index it with Lucene (timed); open openxiv's snapshot in process; warm both on the topic
queries; then, one query at a time, the topic queries (top 100: Recall@10/@100, nDCG@10) and the
full-text known-item queries (top 10: MRR@10, success@1/@10 per kind) through openxiv's
``bm25_papers``, its default mode and Lucene BM25 with Anserini's k1/b and with openxiv's, scored by
the harness of `bench_quality.py` (so the rows compare with BENCHMARKS «Retrieval quality»); last,
the same queries at top 10 from 1 and from 8 concurrent clients (openxiv: threads over one in-process
engine; Lucene: Anserini's ``batch_search`` over that many Java threads). Lucene's milliseconds are
measured inside its process around the Java call, the JSON pipe excluded. Writes the section
``## Scale: Lucene side by side`` of BENCHMARKS.md (beside «Scale», which `bench_scale.py` rewrites whole).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from harness.data import KNOWN_ITEM_FILE, TOPIC_FILES, SharedData, load_jsonl
from harness.lucene import LUCENE_DEFAULT, Lucene
from harness.quality import Run, evaluate, run_queries
from harness.report import load_average, write_section
from harness.timing import percentile

from openxiv.corpus.settings.model import Settings, repo_root
from openxiv.indexer.backend import SearchBackend
from openxiv.indexer.snapshot import open_index

SECTION = "Scale: Lucene side by side"
CLIENTS = 8
WARM_PASSES = 6
"""Untimed passes of every query through Lucene before it is measured (JIT warm-up)."""


def quality(
    topics: list[dict[str, Any]], known: list[dict[str, Any]], trun: Run, krun: Run
) -> dict[str, float]:
    """The columns of «Retrieval quality» (`bench_quality.measure`) from a topic and a known-item run."""
    topic = evaluate(topics, trun, (10, 100))
    row = {f"topic_{k}": topic[k] for k in ("recall@10", "recall@100", "ndcg@10")}
    for kind, prefix in (("exact", "exact"), ("keywords", "kw")):
        subset = [q for q in known if q["kind"] == kind]
        got = evaluate(subset, {q["qid"]: krun[q["qid"]] for q in subset}, (1, 10))
        row |= {f"{prefix}_{m}": got[m] for m in ("mrr@10", "success@1", "success@10")}
    return row


def lucene_run(lucene: Lucene, queries: list[dict[str, Any]], depth: int) -> tuple[Run, list[float]]:
    run: Run = {}
    ms = []
    for q in queries:
        hits, t = lucene.search(q["query"], depth)
        ms.append(t)
        run[q["qid"]] = [(d, float(depth - i)) for i, (d, _) in enumerate(hits)]  # ranks, as run_queries
    return run, ms


def openxiv_clients(backend: SearchBackend, queries: list[str], clients: int) -> tuple[float, list[float]]:
    """Queries per second of ``clients`` threads sharing one in-process engine (bm25_papers, top 10),
    and each query's milliseconds."""

    def one(q: str) -> float:
        t = time.perf_counter()
        backend.search(q, top_k=10, mode="bm25_papers")
        return (time.perf_counter() - t) * 1000

    t = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        ms = list(pool.map(one, queries))
    return len(queries) / (time.perf_counter() - t), ms


def measure(args: argparse.Namespace) -> dict[str, Any]:
    gold = SharedData.default().gold()
    topics = [q for f in TOPIC_FILES for q in load_jsonl(gold / f)]
    known = load_jsonl(gold / KNOWN_ITEM_FILE)
    texts = [q["query"] for q in topics + known]
    out: dict[str, Any] = {"load_start": load_average(), "rows": []}
    from harness.lucene import export_collection

    t = time.perf_counter()
    out["papers"] = export_collection(args.db, args.work / "collection")
    out["export_s"] = time.perf_counter() - t
    with Lucene(heap=args.heap) as lucene:
        built = lucene.index(args.work / "collection", args.work / "index", threads=args.index_threads)
        out["lucene_index_s"], out["lucene_docs"] = built["seconds"], built["docs"]
        out["lucene_index_mib"] = sum(p.stat().st_size for p in (args.work / "index").rglob("*")) / 2**20
        out["load_indexed"] = load_average()
        settings = Settings.from_env()
        opened = open_index(args.index, settings)
        try:
            base = opened.backend
            papers = base.tuned(side_weights={}, prf_docs=0, prior_docs=0, kind_ratio=0.0)  # as bench_quality
            # warm both: openxiv's numba kernels compile on the first query, the JVM's JIT needs passes
            # (the throughput of each pass is kept, to show when it levels off)
            run_queries(papers, topics + known, "bm25_papers", 100)
            run_queries(base, topics[:10], None, 10)
            out["warm_qps"] = [
                len(texts) / (lucene.batch(texts, 100, 1)[1] / 1000) for _ in range(WARM_PASSES)
            ]
            lucene_run(lucene, topics + known, 100)
            for name, backend, mode in (
                ("openxiv bm25_papers", papers, "bm25_papers"),
                ("openxiv default mode", base, None),
            ):
                trun, tlat = run_queries(backend, topics, mode, 100)
                krun, klat = run_queries(backend, known, mode, 10)
                k1b = (settings.bm25_k1, settings.bm25_b)
                out["rows"].append(
                    {"config": name, "k1b": k1b, **quality(topics, known, trun, krun), "ms": tlat + klat}
                )
            for label, (k1, b) in (("Lucene BM25, Anserini defaults", LUCENE_DEFAULT),
                                   ("Lucene BM25, openxiv's k1/b", (settings.bm25_k1, settings.bm25_b))):  # fmt: skip
                lucene.bm25(k1, b)
                trun, tlat = lucene_run(lucene, topics, 100)
                krun, klat = lucene_run(lucene, known, 10)
                out["rows"].append(
                    {"config": label, "k1b": (k1, b), **quality(topics, known, trun, krun), "ms": tlat + klat}
                )
            out["load_quality"] = load_average()
            # throughput at top 10: 1 and CLIENTS clients, openxiv bm25_papers then Lucene (its defaults)
            lucene.bm25(*LUCENE_DEFAULT)
            for clients in (1, CLIENTS):
                qps, ms = openxiv_clients(papers, texts, clients)
                out[f"openxiv_qps_{clients}"], out[f"openxiv_p50_{clients}"] = qps, percentile(ms, 50)
                _, wall = lucene.batch(texts, 10, clients)
                out[f"lucene_qps_{clients}"] = len(texts) / (wall / 1000)
        finally:
            opened.close()
    out["load_end"] = load_average()
    return out


def render(m: dict[str, Any], cmd: str) -> str:
    head = (
        "| engine, configuration | k1 / b | topic R@10 | topic R@100 | topic nDCG@10 | exact MRR@10 | exact S@1 "
        "| exact S@10 | keywords MRR@10 | keywords S@1 | keywords S@10 | p50 ms | p95 ms |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    cols = ("topic_recall@10", "topic_recall@100", "topic_ndcg@10", "exact_mrr@10", "exact_success@1",
            "exact_success@10", "kw_mrr@10", "kw_success@1", "kw_success@10")  # fmt: skip
    lines = [
        f"| {r['config']} | {r['k1b'][0]:g} / {r['k1b'][1]:g} | "
        + " | ".join(f"{r[c]:.3f}" for c in cols)
        + f" | {percentile(r['ms'], 50):.1f} | {percentile(r['ms'], 95):.1f} |"
        for r in m["rows"]
    ]
    ox, lu = m["rows"][0], m["rows"][2]
    best_lucene = max(m["rows"][2:], key=lambda r: r["topic_recall@100"])
    faster = percentile(ox["ms"], 50) <= percentile(lu["ms"], 50)
    busier = m[f"openxiv_qps_{CLIENTS}"] >= m[f"lucene_qps_{CLIENTS}"]
    recall = ox["topic_recall@100"] >= best_lucene["topic_recall@100"] - 1e-9
    verdict = (
        f"Goal (openxiv's BM25 at least as fast as Lucene's per query on the same machine, with equal or better "
        f"recall): per query one at a time {'met' if faster else 'NOT met'} (p50 {percentile(ox['ms'], 50):.1f} ms "
        f"against {percentile(lu['ms'], 50):.1f} ms); with {CLIENTS} clients {'met' if busier else 'NOT met'} "
        f"({m[f'openxiv_qps_{CLIENTS}']:.0f} against {m[f'lucene_qps_{CLIENTS}']:.0f} queries/s); topic R@100 "
        f"{'equal or better' if recall else 'LOWER'} ({ox['topic_recall@100']:.3f} against "
        f"{best_lucene['topic_recall@100']:.3f}, Lucene's best row)."
    )
    return (
        f"Issue 42, item 4. {m['papers']:,} papers (title + abstract, the text of openxiv's `bm25_papers`), "
        "exported from the corpus SQLite as a Pyserini JsonCollection and indexed by Lucene: Pyserini 0.22.1 "
        "(Anserini 0.22.1 fatjar, Lucene 9) on Debian's OpenJDK 17, in its own venv (`make pyserini-venv`), "
        "driven over a JSON-lines pipe (`scripts/harness/lucene_worker.py`) so openxiv never imports it. "
        "Lucene analyses with Anserini's default English analyzer (Porter stemmer, stopwords); openxiv with "
        "its own tokenizer (regex, English stopwords, Snowball stemmer). Dev query sets as in «Retrieval "
        "quality» (103 topic queries at top 100, 600 full-text known-item queries at top 10: a papers-only "
        "index finds few of those, for either engine). Latency: one query at a time on one thread, topic and "
        "known-item queries together; openxiv in process (`SearchBackend.search`), Lucene inside its JVM "
        "around the Java call (pipe excluded; Anserini's `SimpleSearcher`, which Pyserini's `LuceneSearcher` "
        "wraps: a bag-of-words query, hits sorted by score then document id, each hit's arXiv id read from "
        f"Lucene's stored fields). Both engines warmed first: openxiv by one pass of every query, Lucene by "
        f"{WARM_PASSES} one-thread batch passes at top 100 and one pass one at a time (its JIT needs them: "
        f"queries/s of those passes {' -> '.join(f'{q:.0f}' for q in m['warm_qps'])}).\n\n"
        f"Export {m['export_s']:.1f} s; Lucene index build {m['lucene_index_s']:.1f} s "
        f"({m['lucene_docs']:,} documents, {m['lucene_index_mib']:.0f} MiB; load average {m['load_indexed']} after); "
        "openxiv's `bm25_papers` stage of the same papers is in «Index build» (`index: bm25_papers`).\n\n"
        + head
        + "\n".join(lines)
        + "\n\nThroughput, the same 703 queries at top 10 (openxiv `bm25_papers`: threads over one in-process "
        "engine; Lucene with its defaults: Anserini `batch_search` over as many Java threads), 2 cores:\n\n"
        "| clients | openxiv queries/s | openxiv p50 ms | Lucene queries/s |\n|---:|---:|---:|---:|\n"
        + "\n".join(
            f"| {c} | {m[f'openxiv_qps_{c}']:.1f} | {m[f'openxiv_p50_{c}']:.1f} | {m[f'lucene_qps_{c}']:.1f} |"
            for c in (1, CLIENTS)
        )
        + f"\n\n{verdict}\n\nNot run: the 1M synthetic corpus (issue 42 asks for it when Lucene indexes it within "
        "the session; building that corpus alone, `bench_scale.py --papers 1000000`, takes longer than the "
        "session had left: its 250k run took ~40 min here). "
        f"Command: `{cmd}` (load average 1/5/15 min: {m['load_start']} at the start, {m['load_quality']} after "
        f"the quality runs, {m['load_end']} at the end; the machine's 2 cores were shared with other work).\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--db", type=Path, default=Path("data/corpus.sqlite"), help="corpus SQLite (read only)"
    )
    parser.add_argument(
        "--index", type=Path, default=Path("data/index"), help="openxiv index root or snapshot"
    )
    parser.add_argument(
        "--work", type=Path, default=repo_root() / "data" / "lucene", help="export and Lucene index"
    )
    parser.add_argument("--index-threads", type=int, default=2, help="Anserini indexing threads")
    parser.add_argument("--heap", default="2g", help="the JVM's -Xmx")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    parser.add_argument("--json", type=Path, help="also write the measurements to this JSON file")
    parser.add_argument(
        "--rerender", type=Path, help="render the --json file of an earlier run, measure nothing"
    )
    args = parser.parse_args()
    m = json.loads(args.rerender.read_text(encoding="utf-8")) if args.rerender else measure(args)
    if args.json:
        args.json.write_text(json.dumps(m) + "\n", encoding="utf-8")
    cmd = f"nice -n 5 .venv/bin/python scripts/bench_lucene.py --db {args.db} --index {args.index}"
    text = render(m, cmd)
    print(text)
    if not args.no_write:
        write_section(SECTION, text, after="Scale")


if __name__ == "__main__":
    main()
