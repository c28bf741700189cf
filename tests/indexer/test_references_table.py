"""The ``references`` build stage on real data (the unArXive sample and three PDFs, tests/refs_index.py):
the manifest counts, the arrays, entries resolved by title at build, in-corpus citation counts, and
cited-by as the exact inverse of the references."""

from __future__ import annotations

import sqlite3

from live_index import BuiltIndex

from openxiv.indexer import layout
from openxiv.indexer.engine.meta import PaperMeta
from openxiv.indexer.manifest import read as read_manifest
from openxiv.indexer.snapshot import current_snapshot, verify_snapshot
from openxiv.indexer.tables.references import ReferenceTable


def test_the_build_writes_references_and_their_inverse(refs_index: BuiltIndex) -> None:
    snap = current_snapshot(refs_index.root)
    assert snap is not None
    verify_snapshot(snap)
    m = read_manifest(snap)
    assert m.references is not None
    info = m.references.model_dump()
    info.pop("index_bytes")
    assert info == {
        "papers_with_references": 47,  # 44 unArXive papers and the 3 PDFs
        "references": 1899,
        "resolved": 421,
        "resolved_in_corpus": 8,
        "cited_papers": 415,
        "cited_papers_in_corpus": 3,
        "resolved_by_doi": 0,
        "resolved_by_title": 6,
        "with_context": 109,  # the PDFs' entries with their citing sentence (unArXive's carry none)
        "citation_links": 8,
    }
    assert m.build is not None and "references" in m.build.stages_s
    table = ReferenceTable.load(snap / layout.REFERENCES)
    assert table is not None
    refs = table.references("2212.11790")
    assert refs is not None and len(refs) == 40
    assert refs[14][0] == "1512.03385" and "Deep residual learning" in (refs[14][1] or "")
    # 1706.03762 and 2212.11803 print ResNet's title, not its id: resolved at build by title and year
    assert table.cited_by("1512.03385") == ["1706.03762", "2212.11772", "2212.11790", "2212.11803"]
    assert table.cited_by("1502.03167") == ["1512.03385"]  # ResNet's PDF bibliography, by title
    assert table.cited_by("1412.6980") == ["2212.11790"]  # Adam: cited, not in the corpus
    assert table.cited_by("9999.99999") == [] and table.references("not-an-id-at-all-but-long") is None
    assert table.references("2212.11739") is None  # an unArXive paper without bib_entries
    resnet = table.entries("1512.03385")
    assert resnet is not None and len(resnet) == 50
    cited, text, context = resnet[15]
    assert cited == "1502.03167" and (text or "").startswith("S. Ioffe and C. Szegedy. Batch normalization")
    assert context is not None and "[16]" in context
    assert table.context_of("1512.03385", "1502.03167") == context
    assert table.count("1512.03385") == 4 and table.count("2212.11790") == 0


def test_in_corpus_citation_counts_follow_the_snapshot_rows(refs_index: BuiltIndex) -> None:
    snap = current_snapshot(refs_index.root)
    assert snap is not None
    table = ReferenceTable.load(snap / layout.REFERENCES)
    meta = PaperMeta.load(snap / layout.META)
    assert table is not None and table.citations is not None and meta.citations is not None
    counts = {str(a): int(c) for a, c in zip(meta.arxiv_ids, meta.citations, strict=True) if c}
    assert counts == {"1512.03385": 4, "1706.03762": 3, "1502.03167": 1}
    # every count is the number of distinct corpus papers citing it
    assert all(len(table.cited_by(a)) == n for a, n in counts.items())


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
    printed = set(rows)  # what the corpus stores: the ids the entries print (or unArXive resolved)
    assert len(printed) == 415  # 379 from unArXive, 36 printed in the PDFs
    edges = {(a, c) for a in citing for c, _ in table.references(a) or [] if c}
    assert printed <= edges and len(edges - printed) == 6  # and the 6 resolved at build by title
    assert {(c, cited) for cited in {b for _, b in edges} for c in table.cited_by(cited)} == edges
