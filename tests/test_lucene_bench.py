"""Lucene beside openxiv (scripts/bench_lucene.py, issue 42): the export is a valid Pyserini
JsonCollection of a real corpus SQLite (default suite, no Java), and real Lucene indexes and searches
it through the JSON-lines worker in Pyserini's own venv (``lucene`` marker, `make test-lucene`;
skipped when that venv is not there)."""

from __future__ import annotations

import itertools
import json
import sqlite3
import sys
from pathlib import Path

import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from harness.lucene import Lucene, export_collection, missing  # noqa: E402

N_PAPERS = 300


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real corpus SQLite: the first `N_PAPERS` papers of the shared cs listing, ingested."""
    listing = SharedData.default().listing("cs")
    if not listing.exists():
        pytest.skip(f"shared data not found ({listing}); set OPENXIV_SHARED to the shared folder")
    db = tmp_path_factory.mktemp("lucene") / "corpus.sqlite"
    with Store(db) as store:
        store.ingest(itertools.islice(read_path(listing), N_PAPERS))
    return db


def _papers(db: Path) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return {
            a: (t or "", b or "") for a, t, b in conn.execute("SELECT arxiv_id, title, abstract FROM papers")
        }


def test_export_writes_one_valid_jsoncollection_line_per_paper(corpus_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "collection"
    out.mkdir()
    (out / "stale.jsonl").write_text('{"id": "gone", "contents": "x"}\n', encoding="utf-8")
    written = export_collection(corpus_db, out, per_file=128)
    papers = _papers(corpus_db)
    assert written == len(papers) >= 250
    files = sorted(out.iterdir())
    # the old export is replaced, and the papers are split into files Anserini can index in parallel
    assert [f.name for f in files] == ["docs000.jsonl", "docs001.jsonl", "docs002.jsonl"]
    docs = [json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines()]
    assert all(set(d) == {"id", "contents"} and isinstance(d["contents"], str) for d in docs)
    assert [d["id"] for d in docs] and len({d["id"] for d in docs}) == len(docs) == written
    for d in docs:  # title + abstract, the text openxiv's bm25_papers indexes, whitespace collapsed
        title, abstract = papers[d["id"]]
        assert d["contents"].startswith(" ".join(title.split())[:40])
        assert " ".join(abstract.split())[-40:] in d["contents"]
        assert "\n" not in d["contents"]


def test_export_reads_the_database_without_writing_it(corpus_db: Path, tmp_path: Path) -> None:
    before = corpus_db.stat().st_mtime_ns, corpus_db.read_bytes()
    corpus_db.chmod(0o444)
    try:
        export_collection(corpus_db, tmp_path / "c")
    finally:
        corpus_db.chmod(0o644)
    assert (corpus_db.stat().st_mtime_ns, corpus_db.read_bytes()) == before


@pytest.mark.lucene
def test_lucene_indexes_the_export_and_finds_a_paper_by_its_title(corpus_db: Path, tmp_path: Path) -> None:
    reason = missing()
    if reason:
        pytest.skip(reason)
    written = export_collection(corpus_db, tmp_path / "collection", per_file=100)
    papers = _papers(corpus_db)
    target = sorted(a for a, (t, _) in papers.items() if len(t.split()) >= 6)[0]
    title = papers[target][0]
    with Lucene(heap="512m") as lucene:
        built = lucene.index(tmp_path / "collection", tmp_path / "index", threads=2)
        assert built["docs"] == written and built["seconds"] > 0
        hits, ms = lucene.search(title, 10)
        assert hits[0][0] == target and ms >= 0
        assert all(a >= b for (_, a), (_, b) in itertools.pairwise(hits))
        # Anserini's batch search over several threads ranks as one search at a time
        lucene.bm25(1.2, 0.75)
        one = [lucene.search(q, 5)[0] for q in (title, "neural networks", "graph")]
        many, _ = lucene.batch([title, "neural networks", "graph"], 5, threads=3)
        assert many == one
        with pytest.raises(RuntimeError, match="open"):
            lucene.call("open", index=str(tmp_path / "no-such-index"))
