"""The streaming build's fast paths give what the record-by-record code gave, on real data: the
analyzer asked once per distinct word (`openxiv.indexer.building.terms`) and the column reads of the
corpus copy (`openxiv.indexer.building.corpusrows`)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from live_index import listing_texts

from openxiv.corpus.readers import read_path
from openxiv.indexer.analyzer import analyze
from openxiv.indexer.building.corpusrows import meta_rows, paper_rows, passage_papers, passage_texts
from openxiv.indexer.building.terms import LIMIT, TermIds, WordTerms
from openxiv.indexer.engine.meta import PaperMeta


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("limit", [LIMIT, 50])
def test_terms_through_the_word_table_are_the_analyzer_s(limit: int) -> None:
    texts = [*listing_texts(300), "", "the of and", "Ναυτία MÜNCHEN naïve 3.5% x_y İstanbul ΣΊΣΥΦΟΣ"]
    words = WordTerms("english", limit=limit)
    assert [words.terms(t) for t in texts] == analyze(texts, "english")
    assert len(words) <= limit  # bounded: emptied and refilled, the same terms
    vocab: dict[str, int] = {}
    ids = TermIds(WordTerms("english"), vocab, limit=limit)
    want: dict[str, int] = {}
    expected = [[want.setdefault(w, len(want)) for w in t] for t in analyze(texts, "english")]
    assert [ids.ids(t) for t in texts] == expected and vocab == want


def test_column_reads_are_the_records_values(sparse_index: Any, tmp_path: Path) -> None:
    """Papers (with and without abstract, full texts, dates to the day and to the month), their
    metadata arrays and their passages, read as columns, equal what `Store.iter_papers` and
    ``iter_passages`` give."""
    db = Path(sparse_index.path) / "corpus.sqlite"
    store = sparse_index.store
    papers = list(store.iter_papers())
    cols = [
        r for chunk in paper_rows(db, ("arxiv_id", "title", "abstract", "no_such_column"), 7) for r in chunk
    ]
    assert cols == [(p.arxiv_id, p.title, p.abstract, None) for p in papers]
    assert any(not p.abstract for p in papers) and any(p.date_precision == "month" for p in papers)
    PaperMeta.from_docs(papers).save(tmp_path / "records")
    PaperMeta.from_docs(meta_rows(db, 7)).save(tmp_path / "columns")
    a, b = _files(tmp_path / "records"), _files(tmp_path / "columns")
    assert set(a) == set(b) and "authors.json" in a
    assert [name for name in a if a[name] != b[name]] == []
    passages = list(store.iter_passages())
    assert passages and [r for c in passage_papers(db, 5) for r in c] == [
        (p.passage_id, p.arxiv_id) for p in passages
    ]
    assert [t for c in passage_texts(db, 5) for t in c] == [p.text for p in passages]


def test_meta_rows_read_journal_refs_and_dates_as_the_records(shared: Any, tmp_path: Path) -> None:
    """Listing papers carry a first-seen day, unarXive ones a v1 date and a journal reference."""
    from small_index import make_db

    items = itertools.chain(
        itertools.islice(read_path(shared.listing("cs")), 40),
        itertools.islice(read_path(shared.unarxive), 60),
    )
    db = make_db(tmp_path / "corpus.sqlite", items)
    from openxiv.corpus.store import Store

    with Store.open_readonly(db) as store:
        papers = list(store.iter_papers())
    rows = list(meta_rows(db, 9))
    assert any(p.journal_ref for p in papers) and any(p.published for p in papers)
    got = [(r.arxiv_id, r.date, r.date_precision, r.authors, r.categories, r.journal_ref) for r in rows]
    assert got == [
        (p.arxiv_id, p.date, p.date_precision, p.authors, p.categories, p.journal_ref) for p in papers
    ]


def test_a_paper_without_abstract_is_indexed_by_its_first_passage(sparse_index: Any, tmp_path: Path) -> None:
    """Issue 37: a full text read from plain text has no abstract, so the paper side (BM25 over
    titles + abstracts, the paper vectors, the feedback query) sees its title alone; with
    `Settings.paper_lead` it sees its first passage in the abstract's place, and a paper with an
    abstract keeps it."""
    from openxiv.corpus.settings.model import Settings
    from openxiv.indexer.building.corpusrows import paper_texts
    from openxiv.indexer.building.job import build_index
    from openxiv.indexer.snapshot import open_index

    db = Path(sparse_index.path) / "corpus.sqlite"
    store = sparse_index.store
    papers = list(store.iter_papers())
    first = {}
    for p in store.iter_passages():
        first.setdefault(p.arxiv_id, p.text)
    lead = [r for chunk in paper_texts(db, 7, lead=True) for r in chunk]
    plain = [r for chunk in paper_texts(db, 7, lead=False) for r in chunk]
    assert plain == [(p.title, p.abstract) for p in papers]
    assert lead == [(p.title, p.abstract or first.get(p.arxiv_id)) for p in papers]
    bare = [p for p in papers if not p.abstract and p.arxiv_id in first]
    assert len(bare) >= 10

    # the paper side alone finds such a paper by its opening words only with the lead
    def opening(arxiv_id: str) -> str:
        return " ".join(first[arxiv_id].split()[:12])

    def found(index: Any, paper: Any) -> bool:
        hits = index.backend.search(opening(paper.arxiv_id), top_k=5, mode="bm25_papers").hits
        return paper.arxiv_id in [h.arxiv_id for h in hits]

    assert not Settings().paper_lead  # the default builds as before: the title alone
    by_title = sum(found(sparse_index, p) for p in bare)  # openings that share words with the title
    settings = Settings(data_dir=tmp_path, embed="none", paper_lead=True)
    build_index(db, tmp_path / "index", settings, progress=False)
    with open_index(tmp_path / "index", settings) as led:
        assert sum(found(led, p) for p in bare) >= len(bare) - 1
        assert led.manifest.build_config["paper_lead"] is True
    assert by_title <= len(bare) // 2, by_title
    assert "paper_lead" not in (sparse_index.manifest.build_config or {})
