"""Hostile ingest inputs (a flood of bad lines, one huge line) and a measured ``openxiv ingest`` of
one in a process of its own: shared by ``bench_ingest_memory.py`` and ``bench_reliability.py``."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

from harness.data import SharedData

LISTING = "listing-astro-2504-2606.jsonl.gz"
"""The shared listing whose first lines open each hostile file (real records before the flood)."""


def real_lines(n: int) -> list[bytes]:
    out = []
    with gzip.open(SharedData.default().corpus / LISTING, "rb") as fh:
        for line in fh:
            out.append(line)
            if len(out) >= n:
                break
    return out


def make_bad_lines(path: Path, n: int) -> None:
    with gzip.open(path, "wb", compresslevel=6) as fh:
        fh.writelines(real_lines(100))
        chunk = 10_000
        for start in range(0, n, chunk):
            fh.write(b"".join(b"{broken %d\n" % i for i in range(start, min(n, start + chunk))))


def make_giant_line(path: Path, size: int) -> None:
    block = b"a" * (1 << 20)
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.writelines(real_lines(100))
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
