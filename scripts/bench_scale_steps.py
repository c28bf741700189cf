"""The scale measurements of issue 24 as resumable steps: each writes ``WORK/results/<step>.json`` and
is skipped when that file exists (``--force`` reruns it), so a run of hours can stop and go on.

    S=data/scratch/scale
    nice -n 10 .venv/bin/python scripts/bench_scale_steps.py corpus --papers 250000 --work $S/s250k
    nice -n 10 .venv/bin/python scripts/bench_scale_steps.py build --papers 250000 --work $S/s250k --tag new
    nice -n 10 .venv/bin/python scripts/bench_scale_steps.py build --papers 250000 --work $S/s250k --tag old \\
        --python ../main-before/.venv/bin/python     # the same build with another checkout's code
    nice -n 10 .venv/bin/python scripts/bench_scale_steps.py serve --papers 250000 --work $S/s250k --tag new
    .venv/bin/python scripts/bench_scale_steps.py render --work $S/s100k $S/s250k   # prints the tables

- ``corpus``: the synthetic corpus of ``scripts/bench_scale.py`` (real titles, abstracts, authors,
  categories recombined under new ids, ``--fulltext-share`` of the papers with a real full text) and
  its synthetic paper vectors (a real cached vector plus noise) in ``WORK/embcache.sqlite``: ingest
  time, peak RSS, database size.
- ``oai``: the same recombined records (metadata only) as a ``--papers``-line OAI/Kaggle metadata
  snapshot file, ``openxiv ingest`` of it into a fresh database and again into the same one (a
  re-ingest must store nothing new): wall time, rate, peak RSS, database size.
- ``dense``: the dense index by size (exact fp16, HNSW M=32, IVF + SQ8, IVF + fp16, IVF flat, IVF + PQ48) over ``--papers``
  paper vectors (the build step's own when it made an HNSW snapshot of that size, else synthetic): build time,
  peak RSS, bytes, top-100 latency (one thread), recall@100 vs exact.
- ``build``: ``build_index_report`` run in a child process of ``--python`` (this checkout's code, or
  another's to compare), under ``/usr/bin/time`` for the child's peak RSS (``%M``), into
  ``WORK/index-<tag>``: wall time, stages, sizes per part.
- ``redense``: ``index-TAG``, a hard-linked copy of ``index-new`` with its dense paper index made
  again as the build makes it today (``OPENXIV_ANN_INDEX``) from the build's HNSW vectors: another
  dense kind served without building the rest again.
- ``terms``: feedback's copy of the BM25 matrix by rows written into ``index-TAG`` when it was built
  before builds wrote it (`openxiv.indexer.engine.doc_terms`): time, peak RSS, bytes.
- ``serve``: the ``new`` (or ``--tag``) snapshot opened in process: open time, p50/p95 per mode on the 103 dev topic
  queries, hybrid (rrf) with the dense side's unfiltered deep list (``OPENXIV_HNSW_DEEP``, default)
  and with the old masked walk (``--deep 0`` rows), filtered rrf; then ``openxiv serve --workers 1``
  RSS/PSS.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.scale_render import render
from harness.timing import PeakRSS

MIB = 2**20
MODES = ("bm25_papers", "dense_papers", "bm25", "dense", "rrf", "weighted")

_BUILD = """
import json, sys, time
from pathlib import Path
from openxiv.corpus.settings.model import Settings
from openxiv.indexer.building.job import build_index_report
from openxiv.indexer.encoders.embed import load_snapshot_encoder

db, root, cache, enc_dir, work = (Path(a) for a in sys.argv[1:6])
encoder = load_snapshot_encoder(enc_dir)
settings = Settings.from_env().replace(data_dir=work, embed="papers")
t = time.perf_counter()
r = build_index_report(db, root, settings, progress=False, encoder=encoder, cache_path=cache, keep=1)
print("RESULT " + json.dumps({"seconds": time.perf_counter() - t, "stages": r.stages,
      "sizes": r.manifest.sizes_bytes, "counts": r.manifest.counts.model_dump()}, default=str))
