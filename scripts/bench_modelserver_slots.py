"""Model servers (issue 38): a search waiting on a slow model server holds no compute slot, on each front.

One compute slot (``serve_concurrency=1``) and a snapshot of ``--papers`` real cs listing papers built
through the scripted server of tests/model_server.py (hashed stand-in vectors: this measures where a
wait happens, not ranking), which answers every request after ``--slow`` seconds. For each front,
``--waiting`` searches that need the server (a fresh query each: its vector, or with
``use_fine_rerank`` the rerank scores) are sent at once; while they wait, a BM25 ``POST /search``
(which needs no server) is timed ``--free`` times, after the same search timed alone. A wait outside
the slot leaves the BM25 search at its time alone; a wait inside it makes the BM25 search queue behind
up to ``waiting`` × ``slow`` seconds, and the waiting searches answer one after the other.

    .venv/bin/python scripts/bench_modelserver_slots.py [--papers 300] [--slow 1] [--waiting 3] [--no-write]
    .venv/bin/python scripts/bench_modelserver_slots.py --json-out before.json --no-write   # another checkout
    .venv/bin/python scripts/bench_modelserver_slots.py --before before.json                # both in the table

``--before`` adds the columns of a run of another checkout's code (e.g. main before the change, its
``--json-out``), measured on the same machine just before.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fastapi.testclient import TestClient
from harness.data import SharedData
from harness.report import BENCH_DIR, load_average, write_section
from harness.timing import percentile

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.store import Store
from openxiv.indexer.building.job import build_index
from openxiv.service.http.app import create_app

ROOT = Path(__file__).resolve().parents[1]
FREE = {"query": "graph neural networks for molecules", "mode": "bm25", "top_k": 3}
Request = tuple[str, str, dict[str, Any]]
NOTE = "\"before\" is the same script run on the code before this change (main at a239bf8, `--json-out before.json`, just before, same machine): there GET /arxiv retrieve, /retrieve, the agent search, the web page and a remote fine rerank waited inside the slot, so the waiting searches answered one after the other (slowest ≈ 3 × 1 s) and a BM25 search queued behind them (max 2.4-3.4 s); POST /search and /v1/search already fetched the vector outside. Now every front's waiting searches wait together (slowest ≈ 1.2-1.5 s; the reranked one ≈ 2.2 s: first stage, then the scores) and the BM25 search keeps its time; its larger samples (0.15-0.4 s, one of 1.4 s) are the waiting searches' own compute, which takes the one slot in turn when their answers arrive together at a load of 18."
"""What the table of the recorded run (BENCHMARKS.md) shows; written under it when ``--before`` is given."""
FRONTS: dict[str, Callable[[str], Request]] = {
    "POST /search": lambda q: ("POST", "/search", {"json": {"query": q, "top_k": 3}}),
    "GET /v1/search": lambda q: ("GET", "/v1/search", {"params": {"q": q, "top_k": 3}}),
    "GET /arxiv/ retrieve": lambda q: ("GET", "/arxiv/", {"params": {"type": "retrieve", "query": q}}),
    "POST /retrieve": lambda q: ("POST", "/retrieve", {"json": {"queries": [q], "topk": 3}}),
    "agent search": lambda q: ("POST", "/arxiv/agent/search", {"json": {"query": q, "top_k": 3}}),
    "web page": lambda q: ("GET", "/ui", {"params": {"q": q}}),
    "POST /search, use_fine_rerank (bm25)": lambda q: (
        "POST",
        "/search",
        {"json": {"query": q, "mode": "bm25", "top_k": 3, "use_fine_rerank": True}},
    ),
}


def _model_server() -> Any:
    spec = importlib.util.spec_from_file_location("model_server", ROOT / "tests" / "model_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _timed(http: TestClient, req: Request) -> tuple[float, int]:
    method, path, kwargs = req
    t = time.perf_counter()
    status = http.request(method, path, **kwargs).status_code
    return (time.perf_counter() - t) * 1000, status


def measure(http: TestClient, server: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    n = itertools.count()
    alone = [_timed(http, ("POST", "/search", {"json": FREE}))[0] for _ in range(args.free)]
    rows = []
    for front, make in FRONTS.items():
        waited: list[tuple[float, int]] = []
        asked = len(server.requests)

        threads = [
            threading.Thread(
                target=lambda req, out=waited: out.append(_timed(http, req)),
                args=(make(f"diffusion models for video generation {next(n)}"),),
            )
            for _ in range(args.waiting)
        ]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        while len(server.requests) == asked:  # the first waiting search has reached the server
            time.sleep(0.005)
        during = [_timed(http, ("POST", "/search", {"json": FREE})) for _ in range(args.free)]
        for t in threads:
            t.join()
        rows.append(
            {
                "front": front,
                "alone_p50": percentile(alone, 50),
                "during_p50": percentile([d[0] for d in during], 50),
                "during_max": max(d[0] for d in during),
                "waiting_max": max(w[0] for w in waited),
                "all_s": time.perf_counter() - t0,
                "statuses": sorted({w[1] for w in waited} | {d[1] for d in during}),
            }
        )
        print(rows[-1], flush=True)
    return rows


def render(
    args: argparse.Namespace, rows: list[dict[str, Any]], before: dict[str, Any] | None, load: str
) -> str:
    then = {r["front"]: r for r in before["rows"]} if before else {}
    lines = [
        "Issue 38: a search waiting on a model server holds no compute slot, on every front. One compute slot "
        f"(`OPENXIV_SERVE_CONCURRENCY=1`), {args.papers} real cs listing papers built through the scripted server "
        f"(tests/model_server.py), which answers every request after {args.slow:g} s; per front, {args.waiting} "
        f"searches needing the server sent at once and, while they wait, a BM25 `POST /search` (no server) timed "
        f"{args.free} times (in process, FastAPI's TestClient).",
        "",
        f"    .venv/bin/python scripts/bench_modelserver_slots.py --papers {args.papers} --slow {args.slow:g} "
        f"--waiting {args.waiting} --free {args.free}" + (" --before before.json" if before else ""),
        "",
        f"Load average: {load}" + (f"; the before run's: {before['load']}" if before else "") + ".",
        "",
    ]
    head = "| front (what waits) | BM25 alone p50 ms | BM25 while they wait p50 / max ms | slowest waiting search ms |"
    rule = "|---|---:|---:|---:|"
    if before:
        head += " before: BM25 while they wait p50 / max ms | before: slowest waiting ms |"
        rule += "---:|---:|"
    lines += [head, rule]
    for r in rows:
        line = (
            f"| {r['front']} | {r['alone_p50']:.0f} | {r['during_p50']:.0f} / {r['during_max']:.0f} | "
            f"{r['waiting_max']:.0f} |"
        )
        if before and r["front"] in then:
            b = then[r["front"]]
            line += f" {b['during_p50']:.0f} / {b['during_max']:.0f} | {b['waiting_max']:.0f} |"
        lines.append(line)
    statuses = sorted({s for r in rows for s in r["statuses"]})
    lines += ["", f"Every answer's status: {', '.join(map(str, statuses))}."]
    if before:
        lines += ["", NOTE]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=300)
    ap.add_argument("--slow", type=float, default=1.0, help="seconds the server takes per request")
    ap.add_argument("--waiting", type=int, default=3, help="searches waiting on the server at once")
    ap.add_argument("--free", type=int, default=5, help="BM25 searches timed alone and while they wait")
    ap.add_argument("--json-out", type=Path, help="write the rows as JSON (for another run's --before)")
    ap.add_argument("--before", type=Path, help="a --json-out of another checkout's run, shown beside")
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = ap.parse_args()
    work = BENCH_DIR / "modelserver-slots"
    work.mkdir(parents=True, exist_ok=True)
    db = work / f"corpus-{args.papers}.sqlite"
    if not db.exists():
        with Store(db) as store:
            store.ingest(itertools.islice(read_path(SharedData.default().listing("cs")), args.papers))
    ms = _model_server()
    with ms.ModelServer(ms.hashed_embed, model="slow-model") as server:
        build = Settings.from_env({}).replace(
            data_dir=work, embed="papers", model=server.spec, embed_query_prefix="", embed_passage_prefix=""
        )
        root = work / f"index-{server.port}"
        build_index(db, root, build, progress=False)
        settings = build.replace(
            serve_concurrency=1,
            remote_query_timeout=60.0,
            request_budget_s=300.0,
            rerank=server.spec,
            rerank_api="cohere",
            rerank_depth=20,
        )
        server.slow_s, server.always = args.slow, "timeout"  # "timeout": answered after slow_s
        with TestClient(create_app(settings, root)) as http:
            http.post("/search", json={"query": "warm up the probe", "top_k": 1})
            rows = measure(http, server, args)
    load = load_average()
    if args.json_out:
        args.json_out.write_text(json.dumps({"rows": rows, "load": load}, indent=1), encoding="utf-8")
    before = json.loads(args.before.read_text(encoding="utf-8")) if args.before else None
    body = render(args, rows, before, load)
    print(body)
    if not args.no_write:
        write_section(
            "Model servers: waits outside the compute slots",
            body,
            after="Model servers (embeddings and rerank over HTTP)",
        )


if __name__ == "__main__":
    main()
