"""Peak memory of `openxiv ingest` on hostile inputs: a flood of bad lines, and one huge line.

Two generated ``.gz`` files, each ingested by ``openxiv ingest --report`` in a process of its own
(peak resident memory from ``getrusage(RUSAGE_CHILDREN)`` after it exits):

- ``bad-lines``: N invalid JSON lines (default 2,000,000) after 100 real listing lines;
- ``giant-line``: 100 real listing lines, then one line of G bytes (default 2 GiB) without a line
  break, which gzip packs into about 2 MB.

Usage: ``python scripts/bench_ingest_memory.py [--bad-lines N] [--giant-bytes G] [--workdir DIR] [--write]``
(``--write`` rewrites the «Ingest memory» section of BENCHMARKS.md). Needs ``../shared`` for the
real listing lines.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.ingest_inputs import make_bad_lines, make_giant_line, run_ingest
from harness.report import load_average, write_section


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bad-lines", type=int, default=2_000_000)
    ap.add_argument("--giant-bytes", type=int, default=2 << 30)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument(
        "--write", action="store_true", help="rewrite the «Ingest memory» section of BENCHMARKS.md"
    )
    args = ap.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ingest-memory-"))
    workdir.mkdir(parents=True, exist_ok=True)
    load = load_average()
    bad, giant = workdir / "bad-lines.jsonl.gz", workdir / "giant-line.jsonl.gz"
    if not bad.exists():
        make_bad_lines(bad, args.bad_lines)
    if not giant.exists():
        make_giant_line(giant, args.giant_bytes)
    rows = [run_ingest(giant, workdir), run_ingest(bad, workdir)]
    for row in rows:
        print(json.dumps(row))
    if args.write:
        table = "\n".join(
            f"| {r['file']} | {r['file_mb']} | {r['exit']} | {r['peak_rss_mb']} | {r['seconds']} | {r['report_lines']:,} |"
            for r in rows
        )
        write_section(
            "Ingest memory",
            f"Peak resident memory of one `openxiv ingest --report` process per generated file "
            f"({args.bad_lines:,} invalid lines after 100 real listing lines; 100 real lines, then one "
            f"line of {args.giant_bytes:,} bytes). Load average at the start: {load}.\n\n"
            "| file | MB on disk | exit | peak RSS MB | seconds | report lines |\n|---|---:|---:|---:|---:|---:|\n"
            f"{table}\n\nCommand: `python scripts/bench_ingest_memory.py --write`",
        )


if __name__ == "__main__":
    main()
