"""A snapshot built with ``--until`` served by a live ``openxiv serve``: no call returns a later paper.

The corpus is small and real (400 cs listing papers, 30 plain-text full texts, the unArXive sample),
built with the session's embedding cache (the same texts, so nothing is encoded) and a cutoff of
2025-03-18, the day 328 of the 400 listing papers were listed; the other 72 were listed the day
after. A BM25-only build of the same corpus answers similar papers with a 409.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from live_index import LISTING_CS, PLAINTEXT, UNARXIVE, BuiltIndex, LiveServer

from openxiv.corpus.readers import read_path
from openxiv.corpus.store import Store
from openxiv.indexer.building.cutoff import submitted_by
from openxiv.indexer.building.job import build_index
from openxiv.service.http.app import create_app

UNTIL = "2025-03-18"


@pytest.fixture(scope="module")
def small_db(test_index: BuiltIndex, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("until")
    items = itertools.chain(
        itertools.islice(read_path(LISTING_CS), 400),
        itertools.islice(read_path(PLAINTEXT), 30),
        read_path(UNARXIVE),
    )
    with Store(tmp / "corpus.sqlite") as store:
        store.ingest(items, settings=test_index.settings)
    return tmp / "corpus.sqlite"


@pytest.fixture(scope="module")
def later(small_db: Path) -> dict[str, str]:
    """The papers submitted after the cutoff: id -> title."""
    until = date.fromisoformat(UNTIL)
    with Store.open_readonly(small_db) as store:
        papers = list(store.iter_papers())
    days = {p.arxiv_id: submitted_by(p.arxiv_id, p.published, p.first_seen) for p in papers}
    return {p.arxiv_id: p.title or "" for p in papers if (days[p.arxiv_id] or date.max) > until}


@pytest.fixture(scope="module")
def until_server(test_index: BuiltIndex, small_db: Path) -> Iterator[httpx.Client]:
    root = small_db.parent / "index"
    settings = test_index.settings.replace(index_dir=root, build_until=UNTIL)
    build_index(small_db, root, settings, progress=False, cache_path=test_index.cache)
    live = LiveServer(root)
    try:
        with httpx.Client(base_url=live.url, timeout=60) as c:
            yield c
    finally:
        live.stop()


def test_no_call_returns_a_paper_submitted_after_the_cutoff(
    until_server: httpx.Client, later: dict[str, str]
) -> None:
    c = until_server
    assert len(later) == 72
    manifest = c.get("/v1/index").json()["manifest"]
    assert (
        manifest["corpus"]["cutoff"]["until"] == UNTIL and manifest["corpus"]["cutoff"]["removed_later"] == 72
    )
    for arxiv_id, title in itertools.islice(later.items(), 8):
        for r in (
            c.post("/search", json={"query": title, "top_k": 100}),
            c.get("/arxiv/", params={"type": "retrieve", "query": title, "top_k": 100, "mode": "dense"}),
        ):
            assert r.status_code == 200 and not set(h["arxiv_id"] for h in r.json()["result"]) & set(later)
        v1 = c.get("/v1/search", params={"q": title, "top_k": 100}).json()
        assert not {h["arxiv_id"] for h in v1["hits"]} & set(later)
        for kind in ("head", "brief", "raw"):
            assert c.get("/arxiv/", params={"type": kind, "arxiv_id": arxiv_id}).status_code == 404
        assert c.get(f"/v1/papers/{arxiv_id}").status_code == 404
        assert (
            c.get("/arxiv/", params={"type": "find", "arxiv_id": arxiv_id, "query": "model"}).status_code
            == 404
        )
        assert c.get("/arxiv/", params={"type": "similar", "arxiv_id": arxiv_id}).status_code == 404
    kept = c.post("/search", json={"query": "language models", "top_k": 1}).json()["result"][0]["arxiv_id"]
    seen: set[str] = set()
    total = 0
    for offset in range(0, 500, 100):  # every paper the similar ranking holds, page by page
        body = c.get(
            "/arxiv/", params={"type": "similar", "arxiv_id": kept, "top_k": 100, "offset": offset}
        ).json()
        total = body["total_count"]
        seen |= {h["arxiv_id"] for h in body["result"]}
    assert total == manifest["counts"]["papers"] - 1 == len(seen) and not seen & set(later)


def test_similar_on_a_snapshot_without_vectors_is_a_409(test_index: BuiltIndex, small_db: Path) -> None:
    root = small_db.parent / "bm25-only"
    settings = test_index.settings.replace(index_dir=root, embed="none")
    build_index(small_db, root, settings, progress=False)
    with TestClient(create_app(settings, root)) as c:
        r = c.get("/arxiv/", params={"type": "similar", "arxiv_id": "1706.03762"})
        assert r.status_code == 404  # not in this small corpus: an unknown seed is said first
        some = c.post("/search", json={"query": "language models", "top_k": 1}).json()["result"][0][
            "arxiv_id"
        ]
        for r in (
            c.get("/arxiv/", params={"type": "similar", "arxiv_id": some}),
            c.get("/v1/similar", params={"arxiv_id": some}),
        ):
            assert r.status_code == 409, r.text
            assert "no paper vectors" in r.json()["detail"] and "--embed papers" in r.json()["detail"]
        found = c.get("/arxiv/", params={"type": "find", "arxiv_id": some, "query": "language models"})
        assert found.status_code == 200 and found.json()["result"]  # find needs no vectors
