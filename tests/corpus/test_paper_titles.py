"""Every paper has a title, and says where it comes from (issue 21, item 2): titles that a plain
text's opening holds past report numbers, over two lines or before an author line are recovered;
a paper without one gets a derived title marked ``title_source = derived``."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from openxiv.corpus.merge import merge_record, state_from_record
from openxiv.corpus.readers import read_path
from openxiv.corpus.readers.plaintext import parse_plaintext
from openxiv.corpus.records import PaperRecord
from openxiv.corpus.store import Store

UNTITLED = "astro-ph/0305592"  # opens with an "Abstract" heading: no title in the text
RECOVERED = {
    # report number, a title over two blocks (the first ends with a colon), then the author line
    "hep-ph/0004165": "QED in a Strong External Magnetic Field: Beyond the Constant Mass Approximation",
    # a publication note before the title
    "astro-ph/0308226": "Future Astrometry with ALMA to characterise extra-solar planet orbits",
    # a report number ("LTH 739"), the title, the author, the affiliation
    "hep-th/0703035": "Supersymmetric Black Holes in String Theory",
    # author and affiliation first, then the title
    "0810.1839": "Global entanglement and coherent states in an N-partite system",
    # a page header is not cut from a title that goes on in lower case
    "1111.5325": "NGC 3801 caught in the act: A post-merger starforming early-type galaxy with AGN-jet feedback",
}
WANTED = {*RECOVERED, UNTITLED}


@pytest.fixture(scope="module")
def texts(fulltext_dir: Path, plaintexts_by_id: Any) -> dict[str, dict[str, str]]:
    return plaintexts_by_id(fulltext_dir, WANTED)


def test_titles_the_opening_holds_are_recovered(texts: dict[str, dict[str, str]]) -> None:
    for arxiv_id, title in RECOVERED.items():
        rec = parse_plaintext(texts[arxiv_id], "plaintext:test:1")
        assert (rec.title, rec.title_source) == (title, "text"), arxiv_id
        assert all(title.split(":")[0] not in s.name for s in rec.sections), arxiv_id  # not a heading
    qed = parse_plaintext(texts["hep-ph/0004165"], "plaintext:test:1")
    assert qed.authors == ["J.Alexandre", "K. Farakos", "G. Koutsoumbas"]
    assert qed.abstract and qed.abstract.startswith("We solve the Schwinger-Dyson equations")
    assert parse_plaintext(texts["hep-th/0703035"], "t:1").authors == ["Thomas Mohaupt"]


def test_a_paper_without_a_title_gets_a_derived_one_that_a_real_title_replaces(
    texts: dict[str, dict[str, str]],
) -> None:
    rec = parse_plaintext(texts[UNTITLED], "plaintext:test:1")
    assert rec.title is None
    state = state_from_record(rec)
    assert state.title_source == "derived"
    assert state.title == (
        "We present the results of 16 hours of ongoing observations of the galactic center region (including Sagittarius A*)…"
    )
    listed = PaperRecord(
        arxiv_id=UNTITLED, source="listing:l.jsonl:1", title="Whipple Observations of the GC"
    )
    merged = merge_record(state, listed)
    assert (merged.title, merged.title_source) == ("Whipple Observations of the GC", "metadata")
    # a derived title never replaces a real one, whatever the order
    back = merge_record(merged, rec)
    assert (back.title, back.title_source) == ("Whipple Observations of the GC", "metadata")
    recovered = parse_plaintext(texts["hep-th/0703035"], "plaintext:test:1")
    over = merge_record(state_from_record(recovered), listed)  # metadata beats text
    assert over.title_source == "metadata"


def _plaintext_head(fulltext_dir: Path, path: Path, n: int) -> None:
    with gzip.open(fulltext_dir / "plaintext-9108-1612.jsonl.gz", "rt") as src, gzip.open(path, "wt") as out:
        for i, line in enumerate(src):
            if i >= n:
                break
            out.write(line)


def test_no_paper_is_stored_without_a_title_and_old_databases_are_migrated(
    fulltext_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "plain.jsonl.gz"
    _plaintext_head(fulltext_dir, path, 400)
    db = tmp_path / "c.sqlite"
    with Store(db) as store:
        store.ingest(read_path(path))
    with sqlite3.connect(db) as conn:
        counts = dict(conn.execute("SELECT title_source, count(*) FROM papers GROUP BY 1").fetchall())
        assert conn.execute("SELECT count(*) FROM papers WHERE title IS NULL OR title = ''").fetchone() == (
            0,
        )
        assert set(counts) == {"text", "derived"} and sum(counts.values()) == 400, counts
        derived = conn.execute(
            "SELECT arxiv_id, title, content_hash FROM papers WHERE title_source = 'derived'"
        ).fetchall()
        # an older database: no title_source column, no title for those papers
        conn.execute(
            "UPDATE papers SET title = NULL, title_norm = NULL, content_hash = 'old' WHERE title_source = 'derived'"
        )
        conn.execute("ALTER TABLE papers DROP COLUMN title_source")
    with Store(db) as store:
        assert "papers.title_source" in store.migrated
        fingerprint = store.fingerprint()
    with sqlite3.connect(db) as conn:
        again = conn.execute(
            "SELECT arxiv_id, title, content_hash FROM papers WHERE title_source = 'derived'"
        ).fetchall()
        assert sorted(again) == sorted(derived)  # the same titles and content hashes as an ingest
        assert dict(conn.execute("SELECT title_source, count(*) FROM papers GROUP BY 1").fetchall()) == counts
    with Store(db) as store:  # re-ingesting the same file changes nothing
        summary = store.ingest(read_path(path))
        assert (summary.unchanged, summary.updated, store.fingerprint()) == (400, 0, fingerprint)


def test_a_database_from_before_title_source_reads_read_only(fulltext_dir: Path, tmp_path: Path) -> None:
    """An index snapshot's copy of the corpus made before ``title_source`` existed is opened
    read-only (no migration): its papers are served with ``title_source`` left at its default.
    Reading them raised ``KeyError: 'title_source'`` on every search of such a snapshot."""
    path = tmp_path / "plain.jsonl.gz"
    _plaintext_head(fulltext_dir, path, 50)
    db = tmp_path / "c.sqlite"
    with Store(db) as store:
        store.ingest(read_path(path))
        ids = [p.arxiv_id for p in store.iter_papers()][:20]
        titles = {i: p.title for i, p in store.get_papers(ids).items()}
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE papers DROP COLUMN title_source")
    old = Store.open_readonly(db)
    try:
        papers = old.get_papers(ids)
    finally:
        old.close()
    assert {i: p.title for i, p in papers.items()} == titles
    assert {p.title_source for p in papers.values()} == {None}
