"""``openxiv index build --until``: a real BM25-only build of listing papers and plain-text full texts
from ../shared leaves out every paper first submitted after the cutoff, and says so in its manifest."""

from __future__ import annotations

import json
import sqlite3
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner
from small_index import make_db, records

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.indexer.building.cutoff import apply_cutoff, submitted_by
from openxiv.indexer.building.job import build_index_report
from openxiv.indexer.snapshot import open_index

UNTIL = date(2025, 3, 18)  # the first 400 cs listing papers were listed on 2025-03-18 (328) and -19 (72)


def test_a_month_only_date_counts_as_the_months_last_day() -> None:
    assert submitted_by("1605.00001", None, None) == date(2016, 5, 31)
    assert submitted_by("1602.00001", None, None) == date(2016, 2, 29)
    assert submitted_by("hep-th/9901001", None, None) == date(1999, 1, 31)
    assert submitted_by("2503.00001", None, date(2025, 3, 19)) == date(2025, 3, 19)
    assert submitted_by("2503.00001", date(2025, 3, 2), date(2025, 3, 19)) == date(2025, 3, 2)  # v1 first


@pytest.fixture(scope="module")
def db(shared: SharedData, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("cutoff") / "corpus.sqlite", records(shared, 400, 0, 30))


def _dates(path: Path) -> dict[str, date | None]:
    with Store.open_readonly(path) as store:
        return {p.arxiv_id: submitted_by(p.arxiv_id, p.published, p.first_seen) for p in store.iter_papers()}


def test_apply_cutoff_deletes_later_papers_and_everything_they_hold(db: Path, tmp_path: Path) -> None:
    before = _dates(db)
    full_text = sorted(a for a, d in before.items() if d is not None and d.year < 2020)
    month = before[full_text[len(full_text) // 2]]
    assert month is not None
    until = month.replace(day=15)  # mid-month: that month's papers (month precision) are out
    copy = tmp_path / "copy.sqlite"
    with Store.open_readonly(db) as store:
        store.copy_to(copy)
    info = apply_cutoff(copy, until)
    after = _dates(copy)
    later = {a for a, d in before.items() if d is not None and d > until}
    assert set(after) == set(before) - later and all(d is not None and d <= until for d in after.values())
    assert info.until == until.isoformat() and info.removed_later == len(later) and info.kept == len(after)
    assert full_text[len(full_text) // 2] not in after  # its month ends after the 15th
    conn = sqlite3.connect(copy)
    try:
        orphans = [
            conn.execute(
                f"SELECT count(*) FROM {t} WHERE paper_id NOT IN (SELECT id FROM papers)"
            ).fetchone()[0]
            for t in ("sections", "passages", "paper_authors", "paper_categories", "paper_sources")
        ]
    finally:
        conn.close()
    assert orphans == [0, 0, 0, 0, 0]
    assert len(_dates(db)) == len(before)  # the source database is untouched


def test_build_until_leaves_later_papers_out_of_every_part(db: Path, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, embed="none", build_until=UNTIL)
    report = build_index_report(db, tmp_path / "index", settings, progress=False)
    cut = report.manifest.corpus.cutoff
    assert (
        cut is not None and cut.until == "2025-03-18" and cut.removed_later == 72 and cut.removed_undated == 0
    )
    assert report.manifest.counts.papers == cut.kept == 328 + 30
    assert report.manifest.build_config is not None and report.manifest.build_config["until"] == "2025-03-18"
    later = [a for a, d in _dates(db).items() if d is not None and d > UNTIL]
    with open_index(tmp_path / "index", settings) as ix:
        assert all(ix.backend.meta.row_of(a) is None and ix.store.get_paper(a) is None for a in later)
        titles = ix.backend.search("language model reasoning benchmark", top_k=100)
        assert titles.hits and not {h.arxiv_id for h in titles.hits} & set(later)
    plain = build_index_report(
        db, tmp_path / "plain", Settings(data_dir=tmp_path, embed="none"), progress=False
    )
    assert plain.manifest.corpus.cutoff is None and "until" not in (plain.manifest.build_config or {})
    assert plain.manifest.counts.papers == 400 + 30


def test_cli_until_flag_and_its_errors(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openxiv.indexer.cli import index

    monkeypatch.setenv("OPENXIV_DATA_DIR", str(tmp_path))
    runner = CliRunner()
    args = ["build", "--db", str(db), "--index", str(tmp_path / "ix"), "--embed", "none", "--no-progress"]
    out = runner.invoke(index, [*args, "--until", "2025-03-18"])
    assert out.exit_code == 0, out.output
    assert "until:    2025-03-18 (left out: 72 submitted later, 0 without a date)" in out.output
    info = json.loads(runner.invoke(index, ["info", "--index", str(tmp_path / "ix"), "--json"]).stdout)
    assert info["corpus"]["cutoff"]["until"] == "2025-03-18"
    text = runner.invoke(index, ["info", "--index", str(tmp_path / "ix")]).stdout  # the text shows it too
    assert "until        2025-03-18 (left out: 72 submitted later, 0 without a date)" in text
    bad = runner.invoke(index, [*args, "--until", "2025-13-01"])
    assert bad.exit_code == 2 and "until" in bad.output.lower()
    none_left = runner.invoke(index, [*args, "--until", "1980-01-01"])
    assert none_left.exit_code == 1 and "no paper" in none_left.output
