"""A snapshot built and searched through a model server, end to end over HTTP (issue 38).

The scripted server on loopback (tests/model_server.py) answers ``/v1/embeddings``
with the shipped encoder's real vectors of 300 real listing papers. The build through it ranks like the
in-process build of the same encoder; with the server stopped, ``/search`` answers with its lexical
sides and a warning (a dense mode alone: 503 naming the server); a run recorded in the replay cache,
its query vectors and its fine reranks by the server's ``/v1/rerank`` (cosines of the same real
vectors), replays with the server stopped and gives the same bodies.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from model_server import ModelServer

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.indexer import manifest as manifest_file
from openxiv.indexer.building.job import build_index
from openxiv.indexer.encoders.embed import load_encoder
from openxiv.service.http.app import create_app

QUERIES = [
    "diffusion models for video generation",
    "reinforcement learning for reasoning",
    "graph neural networks",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    listing = SharedData.default().listing("cs")
    if not listing.exists():
        pytest.skip(f"shared listing not found: {listing} (set OPENXIV_SHARED)")
    tmp = tmp_path_factory.mktemp("remote-corpus")
    with Store(tmp / "corpus.sqlite") as store:
        store.ingest(itertools.islice(read_path(listing), 300))
    return tmp / "corpus.sqlite"


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    encoder = load_encoder(Settings())  # the shipped ONNX encoder: a real model behind the server
    with ModelServer(encoder.encode, model="openxiv-minilm") as s:
        yield s


def _search(http: TestClient, query: str, mode: str | None = None) -> Any:
    body: dict[str, Any] = {"query": query, "top_k": 10}
    if mode == "rerank":
        body["use_fine_rerank"] = True
    elif mode:
        body["mode"] = mode
    return http.post("/search", json=body)


def test_build_serve_degrade_and_replay(corpus: Path, server: ModelServer, tmp_path: Path) -> None:
    local = Settings(data_dir=tmp_path / "local", embed="papers")
    build_index(corpus, tmp_path / "local" / "index", local, progress=False)
    remote = Settings(data_dir=tmp_path / "remote", embed="papers", model=server.spec, embed_query_prefix="")
    snap = build_index(corpus, tmp_path / "remote" / "index", remote, progress=False)

    m = manifest_file.read(snap)
    assert m.embedding.encoder == "http:openxiv-minilm" and m.embedding.dim == 384
    assert m.embedding.fingerprint is not None and m.embedding.fingerprint.startswith(
        "http:openxiv-minilm:d384:"
    )
    assert m.embedding.encoded == 300

    replay = tmp_path / "replay.jsonl"
    recorded = remote.replace(
        remote_replay="record",
        remote_replay_file=replay,
        rerank=server.spec,
        rerank_api="cohere",
        rerank_depth=20,
        remote_query_timeout=60.0,  # the server embeds 20-40 texts per rerank on the loaded cores
    )
    with (
        TestClient(create_app(local, tmp_path / "local" / "index")) as a,
        TestClient(create_app(recorded, tmp_path / "remote" / "index")) as b,
    ):
        live: dict[str, Any] = {}
        for q in QUERIES:
            for mode in (None, "dense"):
                ra, rb = _search(a, q, mode), _search(b, q, mode)
                assert rb.status_code == 200 and "warnings" not in rb.json()
                ids_a = [h["arxiv_id"] for h in ra.json()["result"]]
                ids_b = [h["arxiv_id"] for h in rb.json()["result"]]
                assert len(set(ids_a) & set(ids_b)) >= 0.95 * len(ids_a), (q, mode)
                live[f"{q}|{mode}"] = rb.json()
            reranks = len(server.calls("/v1/rerank"))
            reranked = _search(b, q, "rerank")
            assert reranked.status_code == 200 and "warnings" not in reranked.json(), reranked.text
            assert len(server.calls("/v1/rerank")) == reranks + 1
            assert reranked.json() != live[f"{q}|None"]  # the server's scores reordered the head
            live[f"{q}|rerank"] = reranked.json()
        server.always = "500"  # the server breaks: lexical answers with a warning, dense alone a 503
        hybrid = _search(b, "transformers for time series")
        assert hybrid.status_code == 200 and hybrid.json()["result"]
        assert "dense ranking left out" in hybrid.json()["warnings"][0]
        v1 = b.get("/v1/search", params={"q": "transformers for time series"}).json()
        assert "HTTP 500" in v1["warnings"][0]
        dense = _search(b, "transformers for time series", "dense")
        assert dense.status_code == 503 and "query encoder is unavailable" in dense.json()["detail"]
        reranked = _search(b, "transformers for time series", "rerank")  # not recorded: asks the server
        assert reranked.status_code == 200 and reranked.json()["result"], reranked.text
        assert any("reranker cohere:openxiv-minilm is unavailable" in w for w in reranked.json()["warnings"])
        seed = live[f"{QUERIES[0]}|None"]["result"][0]["arxiv_id"]
        steered = b.get("/v1/similar", params={"arxiv_id": seed, "facet": "method"})
        assert steered.status_code == 200 and steered.json()["hits"], steered.text
        assert "facet: ignored, the query encoder is unavailable" in steered.json()["warnings"][0]
        server.always = None

    server.stop()  # replayed with the server gone: its port refuses connections
    server_down = recorded.replace(remote_replay="replay")
    with TestClient(create_app(server_down, tmp_path / "remote" / "index")) as c:
        for key, body in live.items():
            q, mode = key.split("|")
            assert _search(c, q, None if mode == "None" else mode).json() == body, key
