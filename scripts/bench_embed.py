"""Embedding speed and dense-only topic recall for each encoder option.

``speed``: texts/s of each encoder on the same 1,000 real listing papers (title + abstract, the first
1,000 unique ids of ``listing-cs``) at several max-token settings, against raw
``SentenceTransformer.encode`` on the same texts, and the projected time to embed all papers of the
shared listings (88,917 lines) plus the 12,098 plain-text full texts at paper level.

``quality``: for each ``backend@max_tokens`` option whose projected time for the 74,728 cs listing
papers is under ``--budget-min`` minutes, embed them all through the shared `EmbeddingCache`, build
an exact `DenseIndex` and score dense-only search on the 103 dev topic queries (Recall@10,
Recall@100, mean over queries; labels are incomplete, so recall is the headline).

    .venv/bin/python scripts/bench_embed.py speed
    .venv/bin/python scripts/bench_embed.py quality onnx-int8@64 model2vec@256 \\
        --cache data/bench/embcache.sqlite --data-dir data/bench/dense-data

The defaults of ``--cache`` and ``--data-dir`` are those paths under the checkout's ``data/`` folder,
the ones ``bench_ann.py`` reads by default.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import cs_papers, load_gold
from harness.report import BENCH_DIR, write_section

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.building.embcache import EmbeddingCache, cache_keys, encode_cached
from openxiv.indexer.encoders.embed import BASE_MODEL, load_encoder, resolve_model_path
from openxiv.indexer.engine.dense import DenseIndex

ALL_PAPERS = 88_917 + 12_098  # listing lines + plain-text full texts (paper-level text each)
OPTIONS = {
    "torch": BASE_MODEL,
    "onnx-int8": f"onnx-int8:{BASE_MODEL}",
    "model2vec": f"model2vec:{BASE_MODEL}",
}


CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def rate(fn, texts: list[str]) -> tuple[float, float]:
    """``(wall texts/s, texts per CPU-second x cores)``. The second figure is what an otherwise idle
    machine would give if the encoder kept every core busy: on a shared machine wall time is
    inflated by other jobs, CPU time much less so."""
    fn(texts[:32])  # warm-up (allocations, lazy init)
    t, c = time.perf_counter(), time.process_time()
    fn(texts)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return len(texts) / wall, len(texts) / cpu * CORES


def cmd_speed(args: argparse.Namespace) -> None:
    from sentence_transformers import SentenceTransformer

    if args.render:
        render_speed(json.loads(Path(args.json).read_text()), args)
        return
    _, texts = cs_papers()
    texts = texts[: args.n]
    rows: list[tuple[str, int, float, float, float | None]] = []
    raw_model = SentenceTransformer(str(resolve_model_path(BASE_MODEL)), device="cpu")
    base = Settings.from_env().replace(data_dir=Path(args.data_dir))
    for mt in args.max_tokens:
        raw_model.max_seq_length = mt

        def raw(t: list[str]) -> object:
            return raw_model.encode(t, batch_size=64, normalize_embeddings=True)

        r_raw, c_raw = rate(raw, texts)
        rows.append(("raw SentenceTransformer.encode", mt, r_raw, c_raw, None))
        print(rows[-1], flush=True)
        for opt in args.options:
            enc = load_encoder(base, model=OPTIONS[opt], embed_max_tokens=mt)
            r, c = rate(enc.encode, texts)
            rows.append((f"openxiv {opt}", mt, r, c, r / r_raw))
            print(rows[-1], flush=True)
            del enc
    Path(args.json).write_text(json.dumps(rows, indent=1))
    render_speed(rows, args)


def render_speed(rows: list, args: argparse.Namespace) -> None:
    raw_cpu = {mt: c for name, mt, _, c, rel in rows if rel is None}
    lines = [
        f"{args.n} real papers (title + abstract, first unique ids of listing-cs), batch 64. Wall rates "
        "depend on the machine's load (given below); the idle estimate is texts per CPU-second x 2 cores, "
        "and `vs raw (CPU)` compares CPU time per text with raw `SentenceTransformer.encode` at the same "
        "length (the 90% target). The model2vec rows distil the model once, which needs `skeletoken` "
        "(model2vec's `distill` extra pins transformers below the version installed here, so it was "
        "installed on its own, without dependencies, on `PYTHONPATH`).",
        "",
        "| encoder | max tokens | texts/s wall | texts/s idle estimate | vs raw (CPU) "
        "| 101,015 paper texts, idle estimate | same, wall as measured |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, mt, r, c, _rel in rows:
        lines.append(
            f"| {name} | {mt} | {r:.1f} | {c:.1f} | {c / raw_cpu[mt]:.2f}x "
            f"| {ALL_PAPERS / c / 60:.1f} min | {ALL_PAPERS / r / 60:.1f} min |"
        )
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    lines += [
        "",
        f"Load average when written: {' '.join(load)} (2 cores). Command: "
        f"`.venv/bin/python scripts/bench_embed.py speed --n {args.n} --max-tokens "
        f"{' '.join(map(str, args.max_tokens))} --options {' '.join(args.options)}`",
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section("Embedding speed (dense encoders)", "\n".join(lines))


def recall_at(ranked: list[str], relevant: set[str], k: int) -> float:
    """|relevant ∩ ranked[:k]| / |relevant| (0 when nothing is relevant)."""
    return len(relevant.intersection(ranked[:k])) / len(relevant) if relevant else 0.0


def bm25_rankings(texts: list[str], queries: list[str], k: int) -> np.ndarray:
    """bm25s (k1=1.2, b=0.75, English stems, English stopwords) top-k rows per query."""
    import bm25s
    import Stemmer

    stem = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False), show_progress=False
    )
    qt = bm25s.tokenize(queries, stopwords="en", stemmer=stem, show_progress=False)
    rows, _ = retriever.retrieve(qt, k=min(k, len(texts)), show_progress=False, n_threads=1)
    return np.asarray(rows)


def rrf(a: np.ndarray, b: np.ndarray, k: int = 60) -> list[list[int]]:
    """Reciprocal rank fusion of two ranked id lists per query: score = sum 1 / (k + rank)."""
    out = []
    for ra, rb in zip(a, b, strict=True):
        score: dict[int, float] = {}
        for ranked in (ra, rb):
            for rank, doc in enumerate(ranked, start=1):
                if doc >= 0:
                    score[int(doc)] = score.get(int(doc), 0.0) + 1.0 / (k + rank)
        out.append(sorted(score, key=lambda d: (-score[d], d)))
    return out


def mean_recall(ranked: list, ids: list[str], gold: list[dict], k: int) -> float:
    return float(
        np.mean(
            [
                recall_at([ids[i] for i in r[:k]], set(g["relevant"]), k)
                for g, r in zip(gold, ranked, strict=True)
            ]
        )
    )


def cmd_quality(args: argparse.Namespace) -> None:
    ids, texts = cs_papers()
    gold = load_gold()
    corpus_note = f"the {len(texts):,} unique cs listing papers"
    if args.subset:
        relevant = {r for g in gold for r in g["relevant"]}
        rng = np.random.default_rng(0)
        others = [i for i, x in enumerate(ids) if x not in relevant]
        keep = sorted(
            {i for i, x in enumerate(ids) if x in relevant}
            | set(rng.choice(others, args.subset, replace=False).tolist())
        )
        ids, texts = [ids[i] for i in keep], [texts[i] for i in keep]
        corpus_note = (
            f"a REDUCED corpus of {len(texts):,} cs listing papers (every relevant paper + {args.subset:,} random "
            "others, seed 0; recall is higher than on the full corpus, compare rows with each other only)"
        )
    bm25_rows = bm25_rankings(texts, [g["query"] for g in gold], 1000)
    results: list[dict] = [
        {
            "option": "bm25 (bm25s, reference)",
            "R@10": round(mean_recall(list(bm25_rows), ids, gold, 10), 4),
            "R@100": round(mean_recall(list(bm25_rows), ids, gold, 100), 4),
            "embed_s": 0.0,
            "probe_rate": None,
            "probe_rate_idle": None,
            "search_ms": 0.0,
        }
    ]
    print(results[-1], flush=True)
    base = Settings.from_env().replace(data_dir=Path(args.data_dir))
    cache = EmbeddingCache(args.cache)
    for spec in args.options:
        opt, _, mt_s = spec.partition("@")
        mt = int(mt_s or 128)
        enc = load_encoder(base, model=OPTIONS[opt], embed_max_tokens=mt)
        # probe on texts this cache does not hold yet (a cached probe would project 0 minutes)
        held = cache.get_many(cache_keys(enc, texts))
        todo = [t for t, k in zip(texts, cache_keys(enc, texts), strict=True) if k not in held]
        sample = todo[:: max(1, len(todo) // args.probe)][: args.probe]
        t, c = time.perf_counter(), time.process_time()
        encode_cached(enc, sample, cache, progress=False)
        probe_s, probe_cpu = time.perf_counter() - t, time.process_time() - c
        # idle-machine projection from CPU time (other jobs share these cores; see `rate`)
        projected = len(todo) * probe_cpu / CORES / max(1, len(sample)) / 60
        print(
            f"{spec}: probe {len(sample)} texts in {probe_s:.1f}s wall, {probe_cpu:.1f}s CPU "
            f"-> projected {projected:.1f} min on an idle machine",
            flush=True,
        )
        if projected > args.budget_min:
            results.append(
                {"option": spec, "skipped": f"projected {projected:.0f} min (idle) > {args.budget_min}"}
            )
            continue
        t = time.perf_counter()
        vecs = encode_cached(enc, texts, cache, progress=True)
        embed_s = time.perf_counter() - t
        index = DenseIndex.build(vecs, ann_threshold=10**9)
        qv = np.stack([enc.encode_query(g["query"]) for g in gold])
        t = time.perf_counter()
        _, rows = index.search(qv, 100)
        search_ms = (time.perf_counter() - t) * 1000 / len(gold)
        r10 = mean_recall(list(rows), ids, gold, 10)
        r100 = mean_recall(list(rows), ids, gold, 100)
        _, rows1000 = index.search(qv, 1000)
        fused = rrf(bm25_rows, rows1000)
        res = {
            "option": spec,
            "fingerprint": enc.fingerprint,
            "embed_s": round(embed_s, 1),
            "probe_rate": round(len(sample) / probe_s, 1) if probe_s else None,
            "probe_rate_idle": round(len(sample) * CORES / probe_cpu, 1) if probe_cpu else None,
            "R@10": round(r10, 4),
            "R@100": round(r100, 4),
            "search_ms": round(search_ms, 2),
            "RRF R@10": round(mean_recall(fused, ids, gold, 10), 4),
            "RRF R@100": round(mean_recall(fused, ids, gold, 100), 4),
        }
        results.append(res)
        print(res, flush=True)
        Path(args.json).write_text(json.dumps(results, indent=1))
    cache.close()
    lines = [
        f"Dense-only search (exact IndexFlatIP) over {corpus_note} "
        f"(title + abstract), and RRF (k=60) of its top 1000 with bm25s's top 1000; {len(gold)} dev topic queries (`topic_queries_dev` + `topic_queries_more_dev`). "
        "Options projected to need more than "
        f"{args.budget_min} min for the 74k papers on this machine are skipped.",
        "",
        "| encoder@max tokens | Recall@10 | Recall@100 | RRF+BM25 R@10 | RRF+BM25 R@100 | embed s (wall) "
        "| probe texts/s wall | probe texts/s idle estimate | ms/query (search) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if "skipped" in r:
            lines.append(f"| {r['option']} | skipped: {r['skipped']} | | | | | | | |")
        else:
            lines.append(
                f"| {r['option']} | {r['R@10']:.3f} | {r['R@100']:.3f} | {r.get('RRF R@10', '—')} "
                f"| {r.get('RRF R@100', '—')} | {r['embed_s']:.0f} | "
                f"{r['probe_rate']} | {r['probe_rate_idle']} | {r['search_ms']:.1f} |"
            )
    lines += [
        "",
        "Embed time is 0 when the vectors came from the cache of an earlier run. Command: "
        f"`.venv/bin/python scripts/bench_embed.py quality {' '.join(args.options)} --cache {args.cache}"
        + (f" --subset {args.subset}" if args.subset else "")
        + "`",
    ]
    print("\n".join(lines))
    if not args.no_write:
        title = (
            "Dense topic recall, reduced corpus" if args.subset else "Dense topic recall (encoder options)"
        )
        write_section(title, "\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("speed")
    sp.add_argument("--n", type=int, default=1000)
    sp.add_argument("--max-tokens", type=int, nargs="+", default=[32, 64, 128, 256])
    sp.add_argument("--options", nargs="+", default=list(OPTIONS), choices=list(OPTIONS))
    sp.add_argument("--json", default="/tmp/bench_embed_speed.json")
    sp.add_argument("--render", action="store_true", help="only rewrite the table from --json")
    q = sub.add_parser("quality")
    q.add_argument("options", nargs="+", help="backend@max_tokens, e.g. onnx-int8@64")
    q.add_argument(
        "--cache",
        default=str(BENCH_DIR / "embcache.sqlite"),
        help="embedding cache, reused across runs (default: data/bench/embcache.sqlite)",
    )
    q.add_argument("--budget-min", type=float, default=15.0)
    q.add_argument("--probe", type=int, default=600)
    q.add_argument("--subset", type=int, default=0, help="relevant papers + this many random others")
    q.add_argument("--json", default="/tmp/bench_embed_quality.json")
    for p in (sp, q):
        p.add_argument(
            "--data-dir",
            default=str(BENCH_DIR / "dense-data"),
            help="data dir of the encoders: ONNX exports and distilled models go under models/ "
            "(default: data/bench/dense-data)",
        )
        p.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = ap.parse_args()
    Path(args.data_dir).mkdir(parents=True, exist_ok=True)
    if args.cmd == "quality":
        Path(args.cache).parent.mkdir(parents=True, exist_ok=True)
    {"speed": cmd_speed, "quality": cmd_quality}[args.cmd](args)


if __name__ == "__main__":
    main()
