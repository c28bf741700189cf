"""Bibliographies of the 49 real unArXive papers of ../shared: read, stored, re-ingested, migrated.

What is checked on real data: each entry resolves to a canonical arXiv id (new and old style,
version stripped) or keeps its text; the store holds them in ``paper_references``; re-ingesting
changes nothing; a database made before the table gets it and the next ingest fills it; the corpus
fingerprint covers references only when there are some; the ingest keys of listings stay as they were, those of plain texts and PDFs move once (issue 41).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from openxiv.corpus.inputs import file_keys, read_key
from openxiv.corpus.readers import read_path
from openxiv.corpus.readers.unarxive import references
from openxiv.corpus.records import PaperRecord
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store

SAMPLE = SharedData.default().unarxive


@pytest.fixture(scope="module")
def records() -> list[PaperRecord]:
    if not SAMPLE.is_file():
        pytest.skip(f"shared data not found ({SAMPLE}); set OPENXIV_SHARED to the shared folder")
    out = [r for r in read_path(SAMPLE) if isinstance(r, PaperRecord)]
    assert len(out) == 49
    return out


def _rows(db: Path) -> list[tuple[object, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(
            "SELECT p.arxiv_id, r.position, r.cited_id, r.text FROM paper_references r "
            "JOIN papers p ON p.id = r.paper_id ORDER BY p.arxiv_id, r.position"
        ).fetchall()
    finally:
        con.close()


def test_the_reader_resolves_arxiv_ids_and_keeps_the_rest_as_text(records: list[PaperRecord]) -> None:
    by_id = {r.arxiv_id: r for r in records}
    assert sum(1 for r in records if r.references) == 44  # five papers of the sample have no bib_entries
    entries = [ref for r in records for ref in r.references]
    assert len(entries) == 1785
    resolved = [ref for ref in entries if ref.arxiv_id]
    assert len(resolved) == 379
    assert all(ref.text for ref in entries if not ref.arxiv_id)  # unresolved ones are their text
    # version stripped from an old-style id (the file has math/0510508v1), old-style ids kept whole
    cited = {ref.arxiv_id for ref in resolved}
    assert "math/0510508" in cited and "hep-th/9402147" in cited
    assert not any("v" in c.split("/")[-1].split(".")[-1] for c in cited if c)
    # 2212.11790 cites ResNet as its 15th entry (unarXive's OpenAlex match)
    resnet = by_id["2212.11790"].references[14]
    assert resnet.arxiv_id == "1512.03385" and resnet.text and "Deep residual learning" in resnet.text
    # an entry unarXive left unmatched that names its id in the text: "arXiv preprint arXiv:1411.2539"
    kiros = [ref for ref in by_id["2212.11790"].references if ref.text and "1411.2539" in ref.text]
    assert [ref.arxiv_id for ref in kiros] == ["1411.2539"]


def test_bad_bib_entries_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="bib_entries: expected an object or an array"):
        references("not a list")
    with pytest.raises(ValueError, match=r"bib_entries\[1\]: expected an object"):
        references([{"bib_entry_raw": "A. Author. A title. 2020."}, 7])
    assert references([{"ids": {"arxiv_id": "arXiv:2101.00001v3"}}, {"bib_entry_raw": " "}]) == [
        references([{"ids": {"arxiv_id": "2101.00001"}}])[0]
    ]


def test_stored_once_and_a_reingest_is_a_no_op(records: list[PaperRecord], tmp_path: Path) -> None:
    db = tmp_path / "corpus.sqlite"
    with Store(db) as store:
        first = store.ingest(records)
        fingerprint = store.fingerprint()
    rows = _rows(db)
    assert first.added == 49 and len(rows) == 1785
    assert sum(1 for r in rows if r[2]) == 379
    with Store(db) as store:
        again = store.ingest(records)
        assert (again.added, again.updated, again.unchanged) == (0, 0, 49)
        assert store.fingerprint() == fingerprint
    assert _rows(db) == rows


def test_an_older_database_gets_the_table_and_the_next_ingest_fills_it(
    records: list[PaperRecord], tmp_path: Path
) -> None:
    db = tmp_path / "corpus.sqlite"
    with Store(db) as store:
        store.ingest(records)
        with_refs = store.fingerprint()
    con = sqlite3.connect(db)  # what a database written before references looks like
    con.execute("DROP TABLE paper_references")
    con.commit()
    con.close()
    with Store.open_readonly(db) as ro:  # read-only: not migrated, and nothing breaks
        old = ro.fingerprint()
        assert ro.get_paper("2212.11790") is not None
    assert old != with_refs  # references are part of what an index is built from
    with Store(db) as store:
        assert store.migrated == ["table:paper_references"]
        assert store.fingerprint() == old  # an empty table leaves the fingerprint as it was
        summary = store.ingest(records)
        assert (summary.added, summary.updated, summary.unchanged) == (0, 44, 5)
        assert store.fingerprint() == with_refs
    assert len(_rows(db)) == 1785


def test_a_listing_only_corpus_keeps_its_fingerprint(tmp_path: Path) -> None:
    """No references, no change: the fingerprint is the one main computed (papers and hashes only)."""
    import hashlib
    import itertools

    listing = SharedData.default().listing("cs")
    if not listing.is_file():
        pytest.skip("shared listing not found")
    db = tmp_path / "corpus.sqlite"
    with Store(db) as store:
        store.ingest(itertools.islice(read_path(listing), 200))
        fingerprint = store.fingerprint()
    con = sqlite3.connect(db)
    h = hashlib.sha256()
    for aid, ch in con.execute("SELECT arxiv_id, content_hash FROM papers ORDER BY arxiv_id"):
        h.update(f"{aid}\t{ch}\n".encode())
    con.close()
    assert fingerprint == h.hexdigest()


def test_the_unarxive_and_full_text_ingest_keys_move(tmp_path: Path) -> None:
    settings = Settings.from_env()
    listing, plaintext = SharedData.default().listing("cs"), SharedData.default().plaintext
    key = file_keys(None, settings)
    before = json.loads(read_key(None, settings))  # the key main recorded for every file
    assert set(before) == {"format", "passage_words", "passage_overlap", "openxiv", "data_version"}
    assert key(listing) == read_key(None, settings)  # listings carry no bibliography: not read again
    assert json.loads(key(SAMPLE)) == {**before, "references": 1}
    # plain texts (and PDFs) are read again once for the bibliographies openxiv now parses (issue 41)
    assert json.loads(key(plaintext)) == {**before, "bibliography": 1}
    pdf = next((SharedData.default().pdfs / "valid").glob("*.pdf"))
    assert json.loads(key(pdf)) == {**before, "bibliography": 1}
    assert file_keys("unarxive", settings)(listing) != file_keys("listing", settings)(listing)
