"""The ``references`` build stage (issue 41): time and peak memory on the real corpus, and the
resolver's memory at 2.7M papers.

    python scripts/bench_citations.py --db data/corpus.sqlite [--papers 2700000] [--write]

Two runs, each in a process of its own (peak resident memory from ``getrusage(RUSAGE_CHILDREN)``):

- ``stage``: `openxiv.indexer.building.references.write_references` on ``--db`` (every bibliography
  resolved, the table written to a temporary directory): wall time, peak memory, the manifest counts;
- ``index``: the resolver's per-paper arrays (`openxiv.indexer.building.resolve.TitleIndex`) for
  ``--papers`` papers: the real corpus's rows repeated with new ids until there are that many (so
  titles, authors and DOIs have real lengths), read in build-sized chunks, as the stage reads them.

``--write`` rewrites the «Citations (references stage)» section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.report import load_average, write_section

TITLE = "Citations (references stage)"
CHUNK = 20_000


def _stage(db: Path) -> dict[str, object]:
    from openxiv.indexer.building.references import write_references

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        info = write_references(db, Path(tmp))
        return {"seconds": round(time.perf_counter() - t, 1), **info}


def _rows(db: Path, n: int) -> Iterator[list[tuple[str, str | None, str | None, str | None]]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT arxiv_id, title, authors_json, doi FROM papers ORDER BY arxiv_id").fetchall()
    con.close()
    made = 0
    while made < n:
        chunk = []
        for i in range(min(CHUNK, n - made)):
            _aid, title, authors, doi = rows[(made + i) % len(rows)]
            k = made + i  # a new-style id per row, in order: 0700.00000 on
            chunk.append(
                (
                    f"{7 + k // 9_000_000:02d}{1 + (k // 99_999) % 12:02d}.{k % 99_999:05d}",
                    title,
                    authors,
                    doi,
                )
            )
        made += len(chunk)
        yield chunk


def _index(db: Path, papers: int) -> dict[str, object]:
    from openxiv.indexer.building.resolve import TitleIndex

    t = time.perf_counter()
    index = TitleIndex.read(_rows(db, papers))
    return {
        "seconds": round(time.perf_counter() - t, 1),
        "papers": int(index.ids.size),
        "index_bytes": index.nbytes,
        "bytes_per_paper": round(index.nbytes / max(index.ids.size, 1), 1),
    }


def _child(kind: str, db: Path, papers: int) -> dict[str, object]:
    cmd = [sys.executable, __file__, "--db", str(db), "--papers", str(papers), "--child", kind]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, default=Path("data/corpus.sqlite"))
    ap.add_argument("--papers", type=int, default=2_700_000)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--child", choices=("stage", "index"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        out = _stage(args.db) if args.child == "stage" else _index(args.db, args.papers)
        print(json.dumps(out))
        return 0
    load = load_average()
    stage = _child("stage", args.db, args.papers)
    index = _child("index", args.db, args.papers)  # RUSAGE_CHILDREN: the larger of the two
    body = f"""`python scripts/bench_citations.py --db {args.db} --papers {args.papers}` (load average before: {load}).

| run | seconds | peak RSS (MB) | what |
|---|---:|---:|---|
| stage | {stage["seconds"]} | {stage["peak_rss_mb"]} | `write_references` on the corpus: {stage["references"]} entries of {stage["papers_with_references"]} papers, {stage["resolved"]} resolved ({stage["resolved_in_corpus"]} in the corpus, {stage["resolved_by_title"]} by title, {stage["resolved_by_doi"]} by DOI), {stage["with_context"]} with a citing sentence |
| index | {index["seconds"]} | {index["peak_rss_mb"]} | the resolver's arrays for {index["papers"]:,} papers: {index["index_bytes"]:,} bytes, {index["bytes_per_paper"]} a paper (ids included) |

The peak of the second run is the larger of the two (`getrusage(RUSAGE_CHILDREN)` keeps the maximum).
The resolver holds fixed-size arrays per paper, never a dictionary of titles, so its memory is linear
in the papers and its bytes per paper do not depend on the corpus size.
"""
    print(body)
    if args.write:
        write_section(TITLE, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
