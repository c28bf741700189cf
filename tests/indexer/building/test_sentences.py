"""The abstracts' sentences and analysed terms stored in the snapshot at build
(`openxiv.indexer.building.sentences`), on a small real index: the same sentences and overlaps a hit's
evidence computed before, the same hits served with and without them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from small_index import copy_without_part

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.text import split_sentences
from openxiv.indexer import layout
from openxiv.indexer.engine import evidence
from openxiv.indexer.snapshot import BadIndexError, open_index, verify_snapshot
from openxiv.indexer.tables.sentences import INFO_FILE, SENT_PTR_FILE, SentenceTable
from openxiv.service.search import run_search
from openxiv.service.spec import SearchSpec

QUERIES = ("galaxy cluster", "neural network training", "quantum", "dark matter halo", "graph", "the of and")


def test_every_abstract_has_the_sentences_and_overlaps_a_hit_computes(sparse_index: Any) -> None:
    table = sparse_index.sentences
    assert table is not None
    papers = list(sparse_index.store.iter_papers())
    assert sparse_index.manifest.sentences.papers == len(papers)
    checked = 0
    for q in QUERIES:
        terms = evidence.query_terms(q)
        wanted = table.wanted(terms)
        for p in papers:
            sentences = split_sentences(p.abstract or "")
            want = [len(terms & words) for words in evidence.sentence_terms(tuple(sentences))]
            assert table.overlaps(p.arxiv_id, p.abstract, wanted) == (sentences, want), (q, p.arxiv_id)
            checked += any(want)
    assert checked > 50  # queries whose words the abstracts hold, not only zeros
    assert any(not p.abstract for p in papers)  # and papers without an abstract: no sentences
    assert table.overlaps("0000.00000", "Some text.", table.wanted(terms)) is None


def _copy(snapshot: Path, dest: Path) -> Path:
    shutil.copytree(snapshot, dest)
    return dest


def _without_sentences(snapshot: Path, dest: Path) -> Path:
    """``snapshot`` as a build made before sentences were stored: no part, no manifest entry."""
    return copy_without_part(snapshot, dest, layout.SENTENCES, "sentences")


def _pages(ix: Any) -> list[Any]:
    out = []
    for q in QUERIES:
        for mode in (None, "bm25_papers"):  # paper hits without a passage show abstract sentences
            res = run_search(ix, SearchSpec(queries=(q,), top_k=20, mode=mode))
            out.append([(h.hit.arxiv_id, h.hit.score, h.tldr, h.evidence) for h in res.hits])
    return out


def test_a_snapshot_without_stored_sentences_serves_the_same_hits(sparse_index: Any, tmp_path: Path) -> None:
    old = _without_sentences(sparse_index.path, tmp_path / "old")
    verify_snapshot(old)
    with open_index(old, Settings(data_dir=tmp_path, embed="none")) as ix:
        assert ix.sentences is None
        pages = _pages(ix)
    assert pages == _pages(sparse_index)
    shown = [h[3] for page in pages for h in page if h[3] is not None]
    assert {e.source for e in shown} >= {"abstract", "passage"}


def test_a_table_made_under_other_rules_or_stemmer_is_not_used(sparse_index: Any, tmp_path: Path) -> None:
    snap = _copy(sparse_index.path, tmp_path / "other-rules")
    meta = sparse_index.backend.meta
    part = snap / layout.SENTENCES
    assert SentenceTable.load(part, meta.n, meta.row_of, "english") is not None
    assert SentenceTable.load(part, meta.n, meta.row_of, "german") is None
    assert SentenceTable.load(part, meta.n + 1, meta.row_of, "english") is None
    info = json.loads((part / INFO_FILE).read_text(encoding="utf-8"))
    (part / INFO_FILE).write_text(json.dumps({**info, "rules": "an older rule"}), encoding="utf-8")
    assert SentenceTable.load(part, meta.n, meta.row_of, "english") is None
    with open_index(snap, Settings(data_dir=tmp_path, embed="none")) as ix:
        assert ix.sentences is None
        assert _pages(ix) == _pages(sparse_index)


def test_verify_names_a_missing_or_short_sentence_table(sparse_index: Any, tmp_path: Path) -> None:
    gone = _copy(sparse_index.path, tmp_path / "gone")
    shutil.rmtree(gone / layout.SENTENCES)
    with pytest.raises(BadIndexError, match="sentences missing"):
        verify_snapshot(gone)
    short = _copy(sparse_index.path, tmp_path / "short")
    ptr = np.load(short / layout.SENTENCES / SENT_PTR_FILE)
    np.save(short / layout.SENTENCES / SENT_PTR_FILE, ptr[:-1])
    with pytest.raises(BadIndexError, match="sentences holds 371 papers"):
        verify_snapshot(short)
