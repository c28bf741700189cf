"""The papers' tldrs stored in the snapshot at build (`openxiv.indexer.building.tldrs`), on a small real index."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from small_index import copy_without_part

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.text import paper_tldr
from openxiv.indexer import layout
from openxiv.indexer.snapshot import BadIndexError, open_index, verify_snapshot
from openxiv.indexer.tables.tldrs import INFO_FILE, OFFSETS_FILE, TldrTable
from openxiv.service.search import run_search
from openxiv.service.spec import SearchSpec

QUERIES = ("galaxy cluster", "neural network training", "quantum", "dark matter halo", "graph")


def _computed(ix: Any) -> dict[str, str | None]:
    """Each paper's tldr as a search hit computed it before tldrs were stored."""
    papers = {p.arxiv_id: p for p in ix.store.iter_papers()}
    leads = ix.store.lead_sections([a for a, p in papers.items() if not p.abstract])
    return {a: paper_tldr(p, [leads[a]] if a in leads else None) for a, p in papers.items()}


def test_the_stored_tldr_of_every_paper_is_the_one_a_hit_computes(sparse_index: Any) -> None:
    table = sparse_index.tldrs
    assert table is not None
    want = _computed(sparse_index)
    assert {a: table.get(a) for a in want} == want
    info = sparse_index.manifest.tldr
    assert info.papers == len(want) == sparse_index.manifest.counts.papers
    assert info.with_tldr == sum(t is not None for t in want.values())
    no_abstract = [a for a in want if not sparse_index.store.get_paper(a).abstract]
    assert any(want[a] for a in no_abstract)  # the lead-section path is exercised, not only abstracts
    assert any(t is None for t in want.values()) or len(no_abstract) == 0
    with pytest.raises(KeyError):
        table.get("0000.00000")


def _copy_without_tldrs(snapshot: Path, dest: Path) -> Path:
    """``snapshot`` as a build made before tldrs were stored: no ``tldr/`` and no manifest entry."""
    return copy_without_part(snapshot, dest, layout.TLDR, "tldr")


def _pages(ix: Any) -> list[Any]:
    out = []
    for q in QUERIES:
        res = run_search(ix, SearchSpec(queries=(q,), top_k=20))
        out.append([(h.hit.arxiv_id, h.hit.score, h.tldr, h.evidence) for h in res.hits])
    return out


def test_a_snapshot_without_stored_tldrs_serves_the_same_hits(sparse_index: Any, tmp_path: Path) -> None:
    old = _copy_without_tldrs(sparse_index.path, tmp_path / "old")
    verify_snapshot(old)
    settings = Settings(data_dir=tmp_path, embed="none")
    with open_index(old, settings) as ix:
        assert ix.tldrs is None
        assert _pages(ix) == _pages(sparse_index)


def test_a_table_made_under_other_tldr_rules_is_not_used(sparse_index: Any, tmp_path: Path) -> None:
    snap = tmp_path / "other-rules"
    shutil.copytree(sparse_index.path, snap)
    info_path = snap / layout.TLDR / INFO_FILE
    info = json.loads(info_path.read_text(encoding="utf-8"))
    meta = sparse_index.backend.meta
    assert TldrTable.load(snap / layout.TLDR, meta.n, meta.row_of) is not None
    info_path.write_text(json.dumps({**info, "rules": "an older rule"}), encoding="utf-8")
    assert TldrTable.load(snap / layout.TLDR, meta.n, meta.row_of) is None
    assert TldrTable.load(snap / layout.TLDR, meta.n + 1, meta.row_of) is None  # another paper count
    with open_index(snap, Settings(data_dir=tmp_path, embed="none")) as ix:
        assert ix.tldrs is None
        assert _pages(ix) == _pages(sparse_index)


def test_verify_names_a_missing_or_short_tldr_table(sparse_index: Any, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    shutil.copytree(sparse_index.path, gone)
    shutil.rmtree(gone / layout.TLDR)
    with pytest.raises(BadIndexError, match="tldr missing"):
        verify_snapshot(gone)
    short = tmp_path / "short"
    shutil.copytree(sparse_index.path, short)
    offsets = np.load(short / layout.TLDR / OFFSETS_FILE)
    np.save(short / layout.TLDR / OFFSETS_FILE, offsets[:-1])
    with pytest.raises(BadIndexError, match="tldr holds 371 papers"):
        verify_snapshot(short)
