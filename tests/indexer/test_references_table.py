"""The ``references`` build stage on real data (the unArXive sample and the ResNet PDF): the manifest
counts, the arrays, and cited-by as the exact inverse of the references."""

from __future__ import annotations

import sqlite3

from live_index import BuiltIndex

from openxiv.indexer import layout
from openxiv.indexer.manifest import read as read_manifest
from openxiv.indexer.snapshot import current_snapshot, verify_snapshot
from openxiv.indexer.tables.references import ReferenceTable


def test_the_build_writes_references_and_their_inverse(refs_index: BuiltIndex) -> None:
    snap = current_snapshot(refs_index.root)
    assert snap is not None
    verify_snapshot(snap)
    m = read_manifest(snap)
    assert m.references is not None
    assert m.references.model_dump() == {
        "papers_with_references": 44,
        "references": 1785,
        "resolved": 379,
        "resolved_in_corpus": 2,
        "cited_papers": 378,
        "cited_papers_in_corpus": 1,
    }
    assert m.build is not None and "references" in m.build.stages_s
    table = ReferenceTable.load(snap / layout.REFERENCES)
    assert table is not None
    refs = table.references("2212.11790")
    assert refs is not None and len(refs) == 40
    assert refs[14][0] == "1512.03385" and "Deep residual learning" in (refs[14][1] or "")
    assert table.cited_by("1512.03385") == ["2212.11772", "2212.11790"]
    assert table.cited_by("1412.6980") == ["2212.11790"]  # Adam: cited, not in the corpus
    assert table.references("1512.03385") is None  # a PDF carries no bibliography
    assert table.cited_by("9999.99999") == [] and table.references("not-an-id-at-all-but-long") is None


def test_cited_by_is_the_inverse_of_the_stored_references(refs_index: BuiltIndex) -> None:
    snap = current_snapshot(refs_index.root)
    assert snap is not None
    table = ReferenceTable.load(snap / layout.REFERENCES)
    assert table is not None
    con = sqlite3.connect(snap / layout.CORPUS)
    rows = con.execute(
        "SELECT p.arxiv_id, r.cited_id FROM paper_references r JOIN papers p ON p.id = r.paper_id "
        "WHERE r.cited_id IS NOT NULL"
    ).fetchall()
    citing = [
        a
        for (a,) in con.execute(
            "SELECT DISTINCT p.arxiv_id FROM paper_references r JOIN papers p ON p.id = r.paper_id"
        )
    ]
    con.close()
    edges = set(rows)
    assert len(edges) == 379
    assert {(c, cited) for cited in {b for _, b in edges} for c in table.cited_by(cited)} == edges
    assert {(a, c) for a in citing for c, _ in table.references(a) or [] if c} == edges
