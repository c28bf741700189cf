"""One paper record: what readers give reaches the store, the indexer and every API answer unchanged.

Real records from ../shared (a listing and the unarXive sample, which carries DOIs, journal
references and licenses) go through a real store; the checks compare the record types, the row
mapping and the API models field by field, so a field added to one and not the others fails here.
"""

from __future__ import annotations

import dataclasses
import itertools
import sqlite3
from datetime import date
from pathlib import Path

import pytest

from openxiv.corpus.merge import PaperState, state_from_record
from openxiv.corpus.readers import read_path
from openxiv.corpus.reads import PAPER_COLUMNS
from openxiv.corpus.records import (
    PaperFields,
    PaperRecord,
    best_date,
    field_values,
)
from openxiv.corpus.store import Store
from openxiv.corpus.writer import _paper_row
from openxiv.service import views
from openxiv.service.models import PaperHeadOut, PaperJson, PaperMetadataOut, V1Paper

METADATA = [f.name for f in dataclasses.fields(PaperFields)]


@pytest.fixture(scope="module")
def records(shared: Path, listing_files: list[Path]) -> list[PaperRecord]:
    unarxive = shared / "data" / "fulltext" / "unarxive-2212-sample.jsonl.gz"
    out: list[PaperRecord] = []
    for path in (unarxive, listing_files[0]):
        out += [r for r in itertools.islice(read_path(path), 60) if isinstance(r, PaperRecord)]
    assert any(r.doi for r in out) and any(r.journal_ref for r in out) and any(r.sections for r in out)
    return out


@pytest.fixture(scope="module")
def store(records: list[PaperRecord], tmp_path_factory: pytest.TempPathFactory) -> Store:
    db = tmp_path_factory.mktemp("records") / "c.sqlite"
    with Store(db) as s:
        s.ingest(records)
    return Store.open_readonly(db)


def test_every_field_a_reader_gives_comes_back_from_the_store(
    records: list[PaperRecord], store: Store
) -> None:
    assert len({r.arxiv_id for r in records}) == len(records)  # one record per paper: no merging
    papers = store.get_papers([r.arxiv_id for r in records])
    for rec in records:
        paper = papers[rec.arxiv_id]
        assert field_values(paper) == field_values(state_from_record(rec)), rec.arxiv_id
        assert paper.has_fulltext == rec.has_fulltext
        assert paper.sources == state_from_record(rec).sources


def test_the_state_of_a_record_is_the_one_the_dataclass_makes(records: list[PaperRecord]) -> None:
    """`state_from_record` fills the state's attributes directly (`merge._state`): the same fields,
    values, equality and hash as ``PaperState(...)``, for listing and unarXive records."""
    names = {f.name for f in dataclasses.fields(PaperState)}
    for rec in records:
        state = state_from_record(rec)
        assert set(vars(state)) == names, rec.arxiv_id
        made = PaperState(**vars(state))
        assert state == made and hash(state) == hash(made) and repr(state) == repr(made)
        assert isinstance(state.authors, tuple) and isinstance(state.categories, tuple)
        with pytest.raises(dataclasses.FrozenInstanceError):
            state.title = "changed"  # type: ignore[misc]


def test_row_to_paper_to_row_changes_nothing(store: Store) -> None:
    """Reading a row into the record and writing it back gives the very values stored."""
    with sqlite3.connect(store.path) as conn:
        raw = {r[0]: r for r in conn.execute(f"SELECT {', '.join(PAPER_COLUMNS)} FROM papers")}
        hashes = dict(conn.execute("SELECT id, sections_hash FROM papers").fetchall())
    papers = store.get_papers([r[1] for r in raw.values()])
    assert len(papers) == len(raw) > 100
    for pid, row in raw.items():
        paper = papers[row[1]]
        state = PaperState.stored(paper, hashes[pid])
        assert _paper_row(pid, state, row[PAPER_COLUMNS.index("passages_hash")]) == row, paper.arxiv_id
        assert paper.date_precision == row[PAPER_COLUMNS.index("date_precision")]


def test_the_indexer_reads_the_papers_the_service_reads(store: Store) -> None:
    streamed = list(store.iter_papers())
    served = store.get_papers([p.arxiv_id for p in streamed])
    assert [p.arxiv_id for p in streamed] == sorted(served)
    for p in streamed:
        assert p == dataclasses.replace(served[p.arxiv_id], sources=())  # sources are not streamed
        assert (p.date, p.date_precision) == best_date(p.arxiv_id, p.published, p.first_seen)
        assert p.content_hash is not None and len(p.content_hash) == 64


def test_every_paper_field_reaches_the_whole_paper_answers(store: Store) -> None:
    assert set(PaperHeadOut.model_fields) | set(PaperMetadataOut.model_fields) <= set(METADATA)
    assert set(METADATA) <= set(PaperJson.model_fields)
    assert set(METADATA) | {"date", "date_precision", "has_fulltext"} <= set(V1Paper.model_fields)
    papers = [p for p in store.iter_papers() if p.doi and p.journal_ref and p.license]
    assert papers
    for p in papers:
        sections = store.sections(p.arxiv_id)
        answers = (
            views.paper_json(p, sections).model_dump(mode="json"),
            views.v1_paper(p, sections).model_dump(mode="json"),
        )
        for answer in answers:
            for name in METADATA:
                value = getattr(p, name)
                want = value.isoformat() if isinstance(value, date) else value
                got = answer[name]
                if name == "authors":
                    got = [a["name"] if isinstance(a, dict) else a for a in got]
                if name == "categories":  # MSC/ACM codes among them are served apart
                    got = got + answer["subject_classes"]
                assert got == (list(want) if isinstance(want, tuple) else want), (p.arxiv_id, name)


def test_paper_record_is_frozen_and_keeps_its_constructor() -> None:
    rec = PaperRecord(arxiv_id="2301.00001", source="listing:x.jsonl:1", authors=["A. B"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.title = "t"
    assert rec.date == date(2023, 1, 1) and rec.date_precision == "month"
