"""Fixtures of the service tests that need no model and no server."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store


@pytest.fixture(scope="session")
def bm25_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index root of a BM25-only build (a few seconds) of the first 60 astro listing papers and
    100 plain texts of ../shared: derived, recovered and listed titles, numbered sections, MSC codes,
    TeX residue."""
    from openxiv.indexer.building.job import build_index

    shared = SharedData.default()
    if not shared.available:
        pytest.skip(shared.missing_message())
    tmp = tmp_path_factory.mktemp("served")
    items = itertools.chain(
        itertools.islice(read_path(shared.listing("astro")), 60),
        itertools.islice(read_path(shared.plaintext), 100),
    )
    with Store(tmp / "corpus.sqlite") as store:
        store.ingest(items)
    build_index(tmp / "corpus.sqlite", tmp / "index", Settings(data_dir=tmp, embed="none"), progress=False)
    return tmp / "index"
