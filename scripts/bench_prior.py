"""The category prior's papers and boost by 2-fold cross-validation over the dev topic queries, and its cost.

Each topic query is run once through the shipped ranking, recording the whole fused candidate list
the prior is given (every candidate, as the backend fuses it, not a page of hits); the prior (`openxiv.indexer.engine.prior.category_prior`, the same code the
backend calls) is then applied to those lists for every cell of the grid, so one index load scores
them all. Each fold (even / odd positions) picks the cell with the best topic Recall@100 on the other
fold; the held-out numbers are what the default may claim. Known items are not scored here: the
prior keeps the first ``prior_head`` places, so a known item found in the top 10 cannot move
(`scripts/bench_quality.py` measures them with the prior on).

    .venv/bin/python scripts/bench_prior.py --index data/index
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from openxiv.corpus.settings.model import Settings
from openxiv.evaluator.ranked import score_query
from openxiv.evaluator.shared import SharedData
from openxiv.indexer.engine.prior import PaperCategories, PriorConfig, category_prior
from openxiv.indexer.snapshot import open_index

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_quality import TOPIC_FILES, load_jsonl

DOCS = (10, 20, 50)
WEIGHTS = (0.5, 1.0, 2.0, 4.0)


class _Recorder:
    """Stands in for the backend's `CategoryPrior`: keeps the whole fused list the prior is given
    (every candidate, not only a page) and returns it unchanged."""

    seen: tuple[np.ndarray, np.ndarray]

    def apply(
        self, rows: np.ndarray, scores: np.ndarray, config: PriorConfig
    ) -> tuple[np.ndarray, np.ndarray]:
        self.seen = (rows.copy(), scores.copy())
        return rows, scores


Recorded = tuple[list[dict], list[tuple[np.ndarray, np.ndarray]], np.ndarray, PaperCategories, float]


def record(index_dir: Path, settings: Settings) -> Recorded:
    """The dev topic queries, their shipped rankings without the prior (rows, scores), the arxiv_id
    of every row, the per-paper category view and the CPU seconds it took to build."""
    topics = [q for f in TOPIC_FILES for q in load_jsonl(SharedData.default().gold(f))]
    opened = open_index(index_dir, settings)
    try:
        backend = opened.backend.tuned(prior_docs=max(settings.prior_docs, 1))
        recorder = _Recorder()
        backend.category_prior = recorder  # sees the whole list the prior would
        meta = backend.meta
        t = time.process_time()
        categories = PaperCategories(meta)
        build = time.process_time() - t
        lists = []
        for q in topics:
            backend.search(q["query"], top_k=10)
            lists.append(recorder.seen)
        ids = meta.arxiv_ids
    finally:
        opened.close()
    return topics, lists, ids, categories, build


def recall(topics: list[dict], ids: np.ndarray, ranked: list[np.ndarray]) -> list[dict[str, float]]:
    return [
        score_query([str(ids[r]) for r in rows[:100]], set(q["relevant"]), (10, 100))
        for q, rows in zip(topics, ranked, strict=True)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="index root or snapshot")
    args = parser.parse_args()
    settings = Settings.from_env()
    topics, lists, ids, categories, build = record(args.index, settings)
    head = settings.prior_head
    cells: dict[tuple[int, float], list[dict[str, float]]] = {}
    cpu: list[float] = []
    for docs in DOCS:
        for weight in WEIGHTS:
            config = PriorConfig(docs, weight, head)
            ranked = []
            for rows, scores in lists:
                t = time.thread_time()
                ranked.append(category_prior(categories, rows, scores, config)[0])
                cpu.append((time.thread_time() - t) * 1000)
            cells[(docs, weight)] = recall(topics, ids, ranked)
    base = recall(topics, ids, [rows for rows, _ in lists])
    mean = lambda per, idx, k="recall@100": statistics.mean(per[i][k] for i in idx)  # noqa: E731
    every = range(len(topics))
    folds = [list(range(0, len(topics), 2)), list(range(1, len(topics), 2))]
    held: list[dict[str, float]] = [{}] * len(topics)
    picks = []
    for train, test in (folds, folds[::-1]):
        pick = max(cells, key=lambda c: (mean(cells[c], train), -c[1]))
        picks.append(pick)
        for i in test:
            held[i] = cells[pick][i]
    print(
        "topic R@100 on all queries (rows: predicting papers; columns: weight "
        + " / ".join(map(str, WEIGHTS))
        + ")"
    )
    for docs in DOCS:
        print(f"  {docs:>3}: " + " ".join(f"{mean(cells[(docs, w)], every):.4f}" for w in WEIGHTS))
    print(
        f"picked on each fold: {picks[0]} and {picks[1]}; held-out topic R@10 {mean(held, every, 'recall@10'):.4f}, "
        f"R@100 {mean(held, every):.4f} against {mean(base, every):.4f} without the prior "
        f"(default {settings.prior_docs}/{settings.prior_weight}: "
        f"{mean(cells.get((settings.prior_docs, settings.prior_weight), base), every):.4f} on all queries)"
    )
    print(
        f"cost: per-paper category view {build * 1000:.0f} ms CPU once; the prior per query p50 "
        f"{statistics.median(cpu):.2f} ms, p95 {sorted(cpu)[int(0.95 * (len(cpu) - 1))]:.2f} ms CPU "
        f"(fused lists of median {statistics.median(r.size for r, _ in lists):.0f} candidates; "
        f"1-minute load average {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
