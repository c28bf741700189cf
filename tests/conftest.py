"""Session fixtures shared by every part's tests: a real index of real shared data and a live ``openxiv serve``
(see live_index.py); the service and the evaluator's agent tests both use them."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_index import (
    KNOWN_ITEM,
    BuiltIndex,
    LiveServer,
    MilvusIndex,
    build,
    build_milvus,
    ingest_subset,
    require_shared,
    service_settings,
)
from refs_index import RESNET_PDF, build_refs_index

SLOW_KINDS = {
    "live_server": "starts a real `openxiv serve` (or `openxiv mcp`) process",
    "model": "loads the real MiniLM encoder (torch or ONNX), or builds an index with it",
    "browser": "drives headless Chromium",
    "ray": "starts a local Ray",
    "milvus": "builds into or serves from milvus-lite",
    "modelserver": "runs a real third-party model server (Infinity) on loopback (left out of the default run, "
    "`make test-modelserver` runs it)",
    "lucene": "indexes and searches with real Lucene (Pyserini's venv; left out of the default run, "
    "`make test-lucene` runs it)",
    "heavy": "full-corpus builds and long benchmarks (left out of the default run)",
    "extended": "a longer variant of a default-suite test (another backend, more queries; left out of the "
    "default run, `make test-all` runs it)",
}
"""The slow kinds of test (markers declared in pyproject.toml). `pytest_collection_modifyitems` marks
each test with the kinds it is and, when it is any of them, with ``slow``: ``pytest -m "not slow"`` is
the fast inner loop."""
KIND_OF_FIXTURE = {
    "server": "live_server",
    "client": "live_server",
    "refs_server": "live_server",
    "test_index": "model",
    "onnx_models": "model",
    "milvus_index": "milvus",
    "minilm": "model",
    "minilm_onnx": "model",
    "dense_vectors": "model",
    "onnx_index": "model",
}
"""A test using one of these fixtures (directly or through another fixture) is of that kind."""
KIND_OF_TEST = {
    "test_mcp.py": "live_server",
    "test_warm_start.py": "live_server",
    "test_ray_embed.py": "ray",
    "test_parallel_ingest.py::test_ray_tasks_store_what_the_serial_ingest_stores": "ray",
    "test_milvus_build.py": "milvus",
    "test_milvus_parity.py": "milvus",
    "test_embed.py::test_onnx_export_is_made_once_and_reused": "model",
    "test_encoder_determinism.py": "model",
    "test_encoder_snapshot.py": "model",
    "test_shipped_encoder.py": "model",
    "test_remote_search.py": "model",
    "test_shipped_reranker.py": "model",
}
"""Tests (``file`` or ``file::test``) of a slow kind that no fixture above shows (they start it
themselves)."""


def slow_kinds(item: pytest.Item) -> set[str]:
    """The slow kinds of one collected test."""
    kinds = {KIND_OF_FIXTURE[f] for f in getattr(item, "fixturenames", ()) if f in KIND_OF_FIXTURE}
    file = item.path.name
    test = f"{file}::{getattr(item, 'originalname', item.name)}"
    kinds |= {kind for key, kind in KIND_OF_TEST.items() if key in (file, test)}
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("backend") == "milvus":
        kinds.add("milvus")
    kinds |= {m.name for m in item.iter_markers() if m.name in SLOW_KINDS}
    return kinds


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        kinds = slow_kinds(item)
        for kind in sorted(kinds):
            item.add_marker(kind)
        if kinds:
            item.add_marker("slow")


MILVUS_CONTRACT = {"test_api", "test_arb_contract", "test_sdk"}
"""Modules whose tests also run against a server on the Milvus backend (milvus-lite)."""
MILVUS_EXTENDED = {
    "test_api::test_offset_and_top_k_are_slices_of_one_list",
    "test_api::test_mode_override",
    "test_api::test_same_query_twice_gives_identical_bytes",
    "test_api::test_mode_vocabulary_is_the_engines_on_every_route",
    "test_arb_contract::test_agent_request_gets_a_dict_with_result_list",
    "test_arb_contract::test_evidence_comes_from_the_full_text",
    "test_sdk::test_search_with_author_filter",
    "test_sdk::test_sdk_finds_a_title_less_full_text_by_its_recovered_title",
}
"""Contract tests whose Milvus run is ``extended`` (`make test-all`): each costs seconds of milvus-lite
searches while its embedded run and a named default-suite sibling (in its docstring) cover the same
behaviour; their other Milvus runs stay in the default suite."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The HTTP contract modules run once per backend; every other module on the embedded one."""
    if "backend" in metafunc.fixturenames:
        module = metafunc.module.__name__.rsplit(".", 1)[-1]
        backends: list[Any] = ["embedded"]
        if module in MILVUS_CONTRACT:
            extended = f"{module}::{metafunc.function.__name__}" in MILVUS_EXTENDED
            backends.append(pytest.param("milvus", marks=[pytest.mark.extended] if extended else []))
        metafunc.parametrize("backend", backends, indirect=True, scope="session")


