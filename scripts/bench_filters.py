"""The most expensive filtered requests we can construct, timed on a real snapshot.

Issue 8 item 3: ``{"query": [10 queries], "authors": [50 names]}`` took 41 s on the full corpus,
because every author value ran a regex over the whole author list and the filter mask was rebuilt
for every query of the batch. This script times such requests the way the service runs a batch
(one ``backend.search`` per query with the same filters), so it measures the filter path and the
ranking, not HTTP. It only uses the `SearchBackend` API, so the same script times an older checkout
(put that checkout first on ``PYTHONPATH``) for the before/after comparison.

    .venv/bin/python scripts/bench_filters.py --index data/index [--repeat 3]

Author names are real: the most prolific authors of the snapshot's corpus (50 of them), plus
one-letter "names" (every name with a word starting with that letter: the broadest author value).
Prints one Markdown table (seconds per request, best of ``--repeat``; every run starts with an empty
mask cache, so the time includes resolving the filters once).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import string
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.backend import SearchFilters
from openxiv.indexer.snapshot import open_index

QUERIES = [
    "large language models reasoning",
    "diffusion models for image generation",
    "graph neural networks",
    "reinforcement learning from human feedback",
    "dark matter halo",
    "retrieval augmented generation",
    "vision transformer",
    "gravitational waves from binary black holes",
    "speech recognition",
    "robot manipulation policy",
]


def prolific_authors(db: Path, n: int) -> list[str]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT name FROM paper_authors GROUP BY name ORDER BY COUNT(*) DESC, name LIMIT ?", (n,)
        ).fetchall()
    finally:
        con.close()
    return [r[0] for r in rows]


def run_batch(backend: Any, queries: list[str], filters: SearchFilters, top_k: int = 10) -> float:
    """One request as the service runs it, with a cold filter cache (masks of earlier runs dropped)."""
    cache = getattr(backend.meta, "_masks", None)
    if cache is not None:
        cache.clear()
    t = time.perf_counter()
    for q in queries:
        backend.search(q, top_k=top_k, filters=filters)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True, help="index root (holding CURRENT)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per request; the best is reported")
    ap.add_argument("--label", default="", help="a label for the table (e.g. before / after)")
    args = ap.parse_args()

    ix = open_index(args.index, Settings.from_env())
    backend = ix.backend
    db = Path(ix.path) / "corpus.sqlite"
    authors50 = prolific_authors(db, 50)
    letters = list(string.ascii_uppercase)
    cases: list[tuple[str, list[str], SearchFilters]] = [
        ("1 query, no filter", QUERIES[:1], SearchFilters()),
        ("1 query x 50 authors", QUERIES[:1], SearchFilters(authors=tuple(authors50))),
        ("10 queries x 50 authors (issue 8)", QUERIES, SearchFilters(authors=tuple(authors50))),
        ("10 queries x 26 one-letter authors", QUERIES, SearchFilters(authors=tuple(letters))),
        ("50 queries x 10 authors", QUERIES * 5, SearchFilters(authors=tuple(authors50[:10]))),
        ("50 queries x 10 one-letter authors", QUERIES * 5, SearchFilters(authors=tuple(letters[:10]))),
        (
            "10 queries x 50 values (40 authors + 10 categories)",
            QUERIES,
            SearchFilters(
                authors=tuple(authors50[:40]),
                categories=(
                    "cs",
                    "astro-ph",
                    "hep-ph",
                    "gr-qc",
                    "math",
                    "physics",
                    "stat",
                    "eess",
                    "q-bio",
                    "cond-mat",
                ),
            ),
        ),
    ]
    print(f"index: {Path(ix.path).name}, {backend.meta.n} papers, sides {', '.join(backend.info()['sides'])}")
    label = f" {args.label}" if args.label else ""
    print(f"\n| request | s{label} (best of {args.repeat}) | ms per query |")
    print("|---|---:|---:|")
    for name, queries, filters in cases:
        best = min(run_batch(backend, queries, filters) for _ in range(args.repeat))
        print(f"| {name} | {best:.2f} | {best / len(queries) * 1000:.0f} |", flush=True)
    ix.close()


if __name__ == "__main__":
    main()
