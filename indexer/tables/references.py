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
    references/cited_by.npy      int32: citing rows, ascending (arXiv id order), each citing paper once
    references/context_ptr.npy   int64, entries + 1: entry e's citing sentence is context.bin[...] (like text)
    references/context.bin       the entries' citing sentences, UTF-8 (empty: none found)
    references/citations.npy     int32 by snapshot paper row: the corpus papers citing it (within this
                                 corpus only: the in-corpus citation count)

Every corpus paper has a row (cited or not), and so has every arXiv id an entry prints outside the
corpus. Snapshots built before contexts and counts (issue 41) lack the last three files: their
entries have no context and their papers no count (`citations` is ``None``).

so serving a paper's references or the papers that cite it is a binary search and two slices
(memory-mapped), never a scan. A snapshot built before this stage has no ``references/``; the
service says so (409) instead of answering "no references".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from openxiv.indexer.tables.rowtable import mmap_array

__all__ = [
    "CITATIONS_FILE",
    "CITED_BY_FILE",
    "CITED_PTR_FILE",
    "CONTEXT_FILE",
    "CONTEXT_PTR_FILE",
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
CONTEXT_PTR_FILE, CONTEXT_FILE, CITATIONS_FILE = "context_ptr.npy", "context.bin", "citations.npy"


def _blob(path: Path) -> np.ndarray:
    size = path.stat().st_size if path.is_file() else 0
    return np.memmap(path, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)


def _text(blob: np.ndarray, ptr: np.ndarray, e: int) -> str | None:
    lo, hi = int(ptr[e]), int(ptr[e + 1])
    return blob[lo:hi].tobytes().decode("utf-8", "surrogatepass") if hi > lo else None


class ReferenceTable:
    """The references of one snapshot (`load`); every answer is by arXiv id (canonical)."""

    def __init__(self, directory: Path) -> None:
        self.ids = mmap_array(directory / IDS_FILE)
        self.in_corpus = mmap_array(directory / IN_CORPUS_FILE)
        self.refs_ptr = mmap_array(directory / REFS_PTR_FILE)
        self.entry_cited = mmap_array(directory / ENTRY_CITED_FILE)
        self.text_ptr = mmap_array(directory / TEXT_PTR_FILE)
        self.text = _blob(directory / TEXT_FILE)
        self.cited_ptr = mmap_array(directory / CITED_PTR_FILE)
        self.cited_by_rows = mmap_array(directory / CITED_BY_FILE)
        has_context = (directory / CONTEXT_PTR_FILE).is_file()
        self.context_ptr = mmap_array(directory / CONTEXT_PTR_FILE) if has_context else None
        self.context_blob = _blob(directory / CONTEXT_FILE) if has_context else np.zeros(0, np.uint8)
        counts = directory / CITATIONS_FILE
        self.citations: np.ndarray | None = mmap_array(counts) if counts.is_file() else None
        """In-corpus citation count by snapshot paper row; ``None`` for a snapshot built before them."""

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
        entries = self.entries(arxiv_id)
        return None if entries is None else [(c, t) for c, t, _ in entries]

    def entries(self, arxiv_id: str) -> list[tuple[str | None, str | None, str | None]] | None:
        """`references` with each entry's citing sentence (or None) third."""
        r = self.row(arxiv_id)
        if r is None or self.refs_ptr[r] == self.refs_ptr[r + 1]:
            return None
        out: list[tuple[str | None, str | None, str | None]] = []
        for e in range(int(self.refs_ptr[r]), int(self.refs_ptr[r + 1])):
            c = int(self.entry_cited[e])
            text = _text(self.text, self.text_ptr, e)
            context = _text(self.context_blob, self.context_ptr, e) if self.context_ptr is not None else None
            out.append((self._id(c) if c >= 0 else None, text, context))
        return out

    def context_of(self, citing: str, cited: str) -> str | None:
        """The citing sentence of ``citing``'s first entry that resolves to ``cited`` and has one."""
        r, c = self.row(citing), self.row(cited)
        if r is None or c is None or self.context_ptr is None:
            return None
        lo, hi = int(self.refs_ptr[r]), int(self.refs_ptr[r + 1])
        for e in np.flatnonzero(np.asarray(self.entry_cited[lo:hi]) == c):
            if (text := _text(self.context_blob, self.context_ptr, lo + int(e))) is not None:
                return text
        return None

    def count(self, arxiv_id: str) -> int:
        """How many papers of the table cite ``arxiv_id`` (each citing paper once)."""
        r = self.row(arxiv_id)
        return 0 if r is None else int(self.cited_ptr[r + 1] - self.cited_ptr[r])

    def cited_by(self, arxiv_id: str) -> list[str]:
        """The papers whose bibliography resolves an entry to ``arxiv_id``, in arXiv id order."""
        r = self.row(arxiv_id)
        if r is None:
            return []
        return [
            self._id(int(c)) for c in self.cited_by_rows[int(self.cited_ptr[r]) : int(self.cited_ptr[r + 1])]
        ]
