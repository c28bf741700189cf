"""The one normaliser (`openxiv.corpus.normalize`) and the migration of values it stores."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from openxiv.corpus.normalize import fold, heading_key, normalize_name, normalize_title
from openxiv.corpus.readers.listing import parse_listing
from openxiv.corpus.store import Store

# real listing papers whose titles or authors are not ASCII
SMORREBROD = "2504.01540"  # "From Smør-re-brød to Subwords: ..."
PANORAMA = "2504.07940"  # "... Generating 360° Panoramic Videos ..."
TURKISH = "2508.13058"  # "Doğal Dil İşlemede ...", author "Savaş Yıldırım"


@pytest.fixture(scope="module")
def non_ascii_records(listing_files: list[Path]) -> dict[str, dict[str, object]]:
    wanted = {SMORREBROD, PANORAMA, TURKISH}
    found: dict[str, dict[str, object]] = {}
    with gzip.open(listing_files[0], "rt", encoding="utf-8") as fh:
        for line in fh:
            if any(f'"{aid}"' in line[:40] for aid in wanted):
                obj = json.loads(line)
                found[obj["id"]] = obj
    assert set(found) == wanted
    return found


def test_titles_and_names_share_one_fold() -> None:
    for text in ("From Smør-re-brød to Subwords", "Savaş Yıldırım", "王小明", "360° Panoramic"):
        assert normalize_title(text) == normalize_name(text) == fold(text)
    assert fold("From Smør-re-brød to Subwords") == fold("From Smor re brod to subwords")
    assert fold("Savaş Yıldırım") == "savas yildirim"
    assert (
        fold("Generating 360° Panoramic Videos") == "generating 360 panoramic videos"
    )  # a symbol is a space
    assert fold("  BERT: Pre-training of Deep {Bidirectional} Transformers ") == (
        "bert pre training of deep bidirectional transformers"
    )


def test_heading_key() -> None:
    assert heading_key("ACKNOWLEDGMENTS.") == "acknowledgments"
    assert heading_key("3.2   Related\nWork:") == "3.2 related work"
    assert heading_key("3.2 Related Work", strip_number=True) == "related work"
    assert heading_key("IV. Results", strip_number=True) == "results"
    assert heading_key("A Simple Baseline", strip_number=True) == "a simple baseline"


def test_old_database_gets_folded_titles_and_names(
    non_ascii_records: dict[str, dict[str, object]], tmp_path: Path
) -> None:
    """A database written with the old title rule (NFKD, Unicode word characters kept) is refolded once."""
    db = tmp_path / "corpus.sqlite"
    with Store(db) as store:
        store.ingest(
            parse_listing(obj, f"listing:l.jsonl:{i}") for i, obj in enumerate(non_ascii_records.values())
        )
        fresh = store.fingerprint()
        assert store.find_by_title(
            "From Smor re brod to Subwords: Training LLMs on Danish, One Morpheme at a Time"
        ) == [SMORREBROD]
    con = sqlite3.connect(db)  # what an older openxiv wrote: its own rule, no data version
    con.execute(
        "UPDATE papers SET title_norm = 'from smør re brød to subwords training llms on danish one morpheme at a time' WHERE arxiv_id = ?",
        (SMORREBROD,),
    )
    con.execute("UPDATE paper_authors SET name_norm = 'savaş yıldırım' WHERE name = 'Savaş Yıldırım'")
    con.execute("PRAGMA user_version = 0")
    con.commit()
    con.close()
    native = "From Smør-re-brød to Subwords: Training LLMs on Danish, One Morpheme at a Time"
    ascii_spelling = "From Smor-re-brod to Subwords: Training LLMs on Danish, One Morpheme at a Time"
    with Store.open_readonly(db) as ro:  # not migrated, but the old values still match the native spelling
        assert ro.find_by_title(native) == [SMORREBROD]
        assert ro.find_by_title(ascii_spelling) == []
    with Store(db) as store:
        assert store.migrated == ["data.1"]
        assert store.fingerprint() == fresh  # indexed content is unchanged
        assert store.find_by_title(native) == store.find_by_title(ascii_spelling) == [SMORREBROD]
        assert store.find_by_title(
            "Beyond the Frame: Generating 360 Panoramic Videos from Perspective Videos"
        ) == [PANORAMA]
    con = sqlite3.connect(db)
    assert con.execute("SELECT name_norm FROM paper_authors WHERE name = 'Savaş Yıldırım'").fetchone() == (
        "savas yildirim",
    )
    assert con.execute("PRAGMA user_version").fetchone() == (1,)
    con.close()
    with Store(db) as store:
        assert store.migrated == []
