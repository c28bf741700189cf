"""Fine rerank (``use_fine_rerank``): quality with and without it on the dev sets, and its latency.

The first stage is the service's default ranking (``Settings.from_env()``) of ``--index``; the
reranked orders are the fine-rerank stage's (`openxiv.indexer.engine.rerank`, texts from
`openxiv.service.fine_rerank.hit_texts`) at each ``--depths`` value, with and without the evidence
passage of full-text hits. Every (query, text) pair is scored once (a pair's score does not depend
on its batch-mates), and each variant's order is derived from those scores.

- topic: Recall@10, Recall@100, nDCG@10 on ``topic_queries_dev`` + ``topic_queries_more_dev``;
- known items: MRR@10, success@1/@10 per kind on ``--known`` queries of ``fulltext_known_item_dev``
  (every n-th, both kinds), the first stage on the same queries beside;
- latency: the stage's own time (reading the texts + scoring) for the first N places, p50 / p95 over
  the topic queries, with the load average of the run (2 shared cores).

    .venv/bin/python scripts/bench_rerank.py --index data/index --depths 100 200 --known 120
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.evaluator.shared import SharedData
from openxiv.indexer.encoders.cross_encoder import resolve_reranker
from openxiv.indexer.snapshot import open_index
from openxiv.service.fine_rerank import hit_texts

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import KNOWN_ITEM_FILE, TOPIC_FILES, load_jsonl
from harness.quality import evaluate
from harness.report import load_average, write_section
from harness.timing import percentile

SECTION = "Fine rerank"


def scored(index: Any, reranker: Any, queries: list[dict[str, Any]], depth: int) -> list[dict[str, Any]]:
    """Per query: the first stage's ``depth`` hits, each hit's best score over its texts (with and
    without the passage), and the stage's time for the first 100 / 200 places."""
    texts_of = hit_texts(index, passages=True)
    out = []
    for n, q in enumerate(queries):
        hits = index.backend.search(q["query"], top_k=depth).hits
        row: dict[str, Any] = {"qid": q["qid"], "ids": [h.arxiv_id for h in hits], "ms": {}}
        ta, best = np.full(len(hits), -1e30), np.full(len(hits), -1e30)
        done = 0
        for cut in sorted({min(100, len(hits)), len(hits)}):
            t0 = time.perf_counter()
            texts = texts_of(hits[done:cut])
            flat = reranker.score(q["query"], [t for ts in texts for t in ts])
            row["ms"][cut] = (time.perf_counter() - t0) * 1000 + row["ms"].get(done, 0.0)
            k = 0
            for i, ts in enumerate(texts, start=done):
                ta[i] = flat[k]
                best[i] = max(flat[k : k + len(ts)])
                k += len(ts)
            done = cut
        row["ta"], row["best"] = ta, best
        out.append(row)
        if n % 20 == 0:
            print(f"  {n}/{len(queries)} scored", flush=True)
    return out


def order(row: dict[str, Any], depth: int | None, key: str) -> list[tuple[str, float]]:
    ids = row["ids"]
    head = list(range(len(ids)))
    if depth:
        s = row[key][:depth]
        head = [int(i) for i in np.argsort(-s, kind="stable")] + list(range(min(depth, len(ids)), len(ids)))
    return [(ids[i], float(len(ids) - r)) for r, i in enumerate(head)]


def variants(depths: list[int]) -> list[tuple[str, int | None, str]]:
    out: list[tuple[str, int | None, str]] = [("first stage (default ranking)", None, "ta")]
    for d in depths:
        out.append((f"rerank top {d} (title + abstract)", d, "ta"))
        out.append((f"rerank top {d} (+ passage of full-text hits)", d, "best"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--depths", type=int, nargs="+", default=[100, 200])
    ap.add_argument("--known", type=int, default=120, help="known-item queries (every n-th of 600)")
    ap.add_argument("--every", type=int, default=1, help="every n-th topic query (a shorter run)")
    ap.add_argument(
        "--reranker",
        default="shipped",
        help="what OPENXIV_RERANK would name: shipped (default here; the server's default is none), a directory or a server",
    )
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    settings = Settings.from_env()
    gold = SharedData.default().gold()
    topics = [q for f in TOPIC_FILES for q in load_jsonl(gold / f)]
    topics = topics[:: args.every]
    known_all = load_jsonl(gold / KNOWN_ITEM_FILE)
    step = max(1, len(known_all) // args.known)  # lines come in pairs (exact, keywords) per paper
    known = [q for i, q in enumerate(known_all) if (i // 2) % (step // 2 or 1) == 0][: args.known]
    reranker = resolve_reranker(args.reranker)
    assert reranker is not None, "--reranker none: nothing to measure"
    load0 = load_average()
    with open_index(args.index, settings) as index:
        index.backend.search("warm up the encoder", top_k=10)
        reranker.score("warm up", ["the cross-encoder"])
        print(f"topic queries: {len(topics)}", flush=True)
        trows = scored(index, reranker, topics, max(args.depths))
        print(f"known items: {len(known)}", flush=True)
        krows = scored(index, reranker, known, 100)
    load1 = load_average()
    lines = [
        "| ranking | topic R@10 | topic R@100 | topic nDCG@10 | exact MRR@10 | exact S@1 | exact S@10 "
        "| kw MRR@10 | kw S@1 | kw S@10 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, depth, key in variants(args.depths):
        t = evaluate(topics, {r["qid"]: order(r, depth, key) for r in trows}, (10, 100))
        kd = min(depth, 100) if depth else None
        cells = [f"{t['recall@10']:.3f}", f"{t['recall@100']:.3f}", f"{t['ndcg@10']:.3f}"]
        for kind in ("exact", "keywords"):
            sub = [q for q in known if q["kind"] == kind]
            by = {r["qid"]: order(r, kd, key)[:10] for r in krows if r["qid"] in {q["qid"] for q in sub}}
            m = evaluate(sub, by, (1, 10)) if sub else {}
            cells += [f"{m.get(k, float('nan')):.3f}" for k in ("mrr@10", "success@1", "success@10")]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lat = ["", "| stage | places | p50 ms | p95 ms |", "|---|---:|---:|---:|"]
    for cut in sorted({c for r in trows for c in r["ms"]}):
        ms = [r["ms"][cut] for r in trows if cut in r["ms"]]
        lat.append(
            f"| rerank (texts + cross-encoder) | {cut} | {percentile(ms, 50):.0f} | {percentile(ms, 95):.0f} |"
        )
    body = "\n".join(
        [
            "Written by `scripts/bench_rerank.py --index data/index --depths "
            + " ".join(map(str, args.depths))
            + f" --known {args.known} --every {args.every}` on the whole shared corpus; cross-encoder `{reranker.name}` "
            f"(`{reranker.fingerprint}`). Topic: {len(topics)} dev queries; known items: {len(known)} of "
            f"{len(known_all)} dev queries (both kinds of every {step // 2 or 1}th paper); topic queries: every "
            f"{args.every}th of the {len(TOPIC_FILES)} dev files' queries.",
            "",
            *lines,
            *lat,
            "",
            f"Load average (1 / 5 / 15 min) at the start {load0}, at the end {load1}, on 2 cores shared "
            "with other work; threads: onnxruntime's default for the process (`OMP_NUM_THREADS` "
            f"{os.environ.get('OMP_NUM_THREADS', 'unset')}).",
        ]
    )
    print(body)
    if not args.no_write:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
