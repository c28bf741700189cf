"""Time passages as results, facets, title match and the author view (issue 41) beside a paper search,
in-process on one snapshot, one run, so the costs compare as ratios.

For each topic query of the dev sets (``topic_queries_dev`` and ``topic_queries_more_dev``): a BM25
paper search (top 10, the reference cost), the top 10 passages (`Library.passages`), the facets of
the query (`Library.facets`), then, for the search's first paper: the title match of its title with
the last word cut off and in lower case (what a pasted, truncated title looks like; counted right
when the match is that paper) and the author view of its first author. Each call is timed once per
query after one warm-up query; p50 and p95 over the queries.

Usage: ``.venv/bin/python scripts/bench_nav.py --index data/index [--no-write]``; it prints the numbers
and rewrites the ``## Passages and navigation`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.service.library import Library

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.report import load_average, write_section
from harness.timing import percentile


def queries() -> list[str]:
    shared = SharedData.default()
    out: list[str] = []
    for name in SharedData.TOPIC_SETS:
        with shared.gold(name).open(encoding="utf-8") as fh:
            out += [json.loads(line)["query"] for line in fh if line.strip()]
    return out


def timed(fn: Callable[..., Any], *args: Any, **kw: Any) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, (time.perf_counter() - t) * 1000


def run(index: Path) -> dict[str, Any]:
    settings = Settings.from_env().replace(request_budget_s=0)
    library = Library(index, settings)
    library.load()
    times: dict[str, list[float]] = {k: [] for k in ("search", "passages", "facets", "match", "author")}
    right = asked = 0
    facet_papers, passage_papers = [], []
    qs = queries()
    with library.holder.acquire() as snapshot:
        library_info = dict(snapshot.backend.info())
    try:
        library.passages(qs[0])  # warm-up: the first call of each path pays numba and page-cache costs
        library.facets(qs[0])
        for q in qs:
            found, ms = timed(library.search, q, top_k=10, mode="bm25", contents=False)
            times["search"].append(ms)
            got, ms = timed(library.passages, q, top_k=10)
            times["passages"].append(ms)
            passage_papers.append(len({p.arxiv_id for p in got.result}))
            counted, ms = timed(library.facets, q)
            times["facets"].append(ms)
            facet_papers.append(counted.total_count)
            if not found.result:
                continue
            top = found.result[0]
            words = (top.title or "").split()
            if len(words) >= 3:
                matched, ms = timed(library.match_title, " ".join(words[:-1]).lower())
                times["match"].append(ms)
                asked += 1
                right += matched.match is not None and matched.match.arxiv_id == top.arxiv_id
            if top.authors:
                _, ms = timed(library.author, top.authors[0].name)
                times["author"].append(ms)
    finally:
        library.close()
    info = library_info
    base = percentile(times["search"], 50)
    return {
        "queries": len(qs),
        "ms": {
            k: (round(percentile(v, 50), 1), round(percentile(v, 95), 1), len(v)) for k, v in times.items()
        },
        "ratio_to_search": {k: round(percentile(v, 50) / base, 2) for k, v in times.items()},
        "match_right": right,
        "match_asked": asked,
        "papers_per_10_passages": round(percentile(passage_papers, 50), 1),
        "facet_papers_p50": int(percentile(facet_papers, 50)),
        "load": load_average(),
        "papers": info["papers"],
        "passages": info["passages"],
    }


def render(r: dict[str, Any], command: str) -> str:
    rows = "\n".join(
        f"| {k} | {p50} | {p95} | {r['ratio_to_search'][k]} | {n} |" for k, (p50, p95, n) in r["ms"].items()
    )
    return f"""Command: `{command}` (in process, one run; load average {r["load"]}).

Over the {r["queries"]} dev topic queries: a BM25 paper search (top 10, the reference), the top 10
passages, the query's facets (counting its {r["facet_papers_p50"]} matching papers at the median),
then for the search's first paper the title match of its title cut by one word and lower-cased, and
the author view of its first author.

| call | p50 ms | p95 ms | p50 / search p50 | calls |
|---|---:|---:|---:|---:|
{rows}

Title match: {r["match_right"]} of {r["match_asked"]} truncated titles matched their paper. The top 10
passages came from {r["papers_per_10_passages"]} distinct papers at the median. The index is
{r["papers"]:,} papers and {r["passages"]:,} passages; passages, facets, title match and the author view
read no vectors, so a BM25-only snapshot (`openxiv index build --db data/corpus.sqlite --index
data/bm25index --embed none`) times them as the served one would.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--no-write", action="store_true", help="Print only; leave BENCHMARKS.md alone.")
    args = ap.parse_args()
    result = run(args.index)
    print(json.dumps(result, indent=1))
    if not args.no_write:
        command = f".venv/bin/python scripts/bench_nav.py --index {args.index}"
        write_section("Passages and navigation", render(result, command))


if __name__ == "__main__":
    main()
