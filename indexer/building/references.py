"""The ``references`` stage: every paper's references and its inverse, cited-by, written at index build.

The corpus keeps each paper's bibliography (`openxiv.corpus.references`; only unArXive inputs carry
one). The build reads them from the snapshot's corpus copy once and writes arrays, so serving a
paper's references or the papers that cite it is a binary search and two slices (memory-mapped),
never a scan (the table `openxiv.indexer.tables.references` describes and reads, so serving never
imports the build). A snapshot built before this stage has no ``references/`` and no manifest
``references`` part; the service says so (409) instead of answering "no references".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from openxiv.indexer.tables.references import (
    CITED_BY_FILE,
    CITED_PTR_FILE,
    ENTRY_CITED_FILE,
    IDS_FILE,
    IN_CORPUS_FILE,
    INFO_FILE,
    REFS_PTR_FILE,
    TEXT_FILE,
    TEXT_PTR_FILE,
)
from openxiv.indexer.tables.rowtable import write_info

__all__ = ["write_references"]


def _ptr(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def write_references(corpus_db: Path, directory: Path) -> dict[str, Any]:
    """Read the bibliographies of ``corpus_db`` (the snapshot's copy) and write the table into
    ``directory``; the counts (the manifest's ``references`` part)."""
    from openxiv.corpus.references import iter_references
    from openxiv.corpus.store import Store

    store = Store.open_readonly(corpus_db)
    try:
        with store.engine.connect() as conn:
            papers = {aid for (aid,) in conn.exec_driver_sql("SELECT arxiv_id FROM papers")}
            lists = list(iter_references(conn))
    finally:
        store.close()
    vocab = sorted({aid for aid, _ in lists} | {r.arxiv_id for _, refs in lists for r in refs if r.arxiv_id})
    row = {aid: i for i, aid in enumerate(vocab)}
    n = len(vocab)
    per_row = np.zeros(n, dtype=np.int64)
    cited: list[int] = []
    texts: list[bytes] = []
    edges: list[tuple[int, int]] = []
    for aid, refs in sorted(lists, key=lambda item: item[0]):
        r = row[aid]
        per_row[r] = len(refs)
        for ref in refs:
            c = row[ref.arxiv_id] if ref.arxiv_id else -1
            cited.append(c)
            texts.append((ref.text or "").encode("utf-8", "surrogatepass"))
            if c >= 0:
                edges.append((c, r))
    directory.mkdir(parents=True, exist_ok=True)
    width = max((len(a) for a in vocab), default=1)
    np.save(directory / IDS_FILE, np.asarray([a.encode() for a in vocab], dtype=f"S{width}"))
    np.save(directory / IN_CORPUS_FILE, np.asarray([a in papers for a in vocab], dtype=bool))
    np.save(directory / REFS_PTR_FILE, _ptr(per_row))
    np.save(directory / ENTRY_CITED_FILE, np.asarray(cited, dtype=np.int32))
    np.save(directory / TEXT_PTR_FILE, _ptr(np.asarray([len(t) for t in texts], dtype=np.int64)))
    (directory / TEXT_FILE).write_bytes(b"".join(texts))
    edges.sort()
    np.save(
        directory / CITED_PTR_FILE, _ptr(np.bincount([c for c, _ in edges], minlength=n).astype(np.int64))
    )
    np.save(directory / CITED_BY_FILE, np.asarray([r for _, r in edges], dtype=np.int32))
    resolved = [c for c in cited if c >= 0]
    info = {
        "papers_with_references": len(lists),
        "references": len(cited),
        "resolved": len(resolved),
        "resolved_in_corpus": sum(1 for c in resolved if vocab[c] in papers),
        "cited_papers": len({c for c in resolved}),
        "cited_papers_in_corpus": len({c for c in resolved if vocab[c] in papers}),
    }
    return write_info(directory / INFO_FILE, info)