@pytest.fixture(scope="session")
def onnx_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged MiniLM as released, exported to ONNX int8 once for the session: a data dir's
    ``models/`` folder, copied into a fixture's fresh data dir (`seed_models`) instead of exporting it
    there again. The default encoder needs no export (it ships exported); this is for the tests of the
    export path itself (test_embed.py::test_onnx_export_is_made_once_and_reused, ``minilm_onnx``)."""
    from openxiv.corpus.settings.model import Settings
    from openxiv.indexer.encoders.embed import BASE_MODEL, load_encoder

    data_dir = tmp_path_factory.mktemp("onnx-models")
    load_encoder(Settings(data_dir=data_dir), model=f"onnx-int8:{BASE_MODEL}")
    return data_dir / "models"


@pytest.fixture(scope="session")
def test_index(tmp_path_factory: pytest.TempPathFactory) -> BuiltIndex:
    """Built once per session; ``OPENXIV_TEST_SERVICE_DIR`` names a folder to build into and reuse."""
    require_shared()
    keep = os.environ.get("OPENXIV_TEST_SERVICE_DIR")
    tmp = Path(keep) if keep else tmp_path_factory.mktemp("openxiv-service")
    settings = service_settings(tmp)
    cache = Path(os.environ.get("OPENXIV_TEST_EMBCACHE") or tmp / "embcache.sqlite")
    db = tmp / "corpus.sqlite"
    stats: dict[str, Any] = {}
    if not (keep and db.is_file() and (tmp / "index" / "CURRENT").is_file()):
        tmp.mkdir(parents=True, exist_ok=True)
        stats = ingest_subset(db, settings)
        build(db, tmp / "index", settings, cache)
    return BuiltIndex(root=tmp / "index", db=db, settings=settings, cache=cache, stats=stats)


@pytest.fixture(scope="session")
def refs_index(tmp_path_factory: pytest.TempPathFactory) -> BuiltIndex:
    """The unArXive sample and the ResNet PDF, BM25-only (tests/refs_index.py): references tests."""
    require_shared()
    if not RESNET_PDF.is_file():
        pytest.skip(f"shared PDF not found ({RESNET_PDF})")
    return build_refs_index(tmp_path_factory.mktemp("openxiv-refs"))


@pytest.fixture(scope="session")
def milvus_index(test_index: BuiltIndex, tmp_path_factory: pytest.TempPathFactory) -> MilvusIndex:
    """The test corpus built again with ``--backend milvus`` into a milvus-lite file."""
    pytest.importorskip("pymilvus")
    pytest.importorskip("milvus_lite")
    return build_milvus(test_index, tmp_path_factory.mktemp("openxiv-milvus"))


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest) -> str:
    """Search engine behind ``server`` (parametrized by `pytest_generate_tests`)."""
    return str(getattr(request, "param", "embedded"))


SHIPPED_RERANK = {
    "OPENXIV_RERANK": "shipped",
    "OPENXIV_RERANK_WEIGHT": "0",
}  # the cross-encoder alone: it reorders
"""The session's server names the shipped cross-encoder (the default) with the cross-encoder alone
deciding the order: the fronts' rerank tests (tests/service/test_fine_rerank.py, test_paper_tools.py)
ask it for ``use_fine_rerank`` and see the head reordered."""


@pytest.fixture(scope="session")
def server(test_index: BuiltIndex, backend: str, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    if backend == "milvus":
        mi: MilvusIndex = request.getfixturevalue("milvus_index")
        live = LiveServer(mi.root, extra_env={"OPENXIV_MILVUS_URI": mi.serve_uri, **SHIPPED_RERANK})
    else:
        live = LiveServer(test_index.root, extra_env=SHIPPED_RERANK)
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="session")
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


@pytest.fixture(scope="session")
def known_item(test_index: BuiltIndex) -> dict[str, Any]:
    """An ``exact`` known-item query whose paper (a plain-text full text) is in the test corpus."""
    from openxiv.corpus.store import Store

    with Store.open_readonly(test_index.db) as store:
        for line in KNOWN_ITEM.open(encoding="utf-8"):
            item = json.loads(line)
            if item["kind"] == "exact" and store.get_paper(item["relevant"][0]) is not None:
                return dict(item)
    pytest.skip("no known-item paper in the test corpus")
