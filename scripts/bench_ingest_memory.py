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
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import load_average, write_section

ROOT = Path(__file__).resolve().parent.parent
LISTING = ROOT.parent / "shared" / "data" / "corpus" / "listing-astro-2504-2606.jsonl.gz"


def _real_lines(n: int) -> list[bytes]:
    out = []
    with gzip.open(LISTING, "rb") as fh:
        for line in fh:
            out.append(line)
            if len(out) >= n:
                break
    return out


def make_bad_lines(path: Path, n: int) -> None:
    with gzip.open(path, "wb", compresslevel=6) as fh:
        fh.writelines(_real_lines(100))
        chunk = 10_000
        for start in range(0, n, chunk):
            fh.write(b"".join(b"{broken %d\n" % i for i in range(start, min(n, start + chunk))))


def make_giant_line(path: Path, size: int) -> None:
    block = b"a" * (1 << 20)
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.writelines(_real_lines(100))
        fh.write(b'{"id": "2504.00001", "title": "')
        for _ in range(size // len(block)):
            fh.write(block)


def run_ingest(path: Path, workdir: Path) -> dict[str, object]:
    """``openxiv ingest`` of ``path`` into a fresh database; its exit status, peak RSS and time."""
    db, report = workdir / f"{path.stem}.sqlite", workdir / f"{path.stem}.report.jsonl"
    for f in (db, report):
        f.unlink(missing_ok=True)
    out, err = workdir / f"{path.stem}.stdout", workdir / f"{path.stem}.stderr"
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "openxiv.service.cli", "ingest", str(path), "--db", str(db)]
    with out.open("w") as fo, err.open("w") as fe:
        proc = subprocess.Popen([*cmd, "--report", str(report), "--no-progress"], stdout=fo, stderr=fe)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak (ru_maxrss, KiB)
        proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - t0
    with report.open() if report.exists() else open(os.devnull) as fh:
        reported = sum(1 for _ in fh) - 1
    return {
        "file": path.name,
        "file_mb": round(path.stat().st_size / 1e6, 2),
        "exit": proc.returncode,
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "seconds": round(seconds, 1),
        "report_lines": reported,
        "stdout_head": out.read_text().strip()[:200],
        "stderr_tail": err.read_text().strip()[-300:],
    }


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
