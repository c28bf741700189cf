"""Ingest rate of the corpus store on the shared files, and peak memory.

Each phase runs in a fresh child process (so its peak RSS is its own) against a fresh temporary
database: the two listing files (first ingest, then a re-ingest that must change nothing), the
plain-text full texts, and the unarXive sample. Prints a table and rewrites the ``## Ingest``
section of BENCHMARKS.md.

    .venv/bin/python scripts/bench_ingest.py [--no-write]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.data import SharedData
from harness.report import load_average, write_section
from sqlalchemy import event
from sqlalchemy.engine import Engine

from openxiv.corpus.settings.model import Settings

COMMAND = ".venv/bin/python scripts/bench_ingest.py"


def _phase(name: str, paths: list[str], reingest: bool, queue: Any) -> None:
    from openxiv.corpus.readers import read_path
    from openxiv.corpus.records import PaperRecord
    from openxiv.corpus.store import Store

    settings = Settings.from_env()
    # CPU seconds of this round in SQLite's batched inserts (``executemany`` INSERTs) and in building
    # the indexes a first load deferred (CREATE INDEX), timed by SQLAlchemy's cursor events on every
    # engine: the product is measured as it runs, not patched
    inserts, indexes = [0.0], [0.0]
    started: list[float] = []

    def kind(statement: str, many: bool) -> list[float] | None:
        if statement.startswith("INSERT") and many:
            return inserts
        return indexes if statement.startswith("CREATE INDEX") else None

    @event.listens_for(Engine, "before_cursor_execute")
    def before(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
        started.append(time.process_time())

    @event.listens_for(Engine, "after_cursor_execute")
    def after(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
        t = started.pop()
        if (acc := kind(statement.lstrip().upper(), many)) is not None:
            acc[0] += time.process_time() - t

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "corpus.sqlite")
        rows = []
        rounds = ["read only", "first", "again"] if reingest else ["first"]
        for label in rounds:
            start = time.perf_counter()
            cpu = time.process_time()
            inserts[0] = indexes[0] = 0.0
            totals = {"read": 0, "added": 0, "updated": 0, "unchanged": 0, "skipped": 0}
            items = (item for p in paths for item in read_path(p))
            if label == "read only":  # the readers alone: what the database adds is the rest
                for item in items:
                    totals["read" if isinstance(item, PaperRecord) else "skipped"] += 1
            else:  # one run over all the files, as `openxiv ingest DB FILE...` does
                s = store.ingest(items, settings=settings)
                totals = {k: getattr(s, k) for k in totals}
            seconds = time.perf_counter() - start
            cpu_seconds = time.process_time() - cpu
            load = os.getloadavg()[0]
            rows.append(
                {"round": label, "seconds": seconds, "cpu": cpu_seconds, "inserts": inserts[0],
                 "indexes": indexes[0], "load": load,
                 "fingerprint": "—" if label == "read only" else f"`{store.fingerprint()[:12]}`"}
                | totals
            )  # fmt: skip
        stats = store.stats()
        store.close()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put({"rows": rows, "stats": stats, "peak_mb": peak_mb})


def run_phase(name: str, paths: list[Path], reingest: bool = False) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_phase, args=(name, [str(p) for p in paths], reingest, queue))
    proc.start()
    result: dict[str, Any] = queue.get()
    proc.join()
    return result


def _budget(rows: list[dict[str, Any]]) -> list[str]:
    """Where a listing first ingest's CPU goes against the 10,000 records per CPU second target."""
    by = {r["round"]: r for r in rows}
    read, first = by["read only"], by["first"]
    allowed = first["read"] / 10_000
    fixed = read["cpu"] + first["inserts"] + first["indexes"]
    rest = first["cpu"] - fixed
    verdict = "met" if first["cpu"] <= allowed else "missed"
    return [
        f"Target {verdict}: 10,000 records per CPU second allows {allowed:.1f} CPU s for the "
        f"{first['read']:,} listing lines; the first ingest took {first['cpu']:.1f}: the readers "
        f"{read['cpu']:.1f} (`read only`), SQLite's inserts {first['inserts']:.1f} and the index build "
        f"{first['indexes']:.1f} ({fixed:.1f} together), and the store's Python work (merging records, "
        f"folding titles and names, hashing, building rows) {rest:.1f}.",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args()
    shared = SharedData.default()
    if not shared.available:
        sys.exit(shared.missing_message())
    corpus, fulltext = shared.corpus, shared.fulltext
    phases = [
        ("listing (2 files)", sorted(corpus.glob("listing-*.jsonl.gz")), True),
        ("plain-text full texts", [fulltext / "plaintext-9108-1612.jsonl.gz"], False),
        ("unarXive sample", [fulltext / "unarxive-2212-sample.jsonl.gz"], False),
    ]
    lines = [
        "| input | round | records | added | updated | unchanged | skipped | wall s | records/s (wall) "
        "| CPU s | of which SQLite inserts | of which index build | records/CPU s | load avg | papers | passages "
        "| fingerprint | peak RSS MiB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    load_start = load_average()
    budget: list[str] = []
    for name, paths, reingest in phases:
        print(f"{name}: {', '.join(p.name for p in paths)} ...", flush=True)
        res = run_phase(name, paths, reingest)
        if reingest:
            budget = _budget(res["rows"])
        for row in res["rows"]:
            rate = row["read"] / row["seconds"] if row["seconds"] else 0.0
            cpu_rate = row["read"] / row["cpu"] if row["cpu"] else 0.0
            line = (
                f"| {name} | {row['round']} | {row['read']:,} | {row['added']:,} | {row['updated']:,} | "
                f"{row['unchanged']:,} | {row['skipped']:,} | {row['seconds']:.1f} | {rate:,.0f} | "
                f"{row['cpu']:.1f} | {row['inserts']:.1f} | {row['indexes']:.1f} | {cpu_rate:,.0f} | {row['load']:.1f} | "
                f"{res['stats']['papers']:,} | {res['stats']['passages']:,} | {row['fingerprint']} | "
                f"{res['peak_mb']:,.0f} |"
            )
            lines.append(line)
            print(line, flush=True)
    load_end = load_average()
    s = Settings.from_env()
    body = "\n".join(
        [
            "Records read per second by `Store.ingest(read_path(...))` into a fresh SQLite file (WAL, batched",
            "transactions), reading the gzipped shared files, all files of an input in one run as",
            "`openxiv ingest DB FILE...` does. `again` re-ingests the same files into the same",
            "database (every record unchanged). Full texts are cut into passages of "
            f"{s.passage_words} words with {s.passage_overlap} overlap at ingest. Peak RSS is that of the child",
            "process running the phase. Other jobs share the 2 cores, so the wall-clock rate depends on the",
            "load average (1-minute, sampled at the end of each round); the rate per CPU second is steadier",
            "but also drops under load (shared caches and cores). `read only` runs the readers alone",
            "(decompress, parse, check, build the records; no database): `first` minus it is what the",
            "store costs (merging, hashing and SQLite's inserts into the tables and their indexes);",
            "`of which SQLite inserts` is the CPU inside the batched ``executemany`` calls, `of which index",
            "build` the secondary indexes a first load into an empty database builds once at its end",
            "(docs/corpus.md, «Speed»). `fingerprint` is `Store.fingerprint()` after the round (the same in",
            "every round: nothing changed).",
            "Target (issue 13): at least 10,000 listing records per CPU second into a fresh database,",
            "and `again` at least as fast as `first`.",
            f"Load average (1 / 5 / 15 min) at the start {load_start}, at the end {load_end}.",
            f"Python {platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}.",
            "",
            *lines,
            "",
            *budget,
            f"Command: `{COMMAND}`",
        ]
    )
    if not args.no_write:
        write_section("Ingest", body)


if __name__ == "__main__":
    main()
