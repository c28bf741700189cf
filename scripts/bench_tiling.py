"""Deep-page tiling probe (issue 21 item 1): is every page a slice of one ranking of its query?

For each query (common words and the first dev topic queries), mode (the default and the other
fusions, ``bm25``, ``dense``) and filter (none / ``categories=cs.CL``) it walks offsets ``--start``
to ``--stop`` twice through the backend the service uses: in pages of 10 and in pages of 100, and
counts what an agent paging by 10 would see wrong: papers shown twice (``repeats``), papers of the
pages of 100 never shown (``misses``) and places where the two walks differ (``moved``). Targets:
0, 0, 0. Writes the ``## Reliability: deep-page tiling`` section of BENCHMARKS.md (after
``## Reliability``).

    .venv/bin/python scripts/bench_tiling.py --index data/index [--no-write]

The script only calls the public backend API, so the code before a change can be probed with the
same file: run it with another checkout's interpreter (``<main>/.venv/bin/python scripts/bench_tiling.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from openxiv.corpus.settings.model import Settings
from openxiv.evaluator.shared import SharedData
from openxiv.indexer.backend import SearchFilters
from openxiv.indexer.snapshot import open_index

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import load_average, write_section

MODES = (None, "zscore", "rrf", "bm25", "dense")
FILTERS: tuple[tuple[str, SearchFilters | None], ...] = (
    ("none", None),
    ("cs.CL", SearchFilters(categories=("cs.CL",))),
)
COMMON = ("learning model data based results", "attention is all you need")


def walk(backend: Any, query: str, start: int, stop: int, size: int, **kw: Any) -> tuple[list[str], int]:
    """Ids of places ``start:stop`` fetched in pages of ``size``, and the requests made."""
    ids: list[str] = []
    n = 0
    for offset in range(start, stop, size):
        res = backend.search(query, top_k=min(size, stop - offset), offset=offset, **kw)
        ids += [h.arxiv_id for h in res.hits]
        n += 1
    return ids, n


def probe(backend: Any, queries: list[str], start: int, stop: int) -> list[dict[str, Any]]:
    rows = []
    for mode in MODES:
        if mode == "dense" and not any(s.startswith("dense") for s in backend.sides):
            continue
        for fname, filters in FILTERS:
            row: dict[str, Any] = {"mode": mode or f"{backend.settings.fusion} (default)", "filter": fname}
            row.update(requests=0, pages=0, repeats=0, misses=0, moved=0, deep_queries=0)
            t = time.perf_counter()
            for query in queries:
                total = backend.search(query, top_k=1, mode=mode, filters=filters).total_count
                end = min(stop, total)
                if end <= start:
                    continue
                row["deep_queries"] += 1
                by10, n10 = walk(backend, query, start, end, 10, mode=mode, filters=filters)
                by100, n100 = walk(backend, query, start, end, 100, mode=mode, filters=filters)
                row["requests"] += n10 + n100 + 1
                row["pages"] += n10
                row["repeats"] += len(by10) - len(set(by10))
                row["misses"] += len(set(by100) - set(by10))
                row["moved"] += sum(a != b for a, b in zip(by10, by100, strict=False)) + abs(
                    len(by10) - len(by100)
                )
            row["seconds"] = round(time.perf_counter() - t, 1)
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


COST_OFFSETS = (0, 990, 4000, 10000)


def cost(backend: Any, query: str = COMMON[0], repeats: int = 3) -> str:
    """CPU time of one default-mode page of 100 at growing offsets (process time, best of
    ``repeats``): what the deeper blocks add; CPU time, not wall-clock, so a loaded machine skews it less."""
    backend.search(query, top_k=10)
    cells = []
    for offset in COST_OFFSETS:
        best = float("inf")
        for _ in range(repeats):
            t = time.process_time()
            backend.search(query, top_k=100, offset=offset)
            best = min(best, (time.process_time() - t) * 1000)
        cells.append(f"offset {offset:,}: {best:.0f} ms")
    return (
        f"CPU time of one page of 100, default mode, {query!r} (best of {repeats}): " + ", ".join(cells) + "."
    )


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| mode | filter | queries reaching the offsets | pages of 10 walked | requests | repeats (target 0) "
        "| misses (target 0) | places that differ (target 0) | s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {r['mode']} | {r['filter']} | {r['deep_queries']} | {r['pages']:,} | {r['requests']:,} | {r['repeats']} "
        f"| {r['misses']} | {r['moved']} | {r['seconds']} |\n"
        for r in rows
    )
    return head + body


def section(rows: list[dict[str, Any]], args: argparse.Namespace, papers: int, load: tuple[str, str]) -> str:
    before = ""
    if args.before:
        old = [
            json.loads(line)
            for line in args.before.read_text(encoding="utf-8").splitlines()
            if line.startswith("{")
        ]
        before = f"\n{args.before_label}, the same walk:\n\n" + table(old)
    return (
        f"Offsets {args.start:,}–{args.stop - 1:,} of each query walked in pages of 10 against pages of 100, "
        f"through the backend the service uses, on `{args.label}` ({papers:,} papers); queries: "
        f"{', '.join(repr(q) for q in COMMON)} and the first {args.topics} dev topic queries. A query "
        f"counts where it has more matches than the start offset. Load average (1/5/15 min) {load[0]} at "
        f"the start, {load[1]} at the end.\n\n"
        + table(rows)
        + before
        + "\nCommand: `.venv/bin/python scripts/bench_tiling.py "
        f"--index {args.label} --start {args.start} --stop {args.stop} --topics {args.topics}`\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="index root or snapshot")
    parser.add_argument("--label", default="data/index", help="how the index is named in BENCHMARKS.md")
    parser.add_argument("--start", type=int, default=900)
    parser.add_argument("--stop", type=int, default=1300)
    parser.add_argument("--topics", type=int, default=3, help="dev topic queries added to the common ones")
    parser.add_argument(
        "--before", type=Path, help="the printed rows of a run of the code before, shown below"
    )
    parser.add_argument("--before-label", default="Before (main before issue 21)", help="its heading")
    parser.add_argument("--cost-only", action="store_true", help="only time pages at growing offsets, print")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args()
    with SharedData.default().gold("topic_queries_dev.jsonl").open(encoding="utf-8") as fh:
        topics = [json.loads(line)["query"] for line in fh if line.strip()][: args.topics]
    load0 = load_average()
    opened = open_index(args.index, Settings.from_env())
    try:
        if args.cost_only:
            print(cost(opened.backend))
            return
        rows = probe(opened.backend, [*COMMON, *topics], args.start, args.stop)
        rows_cost = cost(opened.backend)
        papers = opened.backend.meta.n
    finally:
        opened.close()
    text = section(rows, args, papers, (load0, load_average())) + "\n" + rows_cost + "\n"
    print(text)
    if not args.no_write:
        write_section("Reliability: deep-page tiling", text, after="Reliability")


if __name__ == "__main__":
    main()
