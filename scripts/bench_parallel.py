"""Parallel ingest and Ray embedding against their single-process paths, in the same run.

``ingest``: ``openxiv ingest`` of the shared PDFs (every valid and broken file, MANIFEST.json passed
over) into a fresh database, serial, then ``--ingest-workers 1`` and ``--ingest-workers 2`` (the pool path), each in
a child process; wall time, pages/s, the speed-up over serial, and whether the corpus fingerprint
equals the serial one.

``embed``: the first N unique real papers of listing-cs (title + abstract) embedded into a fresh
cache by the local single-process path (`encode_cached`, model load included as startup) and by
`ray_fill_cache` with 1 and 2 actors (``ray.init()`` and actor start-up as startup); texts/s after
startup, and whether the vectors are bit-for-bit the local ones.

    nice -n 10 .venv/bin/python scripts/bench_parallel.py ingest embed --n 4000

Writes the ``## Parallel ingest and Ray embedding`` section of BENCHMARKS.md (``--no-write``: print).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import write_section

from openxiv.corpus.settings.model import Settings
from openxiv.evaluator.shared import SharedData

RESULTS = Path("data/scratch/scale/parallel.json")


def _pages() -> int:
    manifest = json.loads((SharedData.default().pdfs / "MANIFEST.json").read_text(encoding="utf-8"))
    rows = manifest if isinstance(manifest, list) else manifest.get("files", [])
    return sum(int(r.get("pages") or 0) for r in rows if isinstance(r, dict) and r.get("ok"))


def bench_ingest() -> dict[str, Any]:
    from openxiv.corpus.store import Store

    pdfs = SharedData.default().pdfs
    exe = Path(sys.executable).parent / "openxiv"
    out: dict[str, Any] = {"pages": _pages(), "runs": []}
    fingerprints = {}
    with tempfile.TemporaryDirectory(prefix="bench-parallel-") as tmp:
        for label, extra in (
            ("serial", []),
            ("--ingest-workers 1", ["--ingest-workers", "1"]),
            ("--ingest-workers 2", ["--ingest-workers", "2"]),
        ):
            db = Path(tmp) / f"{label.replace(' ', '').replace('-', '')}.sqlite"
            la = os.getloadavg()[0]
            t, c = time.perf_counter(), os.times()
            subprocess.run([str(exe), "ingest", "--db", str(db), "--no-progress", *extra, str(pdfs)],
                           check=False, capture_output=True)  # fmt: skip
            wall = time.perf_counter() - t
            c2 = os.times()
            cpu = (c2.children_user - c.children_user) + (c2.children_system - c.children_system)
            with Store.open_readonly(db) as store:
                fingerprints[label] = store.fingerprint()
                papers = store.stats()["papers"]
            out["runs"].append(
                {"label": label, "wall_s": wall, "cpu_s": cpu, "papers": papers, "loadavg": la}
            )
            print(json.dumps(out["runs"][-1]), flush=True)
    serial = out["runs"][0]["wall_s"]
    for r in out["runs"]:
        r["speedup"] = serial / r["wall_s"]
        r["same_fingerprint"] = fingerprints[r["label"]] == fingerprints["serial"]
    return out


def bench_embed(n: int, data_dir: Path) -> dict[str, Any]:
    from bench_embed import cs_papers

    from openxiv.indexer.building.embcache import EmbeddingCache, cache_keys, encode_cached
    from openxiv.indexer.building.ray_embed import ray_fill_cache
    from openxiv.indexer.encoders.embed import load_encoder

    texts = cs_papers()[1][:n]
    settings = Settings(data_dir=data_dir)
    load_encoder(settings)  # the ONNX export exists before anything is timed (both paths reuse it)
    out: dict[str, Any] = {"texts": len(texts), "runs": []}
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        la = os.getloadavg()[0]
        t = time.perf_counter()
        enc = load_encoder(settings)
        startup = time.perf_counter() - t
        with EmbeddingCache(Path(tmp) / "local.sqlite") as cache:
            t = time.perf_counter()
            local = encode_cached(enc, texts, cache, progress=False)
            steady = time.perf_counter() - t
        out["runs"].append({"label": "local, 1 process", "startup_s": startup, "steady_s": steady,
                            "texts_per_s": len(texts) / steady, "identical": True, "loadavg": la})  # fmt: skip
        print(json.dumps(out["runs"][-1]), flush=True)
        keys = cache_keys(enc, texts)
        for actors in (1, 2):
            path = Path(tmp) / f"ray{actors}.sqlite"
            la = os.getloadavg()[0]
            rep = ray_fill_cache(texts, path, settings, enc, actors=actors)
            with EmbeddingCache(path) as cache:
                got = cache.get_many(keys)
            same = np.stack([got[k] for k in keys]).tobytes() == local.tobytes()
            out["runs"].append({"label": f"Ray Data, {actors} actor(s)", "startup_s": rep.startup_s,
                                "steady_s": rep.seconds - rep.startup_s, "texts_per_s": rep.texts_per_s,
                                "identical": same, "loadavg": la})  # fmt: skip
            print(json.dumps(out["runs"][-1]), flush=True)
    return out


def render(res: dict[str, Any]) -> str:
    lines = []
    if "ingest" in res:
        ing = res["ingest"]
        lines += [
            f"`openxiv ingest` of the shared PDFs folder ({ing['pages']:,} pages in the valid files, plus the "
            "truncated ones), each run a fresh database; `cpu s` is the children's CPU time. The machine "
            "was shared (load average at the start of each run given).",
            "",
            "| run | wall s | cpu s | pages/s | speed-up vs serial | same fingerprint | load avg |",
            "|---|---:|---:|---:|---:|---|---:|",
        ]
        for r in ing["runs"]:
            lines.append(
                f"| {r['label']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {ing['pages'] / r['wall_s']:.1f} "
                f"| {r['speedup']:.2f} | {'yes' if r['same_fingerprint'] else 'NO'} | {r['loadavg']:.1f} |"
            )
        serial, last = ing["runs"][0], ing["runs"][-1]
        lines += [
            "",
            f"CPU cost: {ing['pages'] / serial['cpu_s']:.0f} pages per CPU-second serial, "
            f"{ing['pages'] / last['cpu_s']:.0f} with `{last['label']}` (the pool's start and pickling the "
            f"records back add {100 * (last['cpu_s'] / serial['cpu_s'] - 1):.0f}% CPU). "
            + (
                "With the load average above the 2 cores, these runs got a fixed share of the CPU (the "
                "kernel's autogroup scheduler shares CPU per session, and the workers share their parent's), "
                "so no worker count can be faster here; the CPU figures say what idle cores would give: "
                "N workers ~ N x the serial rate while parsing dominates."
                if serial["loadavg"] > 2
                else ""
            ),
        ]
    if "embed" in res:
        emb = res["embed"]
        lines += [
            "",
            f"Embedding {emb['texts']:,} real listing papers (int8 ONNX MiniLM, 32 tokens) into a fresh cache. "
            "Startup: model load for the local path; for Ray, `ray.init()` until the first batch (up to "
            "1,024 texts) is back, so it includes starting Ray's daemons, the actors loading the model and "
            "encoding one batch. Rates after startup are the remaining texts over the remaining time.",
            "",
            "| path | startup s | encode s | texts/s after startup | vectors bit-identical to local | load avg |",
            "|---|---:|---:|---:|---|---:|",
        ]
        for r in emb["runs"]:
            lines.append(
                f"| {r['label']} | {r['startup_s']:.1f} | {r['steady_s']:.1f} | {r['texts_per_s']:.0f} "
                f"| {'yes' if r['identical'] else 'NO'} | {r['loadavg']:.1f} |"
            )
        if any(r["loadavg"] > 2 for r in emb["runs"]):
            lines += [
                "",
                "The load average was far above the 2 cores: the local encoder ran at a few percent of its "
                'idle rate (~450 texts/s, "Embedding speed"). This shell\'s processes all shared one autogroup '
                "(checked in /proc/PID/autogroup), so CPU went per session, not per process; Ray's daemons "
                "and actors may run in sessions of their own (likely why one actor beat the local process), "
                "so the Ray rows are not comparable with the local one as speeds. What holds: the vectors are identical, and Ray's "
                "fixed cost (daemons, actor start, model load per actor) is tens of seconds to minutes on a "
                "busy 2-core machine, worth paying only for a corpus that takes much longer than that to "
                "embed, on cores that the local build cannot use.",
            ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", nargs="*", help="ingest and/or embed (default: both)")
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--data-dir", type=Path, default=Path("data/scratch/scale/raydata"))
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--render", action="store_true", help="only write BENCHMARKS.md from --results")
    args = ap.parse_args()
    res = json.loads(args.results.read_text()) if args.results.exists() else {}
    args.what = args.what or ["ingest", "embed"]
    if not args.render:
        if "ingest" in args.what:
            res["ingest"] = bench_ingest()
        if "embed" in args.what:
            res["embed"] = bench_embed(args.n, args.data_dir)
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(res, indent=1))
    body = render(res)
    if args.no_write:
        print(body)
    else:
        write_section("Parallel ingest and Ray embedding", body)


if __name__ == "__main__":
    main()
