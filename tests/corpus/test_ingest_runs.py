"""Ingest runs say how they ended (issue 8, item 5): finished, interrupted (Ctrl-C, SIGTERM, or killed
with -9 and found dead later) or failed; old databases gain the new columns in place."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click
import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.store import Store
from openxiv.evaluator.demo import _openxiv, _step


def openxiv_script() -> str:
    script = shutil.which("openxiv", path=str(Path(sys.executable).parent)) or shutil.which("openxiv")
    if script is None:
        pytest.skip("the openxiv console script is not installed (pip install -e .)")
    return script


def query(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def runs(db: Path) -> list[tuple[Any, ...]]:
    return query(db, "SELECT status, finished_at IS NOT NULL, read, added FROM ingest_runs ORDER BY id")


@pytest.fixture(scope="module")
def small_listing(listing_files: list[Path], tmp_path_factory: pytest.TempPathFactory, head: Any) -> Path:
    path = tmp_path_factory.mktemp("runs") / "listing-head.jsonl"
    path.write_text("".join(head(listing_files[0], 50)))
    return path


def test_a_finished_run_is_marked_finished(small_listing: Path, tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    with Store(db) as store:
        summary = store.ingest(read_path(small_listing))
    assert summary.status == "finished"
    assert runs(db) == [("finished", 1, 50, 50)]
    [(pid,)] = query(db, "SELECT pid FROM ingest_runs")
    assert pid == os.getpid()


def test_an_old_database_gains_the_run_status_in_place(small_listing: Path, tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    with Store(db) as store:
        store.ingest(read_path(small_listing))
    con = sqlite3.connect(db)  # back to the layout the old code wrote: no status, pid or host
    for column in ("status", "pid", "host"):
        con.execute(f"ALTER TABLE ingest_runs DROP COLUMN {column}")
    con.execute("INSERT INTO ingest_runs (started_at, read, added, updated, unchanged, skipped) "
                "VALUES ('2025-01-01 00:00:00', 0, 0, 0, 0, 0)")  # fmt: skip
    con.commit()
    con.close()
    with Store.open_readonly(db) as ro:  # read-only: no migration, stats still answer
        assert ro.stats()["interrupted_runs"] == 1
    with Store(db) as store:
        assert store.stats()["papers"] == 50
    assert runs(db) == [("finished", 1, 50, 50), ("interrupted", 0, 0, 0)]


def _sigint_as_a_terminal_gives_it() -> None:
    """In the child before exec: SIGINT back to its default. A child inherits an *ignored* SIGINT
    (POSIX: background jobs of a shell; here some earlier test of the session left the pytest
    process ignoring it), and Python then keeps ignoring it, as it should: the test's Ctrl-C would
    be lost and the ingest run to its end (exit 0), which made this test fail in the full suite."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _ingest_until_some_batches_landed(db: Path, listing: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [openxiv_script(), "ingest", "--db", str(db), str(listing), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
        preexec_fn=_sigint_as_a_terminal_gives_it,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if db.exists():
            try:
                if query(db, "SELECT count(*) FROM papers")[0][0] > 0:
                    break
            except sqlite3.OperationalError:
                pass  # tables not created yet
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("no batch landed within 180 s")
    assert proc.poll() is None, "the ingest finished before it could be interrupted"
    return proc


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signalled_ingest_marks_its_run_interrupted(
    listing_files: list[Path], small_listing: Path, tmp_path: Path, sig: int, code: int
) -> None:
    db = tmp_path / "c.sqlite"
    proc = _ingest_until_some_batches_landed(db, listing_files[0])
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code, (out, err)
    assert "interrupted" in out + err and "Traceback" not in err
    [(status, finished, read, added)] = runs(db)
    papers = query(db, "SELECT count(*) FROM papers")[0][0]
    assert status == "interrupted" and finished == 1
    assert 0 < papers < 74_000 and added == papers and read >= added  # what committed is counted
    assert query(db, "PRAGMA integrity_check") == [("ok",)]
    stats = json.loads(subprocess.run([openxiv_script(), "stats", "--db", str(db), "--json"],
                                      capture_output=True, text=True, check=True).stdout)  # fmt: skip
    assert stats["interrupted_runs"] == 1


def test_a_killed_ingest_is_reported_interrupted_and_the_database_is_intact(
    listing_files: list[Path], small_listing: Path, tmp_path: Path
) -> None:
    db = tmp_path / "c.sqlite"
    proc = _ingest_until_some_batches_landed(db, listing_files[0])
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    [(status, finished, _, _)] = runs(db)
    assert (status, finished) == ("running", 0)  # nobody could write the end
    assert query(db, "PRAGMA integrity_check") == [("ok",)]
    stats = json.loads(subprocess.run([openxiv_script(), "stats", "--db", str(db), "--json"],
                                      capture_output=True, text=True, check=True).stdout)  # fmt: skip
    assert stats["interrupted_runs"] == 1 and stats["papers"] > 0
    again = subprocess.run([openxiv_script(), "ingest", "--db", str(db), str(small_listing), "--no-progress"],
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert [r[0] for r in runs(db)] == ["running", "finished"]


def test_the_demo_treats_finished_with_skips_as_success(
    listing_files: list[Path], tmp_path: Path, head: Any
) -> None:
    lines = head(listing_files[0], 20)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n" + "".join(lines))
    env = {**os.environ}
    _step("ingest with one bad line", _openxiv("ingest", "--db", str(tmp_path / "c.sqlite"), str(bad)), env)
    nothing = tmp_path / "nothing.jsonl"
    nothing.write_text("{not json\n")
    with pytest.raises(click.ClickException, match="exit status 1"):
        _step("ingest nothing", _openxiv("ingest", "--db", str(tmp_path / "c.sqlite"), str(nothing)), env)
