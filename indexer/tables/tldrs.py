"""The papers' tldrs stored in a snapshot (``tldr/``), as serving reads them (`TldrTable`).

The build (`openxiv.indexer.building.tldrs`) runs the tldr rule (`openxiv.corpus.text.paper_tldr`)
once per paper and writes the results in row order:

    tldr/tldr.json     {"rules": rules(), "papers": n, "with_tldr": k}
    tldr/offsets.npy   int64, n + 1: paper row r's tldr is text.bin[offsets[r]:offsets[r+1]]
    tldr/text.bin      the tldrs, UTF-8, one after another (an empty slice: the paper has none)

so serving a hit's tldr is two array reads (memory-mapped). ``rules`` is the version of the rule
(`rules`, a digest of the rule's source): a table written under other rules, or a snapshot built
before tldrs were stored, is not used, and the service computes the tldr per hit as before.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np

from openxiv.corpus import text
from openxiv.indexer.tables.rowtable import RowTable, digest, mmap_array, read_info

__all__ = ["INFO_FILE", "OFFSETS_FILE", "TEXT_FILE", "TldrTable", "rules"]

INFO_FILE = "tldr.json"
OFFSETS_FILE = "offsets.npy"
TEXT_FILE = "text.bin"


@cache
def rules() -> str:
    """The version of the tldr rule in this code: a digest of its source (`openxiv.corpus.text`, where
    the sentence and tldr rules live). Any edit there makes the tables of earlier builds unused
    (never wrong) until the next build."""
    return digest(inspect.getsource(text))


class TldrTable(RowTable):
    """The stored tldrs of one snapshot, by paper row (`load` says whether they can be used)."""

    def __init__(self, offsets: np.ndarray, text: np.ndarray, row_of: Callable[[str], int | None]) -> None:
        super().__init__(row_of)
        self.offsets = offsets
        self.text = text

    @classmethod
    def load(cls, directory: Path, n_papers: int, row_of: Callable[[str], int | None]) -> TldrTable | None:
        """The table in ``directory``, or ``None`` when there is none, it was written under other
        tldr rules, or it does not hold ``n_papers`` papers (the service then computes tldrs per hit)."""
        if read_info(directory / INFO_FILE, {"rules": rules(), "papers": n_papers}) is None:
            return None
        offsets = mmap_array(directory / OFFSETS_FILE)
        size = (directory / TEXT_FILE).stat().st_size
        if offsets.shape != (n_papers + 1,) or int(offsets[-1]) != size:
            return None
        text = np.memmap(directory / TEXT_FILE, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
        return cls(offsets, text, row_of)

    def get(self, arxiv_id: str) -> str | None:
        """The stored tldr of ``arxiv_id`` (``None``: the paper has none); `KeyError` when the paper
        is not in the table."""
        row = self.row_of(arxiv_id)
        if row is None:
            raise KeyError(arxiv_id)
        lo, hi = int(self.offsets[row]), int(self.offsets[row + 1])
        return self.text[lo:hi].tobytes().decode("utf-8") if hi > lo else None