"""


def _out(work: Path, step: str) -> Path:
    return work / "results" / f"{step}.json"


def _save(work: Path, step: str, res: dict[str, Any]) -> None:
    path = _out(work, step)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1, default=str))
    print(step, json.dumps(res, default=str), flush=True)


def _encoder_dir(source_index: Path) -> Path:
    if source_index.name == "CURRENT" and source_index.is_file():
        source_index = source_index.parent / "snapshots" / source_index.read_text().strip()
    return source_index.resolve() / "encoder"


def step_corpus(args: argparse.Namespace) -> dict[str, Any]:
    from harness.scale import Source, fill_cache, real_vectors

    from openxiv.corpus.store import Store
    from openxiv.indexer.encoders.embed import load_snapshot_encoder

    work: Path = args.work
    db, cache = work / "corpus.sqlite", work / "embcache.sqlite"
    encoder = load_snapshot_encoder(_encoder_dir(args.source_index))
    assert encoder is not None, f"no encoder in {args.source_index}"
    real = real_vectors(args.cache, encoder.fingerprint, 50_000)  # read first: a wrong path fails now
    res: dict[str, Any] = {
        "papers": args.papers,
        "fulltext_share": args.fulltext_share,
        "loadavg": os.getloadavg(),
    }
    ingested = _out(work, "corpus-ingest")  # the ingest is hours at 2.7M: kept when the fill fails
    if ingested.exists() and db.exists() and not args.force:
        res["ingest"] = json.loads(ingested.read_text(encoding="utf-8"))
    else:
        ingested.unlink(missing_ok=True)
        for p in (db, cache):
            for q in (p, Path(f"{p}-wal"), Path(f"{p}-shm")):
                q.unlink(missing_ok=True)
        source = Source(args.source, args.fulltexts)
        t = time.perf_counter()
        with PeakRSS() as rss, Store(db) as store:
            summary = store.ingest(source.records(args.papers, args.fulltext_share, args.seed))
        seconds = time.perf_counter() - t
        res["ingest"] = {"seconds": seconds, "papers_per_s": summary.read / seconds,
                         "peak_rss_mib": rss.peak / MIB, "db_bytes": db.stat().st_size}  # fmt: skip
        _save(work, "corpus-ingest", res["ingest"])
        del source
    for q in (cache, Path(f"{cache}-wal"), Path(f"{cache}-shm")):
        q.unlink(missing_ok=True)
    t = time.perf_counter()
    res["cache_fill"] = {
        "vectors": fill_cache(db, cache, encoder, real, args.seed),
        "seconds": time.perf_counter() - t,
    }
    with Store.open_readonly(db) as store:
        res["corpus"] = store.stats()
    return res


def write_oai(args: argparse.Namespace, path: Path) -> int:
    """``--papers`` lines of the OAI/Kaggle metadata snapshot format, from `harness.scale.Source`'s
    recombined real records (no full texts: the snapshot holds metadata only)."""
    from harness.scale import Source

    source = Source(args.source, 1)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for r in source.records(args.papers, 0.0, args.seed):
            assert r.published is not None
            created = r.published.strftime("%a, %d %b %Y 00:00:00 GMT")
            parsed = [[a.split()[-1], " ".join(a.split()[:-1]), ""] for a in r.authors if a.split()]
            obj = {"id": r.arxiv_id, "submitter": r.authors[0] if r.authors else None,
                   "authors": ", ".join(r.authors), "title": r.title, "comments": None, "journal-ref": None,
                   "doi": None, "report-no": None, "categories": " ".join(r.categories), "license": None,
                   "abstract": r.abstract, "versions": [{"version": "v1", "created": created}],
                   "update_date": r.published.isoformat(), "authors_parsed": parsed}  # fmt: skip
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
            n += 1
    return n


def _timed(cmd: list[str]) -> dict[str, Any]:
    """``cmd`` under ``/usr/bin/time``: wall seconds, peak RSS, exit code, the tail of its output."""
    t, load0 = time.perf_counter(), os.getloadavg()
    p = subprocess.run(
        ["/usr/bin/time", "-f", "MAXRSS_KB %M", *cmd], capture_output=True, text=True, check=False
    )
    kb = [ln for ln in p.stderr.splitlines() if ln.startswith("MAXRSS_KB ")]
    return {"seconds": time.perf_counter() - t, "returncode": p.returncode, "loadavg_start": load0,
            "peak_rss_mib": int(kb[-1].split()[1]) / 1024 if kb else None,
            "stderr_tail": p.stderr[-1500:], "stdout_tail": p.stdout[-1500:]}  # fmt: skip


def step_oai(args: argparse.Namespace) -> dict[str, Any]:
    """The metadata snapshot at scale: write the file (once), ``openxiv ingest`` it into a new
    database, then again into the same one (must change nothing)."""
    work: Path = args.work
    path, db = work / "arxiv-metadata-oai-snapshot.json", work / "oai.sqlite"
    res: dict[str, Any] = {"papers": args.papers, "ingest_workers": args.ingest_workers}
    if not path.exists():
        t = time.perf_counter()
        res["lines"] = write_oai(args, path)
        res["write_s"] = time.perf_counter() - t
    res["file_bytes"] = path.stat().st_size
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        p.unlink(missing_ok=True)
    openxiv = str(Path(args.python).with_name("openxiv"))
    for name in ("ingest", "reingest"):
        split = ["--ingest-workers", str(args.ingest_workers)] if args.ingest_workers > 1 else []
        res[name] = _timed([openxiv, "ingest", "--db", str(db), *split, str(path)])
        res[name]["db_bytes"] = db.stat().st_size
        res[name]["papers_per_s"] = args.papers / res[name]["seconds"]
    return res


def _faiss_variant(name: str, vecs: Any) -> Any:
    """A new FAISS index of kind ``name`` over ``vecs`` (trained and filled)."""
    import faiss
    import numpy as np

    n, dim = vecs.shape
    index: Any  # the FAISS kinds differ in their knobs (hnsw, nprobe, by_residual)
    if name == "exact fp16":
        index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
    elif name == "hnsw M=32":
        index = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction, index.hnsw.efSearch = 200, 256
    else:  # "ivf,sq8" / "ivf,fp16" / "ivf,flat" / "ivf,pq48": nlist ~ 4 sqrt(n), probed 1/32 of the lists
        nlist = int(4 * np.sqrt(n))
        codes = {"sq8": "SQ8", "fp16": "SQfp16", "flat": "Flat", "pq48": "PQ48"}  # FAISS factory spellings
        index = faiss.index_factory(
            dim, f"IVF{nlist},{codes[name.split(',')[1]]}", faiss.METRIC_INNER_PRODUCT
        )
        index.nprobe = max(1, nlist // 32)
        if name == "ivf,fp16":  # the engine's IVF: float16 of each vector, not of its residual
            index.by_residual = False
    if not index.is_trained:
        index.train(vecs[np.random.default_rng(0).choice(n, min(n, 100_000), replace=False)])
    for start in range(0, n, 100_000):
        index.add(vecs[start : start + 100_000])
    return index


def _dense_variant(name: str, vecs: Any, qvecs: Any, truth: Any, built: Any = None) -> dict[str, Any]:
    """One FAISS index over ``vecs``: build time, peak RSS while built, bytes, top-100 latency one
    query at a time on one thread, recall@100 against ``truth`` (the exact answer). ``built``: the
    snapshot's own index of this kind (its build time is the build step's, not measured here)."""
    import faiss
    import numpy as np
    from harness.timing import pcts

    row: dict[str, Any] = {}
    if built is None:
        t = time.perf_counter()
        with PeakRSS() as rss:
            index = _faiss_variant(name, vecs)
        row.update(build_s=time.perf_counter() - t, peak_rss_mib=rss.peak / MIB)
        row["bytes"] = int(faiss.serialize_index(index).size)
    else:
        index, snapshot_file = built
        row["from_snapshot"] = str(snapshot_file)
        row["bytes"] = int(snapshot_file.stat().st_size)
    faiss.omp_set_num_threads(1)
    ms, found = [], []
    for q in qvecs:
        t = time.perf_counter()
        _, ids = index.search(q[None, :], 100)
        ms.append((time.perf_counter() - t) * 1000)
        found.append(ids[0])
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    row.update(pcts(ms))
    if truth is not None:
        row["recall100_vs_exact"] = float(
            np.mean([len(set(a) & set(b)) / 100 for a, b in zip(found, truth, strict=True)])
        )
    return {**row, "_ids": [f.tolist() for f in found]}


def _snapshot_hnsw(work: Path, papers: int) -> tuple[Any, Path] | None:
    """``WORK/index-new``'s dense paper index when it is an HNSW of ``papers`` vectors (the build
    step made it), loaded into memory, and its file; else None."""
    from openxiv.indexer.engine.dense import INDEX_FILE, DenseIndex

    current = work / "index-new" / "CURRENT"
    if not current.is_file():
        return None
    folder = current.parent / "snapshots" / current.read_text().strip() / "dense_papers"
    dense = DenseIndex.load(folder, mmap=False)
    if dense.kind != "hnsw" or dense.ntotal != papers:
        return None
    return dense.index, folder / INDEX_FILE


def _synthetic_vectors(args: argparse.Namespace, encoder: Any) -> Any:
    """``--papers`` vectors made as the corpus step makes them (a real cached vector plus noise)."""
    import numpy as np
    from harness.scale import real_vectors

    from openxiv.indexer.encoders.vectors import normalize_rows

    base = real_vectors(args.cache, encoder.fingerprint, 50_000)
    rng = np.random.default_rng(args.seed)
    vecs = np.empty((args.papers, base.shape[1]), dtype=np.float32)
    for start in range(0, args.papers, 100_000):
        m = min(100_000, args.papers - start)
        pick = base[rng.integers(0, len(base), m)]
        vecs[start : start + m] = normalize_rows(pick + rng.normal(0, 0.02, pick.shape).astype(np.float32))
    return vecs


def step_dense(args: argparse.Namespace) -> dict[str, Any]:
    """Item 3: exact fp16, HNSW and IVF variants of FAISS over ``--papers`` paper vectors and the 103
    topic queries. When the build step has made an HNSW snapshot of that size, its own vectors (read
    back from the HNSW storage, float32) are the ones measured and its index is the HNSW row (built
    once, by the build: its time is in the build's ``embed_papers`` stage); else synthetic vectors
    as the corpus step makes them. Each variant's row is kept in ``results/dense.partial.json`` as it
    finishes, so a stopped run goes on with the next variant."""
    import faiss
    import numpy as np
    from harness.data import topic_queries

    from openxiv.indexer.encoders.embed import load_snapshot_encoder

    encoder = load_snapshot_encoder(_encoder_dir(args.source_index))
    assert encoder is not None, f"no encoder in {args.source_index}"
    snap = _snapshot_hnsw(args.work, args.papers)
    if snap is not None:
        storage: Any = faiss.downcast_index(snap[0].storage)  # the flat store of the HNSW
        vecs = faiss.rev_swig_ptr(storage.get_xb(), snap[0].ntotal * snap[0].d).reshape(snap[0].ntotal, -1)
        vecs = np.array(vecs, dtype=np.float32)
    else:
        vecs = _synthetic_vectors(args, encoder)
    qvecs = np.stack([encoder.encode_query(q) for q in topic_queries()]).astype(np.float32)
    partial = _out(args.work, "dense.partial")
    partial.parent.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {"vectors": args.papers, "loadavg_start": os.getloadavg(), "variants": {},
                           "vectors_from": "snapshot" if snap is not None else "synthetic"}  # fmt: skip
    if partial.exists():
        res = json.loads(partial.read_text())
    truth = res.get("_truth")
    for name in ("exact fp16", "ivf,sq8", "ivf,fp16", "ivf,flat", "ivf,pq48", "hnsw M=32"):
        if name in res["variants"]:
            continue
        built = snap if name == "hnsw M=32" and snap is not None else None
        row = _dense_variant(name, vecs, qvecs, truth, built)
        ids = row.pop("_ids")
        if truth is None:
            truth = res["_truth"] = ids
        res["variants"][name] = row
        partial.write_text(json.dumps(res, default=str))
        print(name, json.dumps(row), flush=True)
    res.pop("_truth", None)
    res["loadavg_end"] = os.getloadavg()
    return res


def step_build(args: argparse.Namespace) -> dict[str, Any]:
    work: Path = args.work
    root = work / f"index-{args.tag}"
    cmd = ["/usr/bin/time", "-f", "MAXRSS_KB %M", args.python, "-c", _BUILD, str(work / "corpus.sqlite"),
           str(root), str(work / "embcache.sqlite"), str(_encoder_dir(args.source_index)), str(work)]  # fmt: skip
    load0 = os.getloadavg()
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"build failed ({p.returncode}):\n{p.stderr[-4000:]}")
    res = json.loads(next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT "))[7:])
    kb = next(ln for ln in p.stderr.splitlines() if ln.startswith("MAXRSS_KB "))
    res.update(tag=args.tag, python=args.python, peak_rss_mib=int(kb.split()[1]) / 1024,
               loadavg_start=load0, loadavg_end=os.getloadavg())  # fmt: skip
    return res


def step_redense(args: argparse.Namespace) -> dict[str, Any]:
    """``index-TAG``: a hard-linked copy of ``index-new`` whose dense paper index is made again, as the
    build makes it today (`OPENXIV_ANN_INDEX`, `fill_trained` for an IVF), from the vectors of the
    HNSW the build step made: serving with another dense kind measured without building the rest
    again. Files are replaced, never written through a link, so ``index-new`` stays as it was."""
    import faiss
    import numpy as np

    from openxiv.corpus.settings.model import Settings
    from openxiv.indexer import manifest as manifests
    from openxiv.indexer.building.embedded import fill_trained
    from openxiv.indexer.engine.dense import INDEX_FILE, META_FILE, DenseIndex, use_all_cores

    src, dst = args.work / "index-new", args.work / f"index-{args.tag}"
    if dst.exists():
        subprocess.run(["rm", "-rf", str(dst)], check=True)
    subprocess.run(["cp", "-al", str(src), str(dst)], check=True)
    snap = dst / "snapshots" / (dst / "CURRENT").read_text().strip()
    old = DenseIndex.load(snap / "dense_papers", mmap=False)
    storage: Any = faiss.downcast_index(old.index.storage)  # the flat store of the HNSW
    n, dim = old.ntotal, old.dim
    vecs = faiss.rev_swig_ptr(storage.get_xb(), n * dim).reshape(n, dim)
    settings = Settings.from_env()
    use_all_cores()
    t = time.perf_counter()
    with PeakRSS() as rss:
        index = DenseIndex.create(n, dim, settings.ann_threshold, ann=settings.ann_index)
        chunks = (np.array(vecs[i : i + 50_000]) for i in range(0, n, 50_000))
        fill_trained(index, chunks, n, args.work / ".redense.spill.npy")
    seconds = time.perf_counter() - t
    del old, storage, vecs
    for name in (INDEX_FILE, META_FILE):
        (snap / "dense_papers" / name).unlink()
    index.save(snap / "dense_papers")
    manifest = manifests.read(snap)
    manifest.embedding.dense_papers = index.info()
    size = sum(p.stat().st_size for p in (snap / "dense_papers").iterdir())
    total = manifest.sizes_bytes["total"] - manifest.sizes_bytes["dense_papers"] + size
    manifest.sizes_bytes = {**manifest.sizes_bytes, "dense_papers": size, "total": total}
    manifests.write(snap, manifest)  # a new file replaces the link (os.replace)
    return {"kind": index.kind, "params": index.params, "seconds": seconds, "peak_rss_mib": rss.peak / MIB,
            "bytes": size}  # fmt: skip


def step_terms(args: argparse.Namespace) -> dict[str, Any]:
    """Feedback's copy of the papers' BM25 matrix by rows (`write_doc_terms`, what a build writes
    since issue 24) added to ``index-TAG``'s live snapshot when it was built without it: time, peak
    RSS (the matrix memory-mapped, as the build holds it in memory), bytes."""
    from openxiv.indexer import layout
    from openxiv.indexer.engine.doc_terms import write_doc_terms
    from openxiv.indexer.engine.sparse import SparseIndex
    from openxiv.indexer.snapshot import resolve_snapshot

    directory = resolve_snapshot(args.work / f"index-{args.tag}") / layout.BM25_PAPERS
    t = time.perf_counter()
    with PeakRSS() as rss:
        written = write_doc_terms(SparseIndex.load(directory), directory)
    return {"seconds": time.perf_counter() - t, "peak_rss_mib": rss.peak / MIB, "bytes": written,
            "loadavg_end": os.getloadavg()}  # fmt: skip


def step_serve(args: argparse.Namespace) -> dict[str, Any]:
    from harness.data import topic_queries
    from harness.scale import serve_memory, time_queries
    from harness.timing import pcts

    from openxiv.corpus.settings.model import Settings
    from openxiv.indexer.backend import SearchFilters
    from openxiv.indexer.snapshot import open_index

    root = args.work / f"index-{args.tag}"
    queries = topic_queries()
    res: dict[str, Any] = {"loadavg_start": os.getloadavg(), "modes": {}, "deep0": {}, "filters": {}}
    settings = Settings.from_env()
    t = time.perf_counter()
    with PeakRSS() as rss, open_index(root, settings) as ix:
        res["open_s"] = time.perf_counter() - t
        for mode in MODES:
            if args.warm:  # every query once, untimed: the pages a steady server holds are in the cache
                time_queries(ix.backend, queries, mode)
            stages: list[dict[str, float]] = []
            res["modes"][mode] = pcts(time_queries(ix.backend, queries, mode, stages=stages))
            names = sorted({k for t in stages for k in t})
            res["modes"][mode]["stages_p50"] = {
                k: pcts([t.get(k, 0.0) for t in stages])["p50"] for k in names
            }
            print(mode, res["modes"][mode], flush=True)
        walk = ix.backend.tuned(hnsw_deep=0) if hasattr(ix.backend, "tuned") else None
        for mode in ("dense", "rrf") if walk is not None else ():
            assert walk is not None
            if args.warm:
                time_queries(walk, queries, mode)
            res["deep0"][mode] = pcts(time_queries(walk, queries, mode))
            print("deep0", mode, res["deep0"][mode], flush=True)
        for name, f in {"category cs.CL": SearchFilters(categories=("cs.CL",)),
                        "author Wang": SearchFilters(authors=("Wang",))}.items():  # fmt: skip
            if args.warm:
                time_queries(ix.backend, queries, "rrf", f)
            res["filters"][name] = pcts(time_queries(ix.backend, queries, "rrf", f))
    res["peak_rss_mib"] = rss.peak / MIB
    res["serve_workers_1"] = serve_memory(root, 1, queries[:40])
    res["clients_8"] = _throughput(root, queries * 4, clients=8, workers=2)
    print("8 clients", res["clients_8"], flush=True)
    res["loadavg_end"] = os.getloadavg()
    return res


def _throughput(root: Path, queries: list[str], clients: int, workers: int) -> dict[str, Any]:
    """``openxiv serve --workers N`` under ``clients`` closed-loop clients (`harness.load.phase`:
    one keep-alive connection each, POST /search top_k=10 with contents): requests/s, latency, CPU."""
    from harness.load import phase
    from harness.server import Server
    from harness.timing import pcts

    server = Server(root, workers=workers)
    try:
        out = phase(server.url, queries, clients, server)
    finally:
        server.stop()
    return {"workers": workers, "clients": clients, "requests": len(out["lat"]), "errors": len(out["errors"]), "error_samples": out["errors"][:5],
            "qps": out["qps"], "server_cpu_ms": out["cpu_ms"], **pcts(out["lat"])}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "step", choices=("corpus", "oai", "dense", "build", "redense", "terms", "serve", "render")
    )
    ap.add_argument("--work", type=Path, nargs="+", required=True)
    ap.add_argument("--papers", type=int, default=250_000)
    ap.add_argument("--tag", default="new", help="build/serve: which snapshot (index-TAG)")
    ap.add_argument(
        "--python", default=sys.executable, help="build: the interpreter (and so the code) to build with"
    )
    ap.add_argument("--source", type=Path, default=Path("data/corpus.sqlite"))
    ap.add_argument("--source-index", type=Path, default=Path("data/index/CURRENT"))
    ap.add_argument(
        "--cache", type=Path, default=Path("data/embcache.sqlite"), help="real vectors to recombine"
    )
    ap.add_argument("--fulltext-share", type=float, default=0.05)
    ap.add_argument("--fulltexts", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--force", action="store_true", help="rerun a step whose results exist")
    ap.add_argument(
        "--warm",
        action="store_true",
        help="serve: run each mode's queries once untimed before timing them (results: serve-TAG-warm)",
    )
    ap.add_argument(
        "--ingest-workers", type=int, default=1, help="oai: parse the one JSONL in byte ranges over N workers"
    )
    args = ap.parse_args()
    if (
        args.step == "render"
    ):  # the tables of BENCHMARKS.md «Scale (streaming build)», whose prose is written by hand
        print(render(args.work))
        return
    args.work = args.work[0]
    args.work.mkdir(parents=True, exist_ok=True)
    needs = {"corpus": ("source", "source_index", "cache"), "oai": ("source",), "dense": ("source_index", "cache"),
             "build": ("source_index",)}  # fmt: skip
    for dest in needs.get(args.step, ()):  # checked before a step of hours, not in its middle
        if not getattr(args, dest).exists():
            flag = "--" + dest.replace("_", "-")
            ap.error(
                f"{flag} {getattr(args, dest)}: no such file (run from the repository root, or give the path)"
            )
    name = args.step if args.step in ("corpus", "oai", "dense") else f"{args.step}-{args.tag}"
    name += "-warm" if args.step == "serve" and args.warm else ""
    if _out(args.work, name).exists() and not args.force:
        print(f"{name}: done ({_out(args.work, name)}); --force reruns it", flush=True)
        return
    steps = {
        "corpus": step_corpus,
        "oai": step_oai,
        "dense": step_dense,
        "build": step_build,
        "redense": step_redense,
        "terms": step_terms,
        "serve": step_serve,
    }
    step = steps[args.step]
    _save(args.work, name, step(args))


if __name__ == "__main__":
    main()
