"""The ``references`` stage: every paper's references and its inverse, cited-by, written at index build.

The corpus keeps each paper's bibliography (`openxiv.corpus.references`; only unArXive inputs carry
one). The build reads them from the snapshot's corpus copy once and writes arrays, so serving a
paper's references or the papers that cite it is a binary search and two slices (memory-mapped),
never a scan:

    references/references.json   the manifest's ``references`` part (counts; see `ReferencesInfo`)
    references/ids.npy           every citing or cited arXiv id, sorted (bytes): an id's row
    references/in_corpus.npy     bool by row: the paper is in the snapshot's corpus
    references/refs_ptr.npy      int64, rows + 1: row r's bibliography is entries refs_ptr[r]:refs_ptr[r+1]
    references/entry_cited.npy   int32 by entry: the row of the cited paper, -1 when it resolves to none
    references/text_ptr.npy      int64, entries + 1: entry e's printed text is text.bin[text_ptr[e]:text_ptr[e+1]]
    references/text.bin          the entries' texts, UTF-8, one after another
    references/cited_ptr.npy     int64, rows + 1: the papers citing row r are cited_by[cited_ptr[r]:cited_ptr[r+1]]
    references/cited_by.npy      int32: citing rows, ascending (arXiv id order)

A snapshot built before this stage has no ``references/`` and no manifest ``references`` part; the
service says so (409) instead of answering "no references".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from openxiv.indexer.building.rowtable import mmap_array, write_info

__all__ = ["INFO_FILE", "ReferenceTable", "write_references"]

INFO_FILE = "references.json"
_IDS, _IN_CORPUS, _REFS_PTR, _ENTRY_CITED = "ids.npy", "in_corpus.npy", "refs_ptr.npy", "entry_cited.npy"
_TEXT_PTR, _TEXT, _CITED_PTR, _CITED_BY = "text_ptr.npy", "text.bin", "cited_ptr.npy", "cited_by.npy"


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
    np.save(directory / _IDS, np.asarray([a.encode() for a in vocab], dtype=f"S{width}"))
    np.save(directory / _IN_CORPUS, np.asarray([a in papers for a in vocab], dtype=bool))
    np.save(directory / _REFS_PTR, _ptr(per_row))
    np.save(directory / _ENTRY_CITED, np.asarray(cited, dtype=np.int32))
    np.save(directory / _TEXT_PTR, _ptr(np.asarray([len(t) for t in texts], dtype=np.int64)))
    (directory / _TEXT).write_bytes(b"".join(texts))
    edges.sort()
    np.save(directory / _CITED_PTR, _ptr(np.bincount([c for c, _ in edges], minlength=n).astype(np.int64)))
    np.save(directory / _CITED_BY, np.asarray([r for _, r in edges], dtype=np.int32))
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


class ReferenceTable:
    """The references of one snapshot (`load`); every answer is by arXiv id (canonical)."""

    def __init__(self, directory: Path) -> None:
        self.ids = mmap_array(directory / _IDS)
        self.in_corpus = mmap_array(directory / _IN_CORPUS)
        self.refs_ptr = mmap_array(directory / _REFS_PTR)
        self.entry_cited = mmap_array(directory / _ENTRY_CITED)
        self.text_ptr = mmap_array(directory / _TEXT_PTR)
        size = (directory / _TEXT).stat().st_size
        self.text = np.memmap(directory / _TEXT, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
        self.cited_ptr = mmap_array(directory / _CITED_PTR)
        self.cited_by_rows = mmap_array(directory / _CITED_BY)

    @classmethod
    def load(cls, directory: Path) -> ReferenceTable | None:
        """The table in ``directory``; ``None`` when there is none (a snapshot built before it)."""
        return cls(directory) if (directory / INFO_FILE).is_file() else None

    def row(self, arxiv_id: str) -> int | None:
        key = arxiv_id.encode()
        if len(self.ids) == 0 or len(key) > self.ids.dtype.itemsize:
            return None
        i = int(np.searchsorted(self.ids, key))
        return i if i < len(self.ids) and self.ids[i] == key else None

    def _id(self, row: int) -> str:
        return bytes(self.ids[row]).decode()

    def references(self, arxiv_id: str) -> list[tuple[str | None, str | None]] | None:
        """``(cited arXiv id or None, printed text or None)`` per entry of the paper's bibliography, in
        its order; ``None`` when the table holds no bibliography of the paper."""
        r = self.row(arxiv_id)
        if r is None or self.refs_ptr[r] == self.refs_ptr[r + 1]:
            return None
        out: list[tuple[str | None, str | None]] = []
        for e in range(int(self.refs_ptr[r]), int(self.refs_ptr[r + 1])):
            c = int(self.entry_cited[e])
            lo, hi = int(self.text_ptr[e]), int(self.text_ptr[e + 1])
            text = self.text[lo:hi].tobytes().decode("utf-8", "surrogatepass") if hi > lo else None
            out.append((self._id(c) if c >= 0 else None, text))
        return out

    def cited_by(self, arxiv_id: str) -> list[str]:
        """The papers whose bibliography resolves an entry to ``arxiv_id``, in arXiv id order."""
        r = self.row(arxiv_id)
        if r is None:
            return []
        return [
            self._id(int(c)) for c in self.cited_by_rows[int(self.cited_ptr[r]) : int(self.cited_ptr[r + 1])]
        ]
