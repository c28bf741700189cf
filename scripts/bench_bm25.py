"""BM25 libraries on the shared listing abstracts: rank-bm25 vs bm25s (numba / numpy) vs SQLite FTS5.

Every engine indexes the same texts (title + abstract of each unique listing paper) and answers the
same dev topic queries. Tokenization is shared where the library allows it: bm25s and rank-bm25 get
the same token lists (lowercase ``\\w\\w+`` words, English stopwords removed, PyStemmer English
stems); FTS5 uses its own ``porter unicode61`` tokenizer and is queried with the same stopword-free
words joined by ``OR``. Measured: index build time, p50/p95 latency per query (one query at a time,
after a warm-up), Recall@100 against the gold lists. rank-bm25 scores every document in Python per
query, so by default it is measured on the first 20,000 documents and its latency extrapolated
linearly to the full corpus (``--rank-docs 0`` measures it on everything).

    .venv/bin/python scripts/bench_bm25.py            # prints a table, rewrites `## BM25 libraries`
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import SharedData
from harness.report import load_average, write_section
from harness.timing import percentile

GOLD = ("topic_queries_dev.jsonl", "topic_queries_more_dev.jsonl")
STOP = set(bm25s.stopwords.STOPWORDS_EN)
WORD = re.compile(r"(?u)\b\w\w+\b")


def load_docs(shared: SharedData) -> tuple[list[str], list[str], int]:
    ids: list[str] = []
    texts: list[str] = []
    seen: set[str] = set()
    lines = 0
    for path in sorted(shared.corpus.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                lines += 1
                rec = json.loads(line)
                if rec["id"] in seen:
                    continue
                seen.add(rec["id"])
                ids.append(rec["id"])
                texts.append(f"{rec.get('title') or ''}\n{rec.get('abstract') or ''}")
    return ids, texts, lines


def load_queries(shared: SharedData) -> list[tuple[str, set[str]]]:
    out = []
    for name in GOLD:
        with open(shared.gold(name), encoding="utf-8") as fh:
            for line in fh:
                q = json.loads(line)
                out.append((q["query"], set(q["relevant"])))
    return out


def tokenize(texts: list[str], stemmer: Stemmer.Stemmer) -> list[list[str]]:
    return bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)


def recall(ranked: list[str], relevant: set[str], k: int = 100) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


def measure(
    search: Callable[[str], list[str]], queries: list[tuple[str, set[str]]]
) -> tuple[float, float, float]:
    search(queries[0][0])  # warm-up (numba compilation, caches)
    lat, rec = [], []
    for q, rel in queries:
        t = time.perf_counter()
        ranked = search(q)
        lat.append((time.perf_counter() - t) * 1000)
        rec.append(recall(ranked, rel))
    return (
        statistics.median(lat),
        percentile(lat, 95),
        statistics.fmean(rec),
    )


def bench_bm25s(ids, texts, queries, stemmer, backend: str, k1: float, b: float):
    t = time.perf_counter()
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    model = bm25s.BM25(k1=k1, b=b, backend=backend)
    model.index(tokens, show_progress=False)
    build = time.perf_counter() - t
    id_arr = np.asarray(ids)

    def search(q: str) -> list[str]:
        qt = bm25s.tokenize(q, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)
        docs, scores = model.retrieve(qt, k=100, show_progress=False, n_threads=1)
        keep = scores[0] > 0
        return list(id_arr[docs[0][keep]])

    return build, *measure(search, queries)


def bench_rank_bm25(ids, texts, queries, stemmer, k1: float, b: float, n_docs: int):
    from rank_bm25 import BM25Okapi

    sub_ids, sub_texts = (ids[:n_docs], texts[:n_docs]) if n_docs else (ids, texts)
    t = time.perf_counter()
    tokens = tokenize(sub_texts, stemmer)
    model = BM25Okapi(tokens, k1=k1, b=b)
    build = time.perf_counter() - t
    id_arr = np.asarray(sub_ids)

    def search(q: str) -> list[str]:
        qt = tokenize([q], stemmer)[0]
        scores = model.get_scores(qt)
        top = np.argsort(-scores, kind="stable")[:100]
        return list(id_arr[top[scores[top] > 0]])

    return (len(sub_ids), build, *measure(search, queries))


def bench_fts5(ids, texts, queries):
    con = sqlite3.connect(":memory:")
    t = time.perf_counter()
    con.execute("CREATE VIRTUAL TABLE docs USING fts5(aid UNINDEXED, body, tokenize='porter unicode61')")
    con.executemany("INSERT INTO docs(aid, body) VALUES (?, ?)", zip(ids, texts, strict=True))
    con.execute("INSERT INTO docs(docs) VALUES ('optimize')")
    build = time.perf_counter() - t

    def search(q: str) -> list[str]:
        words = [w for w in WORD.findall(q.lower()) if w not in STOP]
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
        rows = con.execute(
            "SELECT aid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 100", (match,)
        ).fetchall()
        return [r[0] for r in rows]

    return build, *measure(search, queries)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rank-docs", type=int, default=20_000, help="docs for rank-bm25 (0 = all)")
    ap.add_argument("--k1", type=float, default=1.2)
    ap.add_argument("--b", type=float, default=0.75)
    ap.add_argument("--no-write", action="store_true", help="print only, leave BENCHMARKS.md alone")
    args = ap.parse_args()

    shared = SharedData.default()
    if not shared.corpus.is_dir():
        sys.exit(shared.missing_message())
    ids, texts, lines = load_docs(shared)
    queries = load_queries(shared)
    stemmer = Stemmer.Stemmer("english")
    n = len(ids)
    load_start = load_average()
    print(f"{lines} listing lines, {n} unique papers, {len(queries)} topic queries", flush=True)

    rows: list[tuple[str, str, str, str, str, str]] = []

    def row(name, docs, build, p50, p95, rec, note=""):
        rec_s = "—" if rec != rec else f"{rec:.3f}"
        rows.append((name, f"{docs:,}", f"{build:.1f}", f"{p50:.1f}", f"{p95:.1f}", rec_s + note))
        print(" | ".join(rows[-1]), flush=True)

    b, p50, p95, rec = bench_bm25s(ids, texts, queries, stemmer, "numba", args.k1, args.b)
    row("bm25s (numba backend)", n, b, p50, p95, rec)
    b, p50, p95, rec = bench_bm25s(ids, texts, queries, stemmer, "numpy", args.k1, args.b)
    row("bm25s (default numpy backend)", n, b, p50, p95, rec)
    b, p50, p95, rec = bench_fts5(ids, texts, queries)
    row("SQLite FTS5, bm25() (porter)", n, b, p50, p95, rec)
    docs, b, p50, p95, rec = bench_rank_bm25(ids, texts, queries, stemmer, args.k1, args.b, args.rank_docs)
    row("rank-bm25 BM25Okapi", docs, b, p50, p95, rec, " (subset)" if docs < n else "")
    if docs < n:
        f = n / docs
        row(f"rank-bm25, extrapolated ×{f:.2f}", n, b * f, p50 * f, p95 * f, float("nan"), " (not measured)")

    full = [r for r in rows if r[1] == f"{n:,}" and r[5][0].isdigit() and "subset" not in r[5]]
    best = max(float(r[5].split()[0]) for r in full)
    choice = min((r for r in full if float(r[5].split()[0]) >= best - 0.01), key=lambda r: float(r[3]))[0]
    head = "| engine | docs | build s | p50 ms | p95 ms | Recall@100 |\n|---|---:|---:|---:|---:|---:|\n"
    table = head + "\n".join("| " + " | ".join(r) + " |" for r in rows)
    body = (
        f"Title + abstract of the {n:,} unique papers of the shared listing files ({lines:,} lines), "
        f"{len(queries)} dev topic queries (`topic_queries_dev` + `topic_queries_more_dev`), "
        f"k1={args.k1}, b={args.b}, one query at a time on one thread. bm25s and rank-bm25 share one "
        "tokenization (regex words, English stopwords, PyStemmer English); FTS5 uses `porter unicode61` "
        "and an OR query of the same stopword-free words. rank-bm25 latency grows linearly with the corpus "
        "(it scores every document in Python), so its full-corpus row is a linear extrapolation of the "
        "subset measurement, not a measurement.\n\n"
        f"{table}\n\nLoad average (1 / 5 / 15 min) on {os.cpu_count()} cores: {load_start} at the start, "
        f"{load_average()} at the end.\n\nChoice by these numbers: **{choice}** (lowest p50 among the full-corpus engines "
        "whose Recall@100 is within 0.01 of the best). Command: `.venv/bin/python scripts/bench_bm25.py`"
    )
    print()
    print(table)
    if not args.no_write:
        write_section("BM25 libraries", body)


if __name__ == "__main__":
    main()
