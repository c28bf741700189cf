"""Filters from postings: one name normaliser, the author-name rule, venues, the mask built once, total_count."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from openxiv.corpus.normalize import fold, normalize_name
from openxiv.corpus.records import Paper
from openxiv.indexer.backend import SearchFilters
from openxiv.indexer.engine.meta import PaperMeta


def _doc(n: int, authors: tuple[str, ...], journal_ref: str | None = None) -> Paper:
    return Paper(
        f"2501.{n:05d}",
        title="t",
        abstract="a",
        categories=("cs.CL",),
        authors=authors,
        published=date(2025, 1, n),
        journal_ref=journal_ref,
        content_hash=f"h{n}",
    )


NAMES = [
    ("Søren Hauberg",),
    ("Łukasz Kaiser", "Ashish Vaswani"),
    ("王小明",),
    ("José Núñez", "Wei Li"),
    ("Olivia Lin",),
    ("J. Smith",),
    ("Иван Петров",),
]


@pytest.fixture(scope="module")
def meta() -> PaperMeta:
    return PaperMeta.from_docs(_doc(i + 1, a) for i, a in enumerate(NAMES))


def _rows(meta: PaperMeta, *names: str) -> list[int]:
    mask = meta.mask(SearchFilters(authors=names))
    assert mask is not None
    return [int(i) for i in mask.nonzero()[0]]


def test_one_normaliser_transliterates() -> None:
    assert normalize_name("Søren  Hauberg") == normalize_name("Soren Hauberg") == "soren hauberg"
    assert normalize_name("Łukasz") == "lukasz"
    assert normalize_name("王小明") == fold("WangXiaoMing") != ""
    assert normalize_name("José  Núñez-Pérez") == "jose nunez perez"
    assert normalize_name("D'Incà, M.") == "d inca m"


@pytest.mark.parametrize(
    ("query", "rows"),
    [
        ("Soren Hauberg", [0]),
        ("Søren Hauberg", [0]),
        ("HAUBERG", [0]),
        ("Lukasz Kaiser", [1]),
        ("Łukasz", [1]),
        ("王小明", [2]),
        ("WangXiaoMing", [2]),
        ("Ivan Petrov", [6]),
        ("Иван Петров", [6]),
        ("Vaswani", [1]),  # surname alone
        ("Ashish Vaswani", [1]),  # full name
        ("Vaswani, Ashish", [1]),  # any order
        ("A. Vaswani", [1]),  # an initial matches the first name
        ("John Smith", [5]),  # the paper wrote an initial
        ("Li", [3]),  # a short word is a whole word: not every "Lin" and "Olivia"
        ("Oliv", [4]),  # 4+ characters may be the start of a word
        ("livia", []),  # ... but not its middle
        ("Wei Lin", []),
        ("Smith", [5]),
        ("nobody known", []),
    ],
)
def test_author_rule(meta: PaperMeta, query: str, rows: list[int]) -> None:
    assert _rows(meta, query) == rows


def test_several_author_values_are_any_of(meta: PaperMeta) -> None:
    assert _rows(meta, "Hauberg", "Petrov") == [0, 6]


def test_venue_and_venue_year() -> None:
    docs = [
        _doc(1, ("A",), "Chinese Physics C46, (2022) 073106"),
        _doc(2, ("B",), "Advances in Neural Information Processing Systems 33 (NeurIPS 2020)"),
        _doc(3, ("C",), "Phys. Rev. D 100, 123456 (2019)"),
        _doc(4, ("D",), None),
    ]
    meta = PaperMeta.from_docs(docs)

    def rows(**kw: Any) -> list[int]:
        m = meta.mask(SearchFilters(**kw))
        assert m is not None
        return [int(i) for i in m.nonzero()[0]]

    assert rows(venues=("chinese physics c",)) == [0]  # volume glued to the name: C46
    assert rows(venues=("NeurIPS",)) == [1]
    assert rows(venues=("neural information processing",)) == [1]
    assert rows(venues=("Phys. Rev. D",)) == [2]
    assert rows(venues=("Phys Rev",)) == [2]
    assert rows(venues=("Rev Phys",)) == []  # a phrase, in order
    assert rows(venues=("Physics",)) == [0]
    assert rows(venues=("NeurIPS", "Phys. Rev. D")) == [1, 2]
    assert rows(venue_year=2020) == [1]
    assert rows(venue_year=2019, venues=("Phys Rev",)) == [2]
    assert rows(venue_year=2019, venues=("NeurIPS",)) == []
    assert rows(venue_year=1999) == []


def test_snapshot_round_trip_keeps_filters(meta: PaperMeta, tmp_path: Any) -> None:
    meta.save(tmp_path / "papers")
    loaded = PaperMeta.load(tmp_path / "papers")
    for query in ("Soren Hauberg", "王小明", "A. Vaswani", "Li"):
        assert _rows(loaded, query) == _rows(meta, query)


def test_mask_is_built_once_for_a_batch(sparse_index: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of queries with one filter set resolves the author values once, not once per query."""
    backend = sparse_index.backend
    doc = next(d for d in sparse_index.store.iter_papers() if len(d.authors) >= 3)
    calls = []
    original = PaperMeta.author_keys

    def counting(self: PaperMeta, wanted: Any) -> Any:
        calls.append(tuple(wanted))
        return original(self, wanted)

    monkeypatch.setattr(PaperMeta, "author_keys", counting)
    filters = SearchFilters(authors=tuple(a.split()[-1] for a in doc.authors), categories=("cs",))
    queries = ["model", "learning", "vision", "language", "graph", "robot", "data", "image", "3d", "agent"]
    for q in queries:
        backend.search(q, top_k=5, filters=filters)
    assert len(calls) == 1
    assert backend.search(doc.title, top_k=1, filters=filters).hits[0].arxiv_id == doc.arxiv_id


def test_total_count_is_the_same_on_every_page(sparse_index: Any) -> None:
    """total_count counts the papers the query matches (after filters), whatever the page and depth."""
    backend = sparse_index.backend.tuned(candidates=20)
    q = "learning model data"
    pages = [backend.search(q, top_k=10, offset=o) for o in (0, 30, 60, 5000)]
    totals = {p.total_count for p in pages}
    assert len(totals) == 1
    total = totals.pop()
    assert total > 70
    everything = backend.search(q, top_k=total + 10)
    assert len(everything.hits) == total  # paging to the end gives exactly total_count papers
    filtered = backend.search(q, top_k=10, filters=SearchFilters(categories=("astro-ph",)))
    assert 0 < filtered.total_count < total
    nonsense = backend.search("qzxvvbw plorfnik", top_k=10)
    assert nonsense.hits == [] and nonsense.total_count == 0
