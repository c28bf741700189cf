"""Every paper's tldr, computed once at index build and stored in the snapshot (``tldr/``).

A search hit shows its paper's extractive tldr (`openxiv.corpus.text.paper_tldr`: the first real
sentence of the abstract, else of the first section with text). Deciding which sentences are real
costs a regex pass per sentence, and a paper without abstract needs its lead section read from the
store first; done per hit it was a visible share of a page's CPU (BENCHMARKS.md, «Search service»).
The build runs the same rule once per paper and writes the results in row order, in the table
`openxiv.indexer.tables.tldrs` describes and reads (so serving a hit's tldr is two array reads, and
serving never imports the build). The format version of the snapshot is unchanged:
``tldr/`` is an optional part that older code ignores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.records import Paper, Section
from openxiv.corpus.text import paper_tldr
from openxiv.indexer.tables.rowtable import write_info
from openxiv.indexer.tables.tldrs import INFO_FILE, OFFSETS_FILE, TEXT_FILE, rules

__all__ = ["build_tldrs", "write_tldrs"]

_LEAD_CHUNK = 500
"""Papers without abstract whose lead sections are read per store query at build time."""


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
