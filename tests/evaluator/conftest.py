"""Fixtures for the evaluator tests: the shared gold files and a small real corpus DB."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from openxiv.corpus.shared import SharedData


@pytest.fixture(scope="session")
def arb_dir() -> Path:
    d = SharedData.default().gold("autoresearchbench")
    if not (d / "sample_inference_output_wide.jsonl").is_file():
        pytest.skip(f"AutoResearchBench gold files not found under {d} (set OPENXIV_SHARED)")
    return d


@pytest.fixture(scope="session")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real SQLite corpus of the first 300 papers of the shared cs listing."""
    listing = SharedData.default().listing("cs")
    if not listing.is_file():
        pytest.skip(f"listing file not found: {listing} (set OPENXIV_SHARED)")
    from openxiv.corpus.readers.listing import read_listing
    from openxiv.corpus.store import Store

    path = tmp_path_factory.mktemp("corpus") / "corpus.sqlite"
    store = Store(path)
    store.ingest(itertools.islice(read_listing(listing), 300))
    store.close()
    return path
