"""Full-size corpus checks (``pytest -m heavy``): both listing files, every line."""

from __future__ import annotations

from pathlib import Path

import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.store import Store

pytestmark = pytest.mark.heavy

LINES = 88_917
RAW_IDS = 88_897
"""Distinct id strings over both files (shared/README): 20 ids occur verbatim in both files."""
PAPERS = 88_854
"""Distinct papers: 43 more lines repeat a paper with a version suffix (``2512.07042`` and
``2512.07042v1``), 6 of them across the two files and 37 inside the astro listing."""


def test_full_listing_ingest_merges_every_duplicate(listing_files: list[Path], tmp_path: Path) -> None:
    with Store(tmp_path / "c.sqlite") as store:
        summaries = [store.ingest(read_path(p), settings=Settings()) for p in listing_files]
        assert sum(s.read for s in summaries) == LINES
        assert sum(s.skipped for s in summaries) == 0
        assert sum(s.added for s in summaries) == PAPERS
        assert sum(s.updated + s.unchanged for s in summaries) == LINES - PAPERS
        stats = store.stats()
        assert stats["papers"] == PAPERS
        both = [
            d.arxiv_id
            for d in store.get_papers([d.arxiv_id for d in store.iter_papers()]).values()
            if len(d.sources) == 2
        ]
        assert len(both) == 26  # the 20 verbatim cross-listed ids + 6 with a version suffix in one file
        fp = store.fingerprint()
        again = store.ingest(read_path(listing_files[1]), settings=Settings())
        assert (again.added, again.updated) == (0, 0) and store.fingerprint() == fp
