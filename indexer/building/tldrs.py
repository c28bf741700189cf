"""Every paper's tldr, computed once at index build and stored in the snapshot (``tldr/``).

A search hit shows its paper's extractive tldr (`openxiv.corpus.text.paper_tldr`: the first real
sentence of the abstract, else of the first section with text). Deciding which sentences are real
costs a regex pass per sentence, and a paper without abstract needs its lead section read from the
store first; done per hit it was a visible share of a page's CPU (BENCHMARKS.md, «Search service»).
The build runs the same rule once per paper and writes the results in row order:

    tldr/tldr.json     {"rules": TLDR_RULES, "papers": n, "with_tldr": k}
    tldr/offsets.npy   int64, n + 1: paper row r's tldr is text.bin[offsets[r]:offsets[r+1]]
    tldr/text.bin      the tldrs, UTF-8, one after another (an empty slice: the paper has none)

so serving a hit's tldr is two array reads (memory-mapped). ``rules`` is the version of the rule
(`rules`, a digest of the rule's source): a table written under other rules, or a snapshot built
before tldrs were stored, is not used, and the service computes the tldr per hit as before. The
format version of the snapshot is unchanged: ``tldr/`` is an optional part that older code ignores.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus import text
from openxiv.corpus.records import Paper, Section
from openxiv.corpus.text import paper_tldr
from openxiv.indexer.building.rowtable import RowTable, digest, mmap_array, read_info, write_info

__all__ = ["TldrTable", "build_tldrs", "rules", "write_tldrs"]

INFO_FILE = "tldr.json"
OFFSETS_FILE = "offsets.npy"
TEXT_FILE = "text.bin"
_LEAD_CHUNK = 500
"""Papers without abstract whose lead sections are read per store query at build time."""


@cache
def rules() -> str:
    """The version of the tldr rule in this code: a digest of its source (`openxiv.corpus.text`, where
    the sentence and tldr rules live). Any edit there makes the tables of earlier builds unused
    (never wrong) until the next build."""
    return digest(inspect.getsource(text))


def build_tldrs(
    papers: Sequence[tuple[str, str | None]], lead_sections: Callable[[Sequence[str]], dict[str, Section]]
) -> Iterator[str | None]:
    """The tldr of each of ``papers`` (``(arxiv_id, abstract)``) in order, exactly as
    `openxiv.corpus.text.paper_tldr` gives it for a search hit; ``lead_sections``
    (`openxiv.corpus.store.Store.lead_sections`) is asked, a chunk at a time, for the papers without
    abstract."""
    for start in range(0, len(papers), _LEAD_CHUNK):
        chunk = papers[start : start + _LEAD_CHUNK]
        no_abstract = [arxiv_id for arxiv_id, abstract in chunk if not abstract]
        leads = lead_sections(no_abstract) if no_abstract else {}
        for arxiv_id, abstract in chunk:
            lead = leads.get(arxiv_id)
            yield paper_tldr(Paper(arxiv_id, abstract=abstract), [lead] if lead is not None else None)


def write_tldrs(directory: Path, tldrs: Iterator[str | None]) -> dict[str, Any]:
    """Write the table (see the module docstring) into ``directory``; its ``tldr.json`` content."""
    directory.mkdir(parents=True, exist_ok=True)
    offsets = [0]
    with_tldr = 0
    with (directory / TEXT_FILE).open("wb") as fh:
        for t in tldrs:
            data = t.encode("utf-8") if t else b""
            fh.write(data)
            offsets.append(offsets[-1] + len(data))
            with_tldr += bool(data)
    np.save(directory / OFFSETS_FILE, np.asarray(offsets, dtype=np.int64))
    return write_info(
        directory / INFO_FILE, {"rules": rules(), "papers": len(offsets) - 1, "with_tldr": with_tldr}
    )


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
