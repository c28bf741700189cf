"""Full-corpus index build (heavy: minutes). Run with `pytest -m heavy tests/indexer`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.indexer.building.job import build_index_report
from openxiv.indexer.snapshot import open_index

pytestmark = pytest.mark.heavy


def test_whole_shared_corpus_bm25_snapshot(tmp_path: Path) -> None:
    shared = SharedData.default()
    if not shared.available:
        pytest.skip(shared.missing_message())
    db = tmp_path / "corpus.sqlite"
    with Store(db) as store:
        for path in shared.ingest_inputs:
            store.ingest(read_path(path))
        stats = store.stats()
    settings = Settings(data_dir=tmp_path, embed="none")
    report = build_index_report(db, tmp_path / "index", settings, progress=False)
    counts = report.manifest.counts
    assert counts.papers == stats["papers"] > 100_000
    assert counts.passages == stats["passages"] > 100_000
    known = [json.loads(x) for x in shared.gold(SharedData.KNOWN_ITEM).read_text().splitlines()]
    exact = [q for q in known if q["kind"] == "exact"][:100]
    with open_index(tmp_path / "index", settings) as ix:
        found = sum(
            any(h.arxiv_id in q["relevant"] for h in ix.backend.search(q["query"], top_k=10).hits)
            for q in exact
        )
    assert found >= 95  # exact sentences from the full texts are found (success@10)
