"""`Store.papers_containing`: the papers whose stored abstract or full-text section holds a string
verbatim (what the grounding check's --search-corpus asks), on real stored papers."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    shared = SharedData.default()
    if not shared.available:
        pytest.skip(shared.missing_message())
    path = tmp_path_factory.mktemp("contains") / "corpus.sqlite"
    with Store(path) as store:
        store.ingest(itertools.chain(itertools.islice(read_path(shared.plaintext), 8),
                                     itertools.islice(read_path(shared.listing("cs")), 8)))  # fmt: skip
    return path


def test_sections_and_abstracts_are_scanned(db: Path) -> None:
    with Store.open_readonly(db) as store:
        papers = list(store.iter_papers())
        full = next(p for p in papers if p.has_fulltext)
        listed = next(p for p in papers if not p.has_fulltext and p.abstract)
        in_section = " ".join(store.sections(full.arxiv_id)[-1].text.split()[5:12])
        in_abstract = " ".join((listed.abstract or "").split()[3:10])
        assert full.arxiv_id in store.papers_containing(in_section)
        assert listed.arxiv_id in store.papers_containing(in_abstract)
        assert store.papers_containing("zebra quokka narwhal axolotl") == []
        assert store.papers_containing("   ") == []
        assert len(store.papers_containing("the", limit=3)) == 3
