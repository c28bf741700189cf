"""The ledger store: records round-trip whole, bodies come back byte for byte, segments rotate and are
pruned, several writers share one folder, and what cannot be read is reported and skipped."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
from pathlib import Path

import pytest

from openxiv.corpus.ledger.records import LedgerRecord, Read, Returned, check_tag
from openxiv.corpus.ledger.store import LedgerError, LedgerReader, LedgerWriter, body_sha256, segments


def record(i: int, body: bytes, run: str = "r1", question: str | None = "q1") -> LedgerRecord:
    return LedgerRecord(
        time=f"2026-11-29T07:00:{i % 60:02d}.000000+00:00",
        run=run,
        question=question,
        front="http",
        method="POST",
        route="/search",
        kind="search",
        params={"query": f"query {i}", "top_k": 10},
        status=200,
        latency_ms=12.5,
        snapshot="20261129T070000",
        request_key=f"key-{i}",
        body_sha256=body_sha256(body),
        body_bytes=len(body),
        content_type="application/json",
        returned=(Returned("2301.00001", 1), Returned("hep-th/9901001", 2, query=1)),
        read=(Read("2301.00001", "section", section="Introduction"), Read("2301.00002", "find", query="x")),
        cutoff="2023-01-31",
        leaks=2,
        leaked=("2302.00001", "2303.00001"),
        fault=None,
    )


def test_records_and_bodies_round_trip(tmp_path: Path) -> None:
    writer = LedgerWriter(tmp_path / "ledger")
    bodies = [json.dumps({"i": i, "pad": "x" * (i * 300)}).encode() for i in range(6)]  # raw and zlib
    for i, body in enumerate(bodies):
        writer.append(record(i, body, question=f"q{i % 2}"), body)
    writer.append(record(6, bodies[0], run="r2", question=None), bodies[0])  # same body stored once
    writer.close()
    reader = LedgerReader(tmp_path / "ledger")
    got = list(reader.records())
    assert [r.params["query"] for r in got] == [f"query {i}" for i in range(7)]
    assert got[0] == record(0, bodies[0], question="q0")  # every field (seq/segment aside)
    assert got[0].seq == 1 and got[0].segment == "ledger-000001.sqlite"
    assert [reader.body(r.body_sha256) for r in got] == [*bodies, bodies[0]]
    assert [r.params["query"] for r in reader.records(run="r1", question="q1")] == [
        "query 1",
        "query 3",
        "query 5",
    ]
    runs = {s.run: s for s in reader.runs()}
    assert runs["r1"].questions == ("q0", "q1") and runs["r1"].calls == 6 and runs["r2"].calls == 1
    assert runs["r2"].questions == ()
    with sqlite3.connect(segments(tmp_path / "ledger")[0]) as conn:
        assert conn.execute("SELECT count(*) FROM bodies").fetchone() == (6,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert LedgerRecord.from_json(got[3].to_json()) == got[3]


def test_segments_rotate_and_only_the_newest_are_kept(tmp_path: Path) -> None:
    root = tmp_path / "ledger"
    writer = LedgerWriter(root, segment_bytes=128 * 1024, keep=3)
    for i in range(120):
        body = os.urandom(3000)  # incompressible: about one page per call
        writer.append(record(i, body), body)
    writer.close()
    names = [p.name for p in segments(root)]
    assert len(names) == 3 and names[-1] > "ledger-000004.sqlite"
    kept = list(LedgerReader(root).records())
    assert 30 < len(kept) < 120
    assert [r.params["query"] for r in kept] == [
        f"query {i}" for i in range(120 - len(kept), 120)
    ]  # newest, in order
    for seg in segments(root)[:-1]:
        assert seg.stat().st_size < 2 * 128 * 1024


def _write_many(root: str, worker: int) -> None:
    writer = LedgerWriter(Path(root), segment_bytes=1 << 20)
    for i in range(50):
        body = f"{worker}-{i}".encode()
        writer.append(record(i, body, run=f"w{worker}"), body)
    writer.close()


def test_several_processes_append_to_one_folder(tmp_path: Path) -> None:
    root = tmp_path / "ledger"
    LedgerWriter(root).close()
    procs = [
        multiprocessing.get_context("spawn").Process(target=_write_many, args=(str(root), w))
        for w in range(3)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    reader = LedgerReader(root)
    for w in range(3):
        got = list(reader.records(run=f"w{w}"))
        assert [reader.body(r.body_sha256) for r in got] == [f"{w}-{i}".encode() for i in range(50)]


def test_unreadable_rows_are_reported_and_skipped(tmp_path: Path) -> None:
    root = tmp_path / "ledger"
    writer = LedgerWriter(root)
    for i in range(3):
        writer.append(record(i, b"{}"), b"{}")
    writer.close()
    with sqlite3.connect(segments(root)[0]) as conn:
        conn.execute("UPDATE calls SET record = '{\"time\": 1' WHERE seq = 2")
    reader = LedgerReader(root)
    assert [r.seq for r in reader.records()] == [1, 3]
    assert len(reader.errors) == 1 and "row 2" in reader.errors[0]


def test_not_a_ledger_and_later_versions_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="no such folder"):
        LedgerReader(tmp_path / "missing")
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(LedgerError, match="not an openxiv ledger"):
        LedgerReader(other)
    root = tmp_path / "ledger"
    LedgerWriter(root).close()
    with sqlite3.connect(segments(root)[0]) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'ledger_version'")
    with pytest.raises(LedgerError, match="version 99"):
        LedgerReader(root)


@pytest.mark.parametrize("bad", ["", "-x", "a/b", "a b", "x" * 129, "q?1", "é"])
def test_bad_tags_are_named(bad: str) -> None:
    with pytest.raises(ValueError, match="question tag"):
        check_tag(bad, "question")
    assert check_tag("arb-deep:7", "run") == "arb-deep:7"
