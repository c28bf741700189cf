"""Every paper's references and its inverse, cited-by, stored in a snapshot (``references/``), as
serving reads them (`ReferenceTable`).

The build (`openxiv.indexer.building.references`) writes, from the corpus's bibliographies:

    references/references.json   the manifest's ``references`` part (counts; see `ReferencesInfo`)
    references/ids.npy           every citing or cited arXiv id, sorted (bytes): an id's row
    references/in_corpus.npy     bool by row: the paper is in the snapshot's corpus
    references/refs_ptr.npy      int64, rows + 1: row r's bibliography is entries refs_ptr[r]:refs_ptr[r+1]
    references/entry_cited.npy   int32 by entry: the row of the cited paper, -1 when it resolves to none
    references/text_ptr.npy      int64, entries + 1: entry e's printed text is text.bin[text_ptr[e]:text_ptr[e+1]]
    references/text.bin          the entries' texts, UTF-8, one after another
    references/cited_ptr.npy     int64, rows + 1: the papers citing row r are cited_by[cited_ptr[r]:cited_ptr[r+1]]
    references/cited_by.npy      int32: citing rows, ascending (arXiv id order)

so serving a paper's references or the papers that cite it is a binary search and two slices
(memory-mapped), never a scan. A snapshot built before this stage has no ``references/``; the
service says so (409) instead of answering "no references".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from openxiv.indexer.tables.rowtable import mmap_array

__all__ = [
    "CITED_BY_FILE",
    "CITED_PTR_FILE",
    "ENTRY_CITED_FILE",
    "IDS_FILE",
    "INFO_FILE",
    "IN_CORPUS_FILE",
    "REFS_PTR_FILE",
    "TEXT_FILE",
    "TEXT_PTR_FILE",
    "ReferenceTable",
]

INFO_FILE = "references.json"
IDS_FILE, IN_CORPUS_FILE, REFS_PTR_FILE = "ids.npy", "in_corpus.npy", "refs_ptr.npy"
ENTRY_CITED_FILE, TEXT_PTR_FILE, TEXT_FILE = "entry_cited.npy", "text_ptr.npy", "text.bin"
CITED_PTR_FILE, CITED_BY_FILE = "cited_ptr.npy", "cited_by.npy"


class ReferenceTable:
    """The references of one snapshot (`load`); every answer is by arXiv id (canonical)."""

    def __init__(self, directory: Path) -> None:
        self.ids = mmap_array(directory / IDS_FILE)
        self.in_corpus = mmap_array(directory / IN_CORPUS_FILE)
        self.refs_ptr = mmap_array(directory / REFS_PTR_FILE)
        self.entry_cited = mmap_array(directory / ENTRY_CITED_FILE)
        self.text_ptr = mmap_array(directory / TEXT_PTR_FILE)
        size = (directory / TEXT_FILE).stat().st_size
        self.text = (
            np.memmap(directory / TEXT_FILE, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
        )
        self.cited_ptr = mmap_array(directory / CITED_PTR_FILE)
        self.cited_by_rows = mmap_array(directory / CITED_BY_FILE)

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
