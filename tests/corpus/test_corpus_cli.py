"""``openxiv ingest`` and ``openxiv stats`` through click's CliRunner and the installed script."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from openxiv.corpus.cli import ingest, stats


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="module")
def small_listing(listing_files: list[Path], tmp_path_factory: pytest.TempPathFactory, head: Any) -> Path:
    path = tmp_path_factory.mktemp("cli") / "listing-head.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.writelines(head(listing_files[0], 300))
    return path


def test_ingest_then_stats(
    runner: CliRunner, small_listing: Path, fulltext_dir: Path, tmp_path: Path
) -> None:
    db = tmp_path / "c.sqlite"
    unarxive = fulltext_dir / "unarxive-2212-sample.jsonl.gz"
    result = runner.invoke(ingest, ["--db", str(db), str(small_listing), str(unarxive), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "read 349, added 349, updated 0, unchanged 0, skipped 0" in result.output

    again = runner.invoke(ingest, ["--db", str(db), str(small_listing), "--no-progress"])
    assert again.exit_code == 0 and "read 300, added 0, updated 0, unchanged 300, skipped 0" in again.output

    out = runner.invoke(stats, ["--db", str(db), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert {k: data[k] for k in ("papers", "papers_with_fulltext", "skipped")} == {
        "papers": 349,
        "papers_with_fulltext": 49,
        "skipped": 0,
    }
    assert all(isinstance(data[k], int) for k in ("sections", "passages")) and data["passages"] > 0
    shares = data["completeness"]  # issue 9: per field, the papers that have it
    assert shares["papers"] == 349 and shares["fulltext"]["papers"] == 49
    assert shares["date"]["share"] == 1.0 and shares["title"]["share"] == 1.0
    assert shares["date_day"]["papers"] + shares["date_month"]["papers"] == 349
    assert shares["authors_title_block"]["of"] == 349

    table = runner.invoke(stats, ["--db", str(db)])
    assert table.exit_code == 0
    assert "papers_with_fulltext" in table.output and "349" in table.output
    assert "date_month" in table.output and "100.00%" in table.output


def test_skipped_inputs_are_listed_and_reported(
    runner: CliRunner, small_listing: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(f"{{broken {i}\n" for i in range(25)))
    report = tmp_path / "out" / "report.jsonl"
    result = runner.invoke(
        ingest, ["--db", str(tmp_path / "c.sqlite"), str(small_listing), str(bad), "--format", "listing",
                 "--report", str(report), "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 3, result.output  # finished, but some input was skipped
    assert "skipped 25" in result.output
    assert "bad.jsonl, line 1: invalid JSON" in result.output and "bad.jsonl, line 20:" in result.output
    assert "bad.jsonl, line 21:" not in result.output and "and 5 more" in result.output
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert rows[0]["type"] == "summary" and rows[0]["read"] == 300 and rows[0]["skipped"] == 25
    assert [r["location"] for r in rows[1:]] == [f"line {i}" for i in range(1, 26)]


def test_nothing_readable_fails_and_missing_paths_are_friendly(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{broken\n")
    result = runner.invoke(ingest, ["--db", str(tmp_path / "c.sqlite"), str(bad), "--no-progress"])
    assert result.exit_code == 1
    assert "nothing could be read" in result.output

    missing = runner.invoke(ingest, ["--db", str(tmp_path / "c.sqlite"), str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "does not exist" in missing.output and "Traceback" not in missing.output

    no_db = runner.invoke(stats, ["--db", str(tmp_path / "none.sqlite")])
    assert no_db.exit_code == 1 and "no corpus database" in no_db.output

    not_db = tmp_path / "text.sqlite"
    not_db.write_text("hello")
    broken = runner.invoke(stats, ["--db", str(not_db)])
    assert broken.exit_code == 1 and "not a usable corpus database" in broken.output


def test_db_defaults_to_settings(runner: CliRunner, small_listing: Path, tmp_path: Path) -> None:
    env = {"OPENXIV_DATA_DIR": str(tmp_path / "data")}
    result = runner.invoke(ingest, [str(small_listing), "--no-progress"], env=env)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "data" / "corpus.sqlite").is_file()
    out = runner.invoke(stats, ["--json"], env=env)
    assert json.loads(out.output)["papers"] == 300


def test_installed_console_script(small_listing: Path, tmp_path: Path) -> None:
    script = shutil.which("openxiv", path=str(Path(sys.executable).parent)) or shutil.which("openxiv")
    if script is None:
        pytest.skip("the openxiv console script is not installed (pip install -e .)")
    db = tmp_path / "c.sqlite"
    env = {**os.environ, "OPENXIV_DB": str(db)}
    run = subprocess.run(
        [script, "ingest", str(small_listing)], capture_output=True, text=True, env=env, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert "added 300" in run.stdout
    out = subprocess.run([script, "stats", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["papers"] == 300


def test_broken_pdfs_are_each_reported(
    runner: CliRunner, shared: Path, small_listing: Path, tmp_path: Path
) -> None:
    broken = shared / "data" / "pdfs" / "broken"
    db = str(tmp_path / "c.sqlite")
    only_broken = runner.invoke(ingest, ["--db", db, str(broken), "--no-progress"])
    assert only_broken.exit_code == 1  # nothing could be read
    assert "skipped 7" in only_broken.output
    for pdf in sorted(broken.glob("*.pdf")):
        assert f"  {pdf.name}, file: " in only_broken.output
    mixed = runner.invoke(ingest, ["--db", db, str(small_listing), str(broken), "--no-progress"])
    assert mixed.exit_code == 3 and "added 300" in mixed.output and "skipped 7" in mixed.output
    out = runner.invoke(stats, ["--db", db, "--json"])
    assert json.loads(out.output)["skipped"] == 14
