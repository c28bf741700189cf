"""The Store on real data: upserts, merges, idempotence and the read API the indexer/service use."""

from __future__ import annotations

import gzip
import itertools
import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from openxiv.corpus.ids import try_canonical_id
from openxiv.corpus.normalize import normalize_title
from openxiv.corpus.readers import read_path
from openxiv.corpus.records import PaperRecord, ReadError
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.store import IngestSummary, Store

SETTINGS = Settings(passage_words=120, passage_overlap=30)
PLAINTEXT_LINES = 150


def table_counts(db: Path) -> dict[str, int]:
    con = sqlite3.connect(db)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            n: con.execute(f"SELECT count(*) FROM {n}").fetchone()[0] for n in names if n != "ingest_runs"
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def unarxive_path(fulltext_dir: Path) -> Path:
    return fulltext_dir / "unarxive-2212-sample.jsonl.gz"


@pytest.fixture(scope="module")
def oai_path(unarxive_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("oai") / "oai-metadata.jsonl"
    with gzip.open(unarxive_path, "rt") as src, path.open("w") as out:
        for line in src:
            out.write(json.dumps(json.loads(line)["metadata"]) + "\n")
    return path


@pytest.fixture(scope="module")
def plaintext_path(fulltext_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plain") / "plaintext-head.jsonl.gz"
    with gzip.open(fulltext_dir / "plaintext-9108-1612.jsonl.gz", "rt") as src, gzip.open(path, "wt") as out:
        out.writelines(itertools.islice(src, PLAINTEXT_LINES))
    return path


@pytest.fixture(scope="module")
def built(
    listing_subset: dict[str, Any],
    unarxive_path: Path,
    plaintext_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("db") / "corpus.sqlite"
    store = Store(db)
    summaries = [store.ingest(read_path(p), settings=SETTINGS) for p in listing_subset["files"]]
    summaries.append(store.ingest(read_path(unarxive_path), settings=SETTINGS))
    summaries.append(store.ingest(read_path(plaintext_path), settings=SETTINGS))
    store.close()
    return {"db": db, "summaries": summaries}


@pytest.fixture()
def ro(built: dict[str, Any]) -> Store:
    store = Store.open_readonly(built["db"])
    yield store
    store.close()


def distinct_ids(paths: list[Path]) -> set[str]:
    ids: set[str] = set()
    for p in paths:
        with gzip.open(p, "rt") as fh:
            ids.update(try_canonical_id(json.loads(line)["id"]) or "" for line in fh)
    return ids


# ---------------------------------------------------------------- merging duplicates
def test_cross_listed_duplicates_are_one_paper(
    built: dict[str, Any], listing_subset: dict[str, Any], ro: Store
) -> None:
    listing = set(distinct_ids(listing_subset["files"]))
    assert len(listing_subset["cross_raw"]) == 20
    assert len(listing_subset["dup"]) == 63  # 20 verbatim + 6 versioned cross-listed, 37 versioned repeats
    docs = {d.arxiv_id for d in ro.iter_papers()}
    assert listing <= docs
    lines = sum(s.read for s in built["summaries"][:2])
    assert lines - len(listing) == 63
    for raw in listing_subset["cross_raw"]:
        paper = ro.get_paper(raw)
        assert paper is not None
        assert paper.sources == (
            "listing:listing-astro-2504-2606.jsonl.gz",
            "listing:listing-cs-2503-2606.jsonl.gz",
        )
    versioned = ro.get_paper("2512.07042")
    assert versioned is not None and versioned.version == 1
    con = sqlite3.connect(built["db"])
    try:
        assert con.execute("SELECT count(*) FROM papers").fetchone()[0] == len(docs)
        dup_rows = con.execute(
            "SELECT count(*) FROM (SELECT paper_id, source FROM paper_sources GROUP BY 1, 2 HAVING count(*) > 1)"
        ).fetchone()[0]
        assert dup_rows == 0
        mismatched = con.execute(
            "SELECT count(*) FROM papers p WHERE json_array_length(p.authors_json) != "
            "(SELECT count(*) FROM paper_authors a WHERE a.paper_id = p.id)"
        ).fetchone()[0]
        assert mismatched == 0
    finally:
        con.close()


def test_reingest_changes_nothing(
    built: dict[str, Any], listing_subset: dict[str, Any], unarxive_path: Path
) -> None:
    db = built["db"]
    before = table_counts(db)
    with Store(db) as store:
        fp = store.fingerprint()
        summaries = [
            store.ingest(read_path(p), settings=SETTINGS) for p in [*listing_subset["files"], unarxive_path]
        ]
        assert all(s.added == 0 and s.updated == 0 and s.unchanged == s.read for s in summaries)
        assert store.fingerprint() == fp
    after = table_counts(db)
    assert after == before


# ---------------------------------------------------------------- versions and sources
def _oai_variants(unarxive_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    with gzip.open(unarxive_path, "rt") as fh:
        metas = [json.loads(line)["metadata"] for line in fh]
    v2 = next(m for m in metas if len(m["versions"]) == 2)
    v1 = dict(v2, versions=v2["versions"][:1], title="An earlier title of the same paper", abstract=None)
    return v1, v2


@pytest.mark.parametrize("order", ["old-then-new", "new-then-old"])
def test_newer_version_wins(unarxive_path: Path, tmp_path: Path, order: str) -> None:
    v1, v2 = _oai_variants(unarxive_path)
    first, second = (v1, v2) if order == "old-then-new" else (v2, v1)
    (tmp_path / "a.jsonl").write_text(json.dumps(first) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(second) + "\n")
    with Store(tmp_path / "c.sqlite") as store:
        store.ingest(read_path(tmp_path / "a.jsonl"), settings=SETTINGS)
        fp = store.fingerprint()
        s = store.ingest(read_path(tmp_path / "b.jsonl"), settings=SETTINGS)
        paper = store.get_paper(v2["id"])
        assert paper is not None
        assert paper.version == 2
        assert paper.title == " ".join(v2["title"].split())
        assert paper.abstract and paper.abstract == " ".join(v2["abstract"].split())
        assert paper.published is not None and paper.updated is not None and paper.updated > paper.published
        assert store.stats()["papers"] == 1
        assert s.updated == 1  # the second source is recorded either way
        assert (store.fingerprint() != fp) is (order == "old-then-new")


def test_metadata_and_full_text_of_the_same_paper_merge(
    oai_path: Path, unarxive_path: Path, tmp_path: Path
) -> None:
    with Store(tmp_path / "c.sqlite") as store:
        meta = store.ingest(read_path(oai_path), settings=SETTINGS)
        assert (meta.added, store.stats()["papers_with_fulltext"]) == (49, 0)
        text = store.ingest(read_path(unarxive_path), settings=SETTINGS)
        assert (text.added, text.updated) == (0, 49)
        stats = store.stats()
        assert stats["papers"] == 49 and stats["papers_with_fulltext"] == 49 and stats["passages"] > 49
        again = store.ingest(read_path(oai_path), settings=SETTINGS)  # metadata only: full text stays
        assert (again.added, again.updated, again.unchanged) == (0, 0, 49)
        assert {k: v for k, v in store.stats().items() if k != "ingest_runs"} == {
            k: v for k, v in stats.items() if k != "ingest_runs"
        }
        paper = store.get_paper("2212.11867")
        assert paper is not None and paper.has_fulltext and paper.license
        assert paper.sources == ("oai:oai-metadata.jsonl", "unarxive:unarxive-2212-sample.jsonl.gz")


def test_read_errors_are_recorded_and_the_batch_lands(
    tmp_path: Path, listing_files: list[Path], head: Any
) -> None:
    good = head(listing_files[0], 3)
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        good[0] + "{broken\n" + good[1] + json.dumps({"id": "nonsense", "title": "x"}) + "\n" + good[2]
    )
    with Store(tmp_path / "c.sqlite") as store:
        s = store.ingest(read_path(path), settings=SETTINGS)
        assert (s.read, s.added, s.skipped) == (3, 3, 2)
        assert [e.location for e in s.errors] == ["line 2", "line 4"]
        s2 = store.ingest(
            [
                PaperRecord(arxiv_id="not-an-id", source="test", title="t"),
                ReadError("x.jsonl", "line 1", "bad"),
            ],
            settings=SETTINGS,
        )
        assert (s2.read, s2.skipped) == (0, 2)
        assert store.stats()["skipped"] == 4
    assert isinstance(s, IngestSummary) and s.as_dict()["run_id"] == 1


# ---------------------------------------------------------------- read API
def test_get_paper_accepts_any_spelling(ro: Store) -> None:
    want = ro.get_paper("2503.11731")
    assert want is not None and want.title and want.title.startswith("Industrial-Grade Sensor Simulation")
    for spelling in ("arXiv:2503.11731v2", "https://arxiv.org/abs/2503.11731", "10.48550/arXiv.2503.11731"):
        assert ro.get_paper(spelling) == want
    assert want.date == want.first_seen and want.authors[0] == "Xianming Zeng"
    assert ro.get_paper("2503.99999") is None and ro.get_paper("garbage") is None
    got = ro.get_papers(["arXiv:2503.11731", "garbage", "2212.11867", "2503.99999"])
    assert set(got) == {"arXiv:2503.11731", "2212.11867"}
    assert got["arXiv:2503.11731"] == want


def test_get_papers_reads_each_paper_as_the_sqlalchemy_stream_does(ro: Store) -> None:
    """`Store.get_papers` reads in plain SQL (`openxiv.corpus.reads`): every paper comes back equal
    to what SQLAlchemy's `iter_papers` builds (dates as `date`, flags as `bool`), plus its sources."""
    docs = list(ro.iter_papers())
    got = ro.get_papers([d.arxiv_id for d in docs])
    assert list(got) == [d.arxiv_id for d in docs]
    assert {a: replace(p, sources=()) for a, p in got.items()} == {d.arxiv_id: d for d in docs}
    assert all(p.sources for p in got.values())
    assert any(isinstance(p.first_seen, date) for p in got.values())
    assert any(isinstance(p.published, date) for p in got.values())
    assert {type(p.has_fulltext) for p in got.values()} == {bool}


def test_sections_and_passages_line_up(ro: Store) -> None:
    sections = ro.sections("2212.11867")
    assert [s.idx for s in sections] == list(range(len(sections)))
    assert sections[0].name == "Introduction" and sections[0].number == "1"
    passages = ro.passages("arXiv:2212.11867v1")
    assert [p.ordinal for p in passages] == list(range(len(passages)))
    for p in passages:
        assert p.section_idx is not None
        sec = sections[p.section_idx]
        assert sec.text[p.char_start : p.char_end] == p.text and p.section_name == sec.name
        assert len(p.text.split()) <= SETTINGS.passage_words + SETTINGS.passage_words // 4
    by_id = ro.get_passages([passages[3].passage_id, passages[0].passage_id, 10**9])
    assert by_id == {passages[3].passage_id: passages[3], passages[0].passage_id: passages[0]}
    assert ro.passages("2503.11731") == [] and ro.sections("2503.11731") == []
    assert ro.lead_section("arXiv:2212.11867v1") == next(s for s in sections if s.text.strip())
    assert ro.lead_section("2503.11731") is None and ro.lead_section("garbage") is None


def test_lead_sections_of_many_papers_in_one_query(ro: Store) -> None:
    """`Store.lead_sections` (a page of search hits' tldrs in one query) says what `lead_section`
    says for each paper, keyed by the ids as given; papers without full text are left out."""
    with_text = [p.arxiv_id for p in ro.iter_papers() if p.has_fulltext][:60]
    asked = [f"arXiv:{a}v1" for a in with_text[:3]] + with_text[3:] + ["2503.11731", "garbage"]
    leads = ro.lead_sections(asked)
    expected = {a: ro.lead_section(a) for a in asked}
    assert leads == {a: s for a, s in expected.items() if s is not None}
    assert len(leads) >= 50 and ro.lead_sections([]) == {}


def test_iterators_are_ordered_and_complete(ro: Store) -> None:
    docs = list(ro.iter_papers())
    ids = [d.arxiv_id for d in docs]
    assert ids == sorted(ids) and len(ids) == len(set(ids)) == ro.stats()["papers"]
    assert all(len(d.content_hash) == 64 for d in docs)
    n = 0
    last: tuple[str, int] = ("", -1)
    for p in ro.iter_passages():
        key = (p.arxiv_id, p.ordinal)
        assert key > last
        last = key
        n += 1
    assert n == ro.stats()["passages"]


def test_find_by_title(ro: Store) -> None:
    paper = ro.get_paper("2503.11742")
    assert paper is not None and paper.title
    assert ro.find_by_title(paper.title.upper() + " !") == ["2503.11742"]
    assert normalize_title("  Safe Vision-Language Models: via {Unsafe}  Weights ") == (
        "safe vision language models via unsafe weights"
    )
    assert ro.find_by_title("") == [] and ro.find_by_title("no such paper title at all") == []


def test_stats_counts(ro: Store, built: dict[str, Any]) -> None:
    stats = ro.stats()
    for key in ("papers", "papers_with_fulltext", "sections", "passages", "skipped"):
        assert isinstance(stats[key], int)
    assert stats["papers_with_fulltext"] >= 49 + PLAINTEXT_LINES * 0.95
    assert stats["papers"] == sum(s.added for s in built["summaries"])


def test_readonly_store_is_shared_by_threads_and_refuses_writes(ro: Store) -> None:
    ids = [d.arxiv_id for d in itertools.islice(ro.iter_papers(), 200)]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(ro.get_paper, ids * 3))
    assert [p.arxiv_id for p in got if p] == ids * 3
    with pytest.raises(PermissionError):
        ro.ingest([], settings=SETTINGS)
    with pytest.raises(FileNotFoundError):
        Store.open_readonly(Path("/nonexistent/corpus.sqlite"))


def test_copy_to_is_a_consistent_readonly_snapshot(built: dict[str, Any], tmp_path: Path) -> None:
    with Store(built["db"]) as store:
        dest = store.copy_to(tmp_path / "snap" / "corpus.sqlite")
        with pytest.raises(FileExistsError):
            store.copy_to(dest)
        fp = store.fingerprint()
    dest.chmod(0o444)
    dest.parent.chmod(0o555)
    try:
        with Store.open_readonly(dest) as snap:
            assert snap.fingerprint() == fp
            assert snap.get_paper("2212.11867") is not None
    finally:
        dest.parent.chmod(0o755)
