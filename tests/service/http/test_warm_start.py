"""Warm on start (`OPENXIV_SERVE_WARM`) with a real ``openxiv serve`` over a real BM25 snapshot:
``/readyz`` says how warm the snapshot is, the log says it was warmed, searches answer meanwhile;
warm-before-ready holds ``/readyz`` until the warm-up ended; ``off`` warms nothing."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live_index import LISTING_CS, LiveServer

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.store import Store
from openxiv.indexer.building.job import build_index


@pytest.fixture(scope="module")
def bm25_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("warm")
    with Store(tmp / "corpus.sqlite") as store:
        store.ingest(itertools.islice(read_path(LISTING_CS), 300))
    build_index(tmp / "corpus.sqlite", tmp / "index", Settings(data_dir=tmp, embed="none"), progress=False)
    return tmp / "index"


def _served(root: Path, warm: str) -> Iterator[tuple[httpx.Client, LiveServer]]:
    live = LiveServer(root, log=root.parent / f"serve-{warm}.log", extra_env={"OPENXIV_SERVE_WARM": warm})
    try:
        with httpx.Client(base_url=live.url, timeout=60) as c:
            yield c, live
    finally:
        live.stop()


def test_warm_before_ready(bm25_root: Path) -> None:
    for c, live in _served(bm25_root, "before-ready"):
        ready = c.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["warm"].startswith("warm: ")  # ready only once warm
        assert c.post("/search", json={"query": "graph neural networks", "top_k": 3}).status_code == 200
        log = live.log.read_text()
        assert "warming snapshot" in log and " warm: " in log


def test_warm_in_the_background_is_the_default(bm25_root: Path) -> None:
    assert Settings().serve_warm == "background"
    for c, live in _served(bm25_root, "background"):
        state = c.get("/readyz").json()["warm"]
        assert state.startswith(("warming: ", "warm: "))
        assert c.post("/search", json={"query": "graph neural networks", "top_k": 3}).status_code == 200
        assert "warming snapshot" in live.log.read_text()


def test_warm_off(bm25_root: Path) -> None:
    for c, live in _served(bm25_root, "off"):
        assert c.get("/readyz").json()["warm"] == "off"
        assert "warming snapshot" not in live.log.read_text()
