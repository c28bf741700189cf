"""The retrieval-only baseline agent's scores: the floor any LLM agent must beat on this corpus.

Runs ``openxiv demo`` (ingest, index, serve, calibrate the agent on ``topic_queries_dev``, answer
``topic_queries_more_dev`` over HTTP, score with ``openxiv eval autoresearchbench``), then reads the
evaluator's JSON report and the calibrated policy and rewrites the ``## Baseline agent`` section of
BENCHMARKS.md.

    .venv/bin/python scripts/bench_agent.py --data data            # builds everything first
    .venv/bin/python scripts/bench_agent.py --data data --skip-build  # reuses data/corpus.sqlite + data/index
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from openxiv.corpus.settings.model import Settings
from openxiv.evaluator.demo import CALIBRATION_QUERIES, DEMO_QUERIES
from openxiv.indexer.manifest import Manifest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.report import write_section

METRICS = ("iou", "precision", "recall", "f1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("data"), help="demo working directory")
    parser.add_argument("--skip-build", action="store_true", help="reuse the corpus and index in --data")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args()

    cmd = [sys.executable, "-m", "openxiv.service.cli", "demo", "--data", str(args.data)]
    if args.skip_build:
        cmd.append("--skip-build")
    started = time.perf_counter()
    subprocess.run(cmd, check=True)
    elapsed = time.perf_counter() - started

    out = args.data / "demo"
    report: dict[str, Any] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    policy: dict[str, Any] = json.loads((out / "baseline_policy.json").read_text(encoding="utf-8"))
    aggregates = report["aggregates"]
    rows = "".join(
        f"| {m} | {aggregates[m]['value']:.4f} | [{aggregates[m]['ci_low']:.4f}, {aggregates[m]['ci_high']:.4f}] |\n"
        for m in METRICS
    )
    p = policy["policy"]
    index_info = subprocess.run(
        [
            sys.executable,
            "-m",
            "openxiv.service.cli",
            "index",
            "info",
            "--index",
            str(args.data / "index"),
            "--json",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    emb = Manifest.of(json.loads(index_info.stdout)).embedding
    settings = Settings.from_env()  # what the demo's server ranked with
    ranking = settings.fusion, settings.weight_dense
    body = (
        "The deterministic retrieval-only agent (`openxiv agent baseline`, no LLM: one `POST /search` per "
        "question) on AutoResearchBench-format wide questions made from the dev topic queries (question = "
        "topic, gold = the curated list's papers in the corpus). Its two thresholds were chosen by "
        f"`openxiv agent calibrate` on the {policy['items']} questions of `{CALIBRATION_QUERIES}` "
        f"(best mean IoU {policy['mean_iou']:.4f} there: keep hits scoring at least "
        f"{p['wide_rel']} x the top score, at most {p['wide_max']}, from the top {p['top_k']}) and scored on "
        f"the {aggregates['iou']['n']} questions of `{DEMO_QUERIES}`, which calibration never saw. "
        "Scores by `openxiv eval autoresearchbench`, bootstrap 95% CIs.\n\n"
        "| metric | mean | 95% CI |\n|---|---:|---:|\n"
        + rows
        + f"\nIndex: {emb.model or 'no vectors'} at {emb.max_tokens} tokens, fusion "
        f"{ranking[0]} (dense weight {ranking[1]}). Whole demo run {elapsed:.0f} s"
        + (" (corpus and index reused)" if args.skip_build else "")
        + f". The HTML report is `{out / 'report.html'}`.\n\n"
        "These are the floor: a curated list's section holds papers that share a theme but rarely the "
        "words of its heading, and one search cannot separate them from the many near misses, so "
        "precision and recall are both low. Any agent that reads, reformulates and verifies should beat it.\n\n"
        f"Command: `.venv/bin/python scripts/bench_agent.py --data {args.data}"
        + (" --skip-build" if args.skip_build else "")
        + "`\n"
    )
    print(body)
    if not args.no_write:
        write_section("Baseline agent", body)


if __name__ == "__main__":
    main()
