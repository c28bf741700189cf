"""A search waiting on a model server holds no compute slot, on every front (issue 38).

One compute slot (``serve_concurrency=1``) and a snapshot built through the scripted model server on
loopback (tests/model_server.py; hashed stand-in vectors: what is tested is where the wait happens,
not ranking). The server holds every request until the test releases it, and a search waits at most
``remote_query_timeout=120`` s for it. While one front's search waits there (for its query vector,
or with ``use_fine_rerank`` for the rerank scores), a BM25 search, which needs no server, must be
answered: were the waiting search holding the only slot, it would not be before the client gives up.
Then the held search is released and answers from the server's vector or scores. Nothing is timed.

Similar papers with a ``facet`` encode the seeds' sentences of that kind as a query: they wait on the
server the same way (``GET /v1/similar``, ``GET /arxiv/?type=similar``, the MCP tool
``similar_papers``), each with a seed no earlier request steered by, and answer as the in-process
use case does (`Library.similar`, no event loop: the same server's vector). With the server failing
they answer without the lean, as the seeds' vectors alone rank, and say so.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from fastapi.testclient import TestClient
from model_server import ModelServer, hashed_embed

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.indexer.building.job import build_index
from openxiv.service.http.app import create_app
from openxiv.service.library import Library
from openxiv.service.mcp.server import build_server

FREE = {"query": "graph neural networks for molecules", "mode": "bm25", "top_k": 3}
"""A search that needs no model server."""
GIVE_UP_S = 60.0
"""How long the free search may take while another waits (a held slot would take 120 s)."""
_n = itertools.count()
_seeds: Iterator[str] | None = None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModelServer, Path, Settings]]:
    listing = SharedData.default().listing("cs")
    if not listing.exists():
        pytest.skip(f"shared listing not found: {listing} (set OPENXIV_SHARED)")
    tmp = tmp_path_factory.mktemp("remote-slots")
    with Store(tmp / "corpus.sqlite") as store:
        store.ingest(itertools.islice(read_path(listing), 150))
    with ModelServer(hashed_embed, model="slow-model") as server, pytest.MonkeyPatch.context() as env:
        env.setenv("OPENXIV_REMOTE_QUERY_TIMEOUT", "120")  # a reranker resolved without settings
        build = Settings(data_dir=tmp, embed="papers", model=server.spec, embed_query_prefix="")
        build_index(tmp / "corpus.sqlite", tmp / "index", build, progress=False)
        settings = build.replace(
            serve_concurrency=1,
            remote_query_timeout=120.0,
            request_budget_s=300.0,
            rerank=server.spec,
            rerank_api="cohere",
            rerank_depth=20,
        )
        yield server, tmp / "index", settings


def _unique(text: str) -> str:
    """A query no earlier search asked (a fetched vector is kept: a repeat would not wait)."""
    return f"{text} {next(_n)}"


def _seed(root: Path) -> str:
    """A paper no earlier similar request steered by (a fetched facet vector is kept too)."""
    global _seeds
    if _seeds is None:
        with Store(root.parent / "corpus.sqlite") as store:
            _seeds = iter([p.arxiv_id for p in store.iter_papers() if p.abstract])
    return next(_seeds)


def _until(cond: Callable[[], bool], what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.02)


def _held_beside_free(
    http: TestClient, server: ModelServer, front: str, held: tuple[str, str, dict[str, Any]], waits_on: str
) -> dict[str, httpx.Response]:
    """``held`` sent while the model server holds its answers, then a BM25 search beside it: both
    answers, once the search was answered while ``held`` still waited (else the test fails)."""
    answers: dict[str, httpx.Response] = {}

    def ask(name: str, m: str, p: str, kw: dict[str, Any]) -> None:
        answers[name] = http.request(m, p, **kw)

    waiting = threading.Thread(target=ask, args=("held", *held))
    free = threading.Thread(target=ask, args=("free", "POST", "/search", {"json": FREE}))
    before = len(server.calls(waits_on))
    server.hold()
    try:
        waiting.start()
        _until(lambda: server.waiting == 1 and len(server.calls(waits_on)) > before, f"{front} waits")
        free.start()
        free.join(GIVE_UP_S)
        answered = "free" in answers
    finally:
        server.release()
        waiting.join(300)
        free.join(300)
    assert answered, f"{front}: a BM25 search waited while {front} waited on the model server"
    assert answers["free"].status_code == 200 and answers["free"].json()["result"]
    return answers


FRONTS: dict[str, Callable[[str], tuple[str, str, dict[str, Any]]]] = {
    "POST /search": lambda q: ("POST", "/search", {"json": {"query": q, "top_k": 3}}),
    "GET /v1/search": lambda q: ("GET", "/v1/search", {"params": {"q": q, "top_k": 3}}),
    "GET /arxiv/ retrieve": lambda q: ("GET", "/arxiv/", {"params": {"type": "retrieve", "query": q}}),
    "POST /retrieve": lambda q: ("POST", "/retrieve", {"json": {"queries": [q], "topk": 3}}),
    "agent search": lambda q: ("POST", "/arxiv/agent/search", {"json": {"query": q, "top_k": 3}}),
    "web page": lambda q: ("GET", "/ui", {"params": {"q": q}}),
    "S2 paper/search": lambda q: ("GET", "/graph/v1/paper/search", {"params": {"query": q, "limit": 3}}),
    "POST /search rerank": lambda q: (
        "POST",
        "/search",
        {"json": {"query": q, "mode": "bm25", "top_k": 3, "use_fine_rerank": True}},
    ),
    "GET /arxiv/ retrieve rerank": lambda q: (
        "GET",
        "/arxiv/",
        {"params": {"type": "retrieve", "query": q, "mode": "bm25", "use_fine_rerank": "true"}},
    ),
}


@pytest.mark.parametrize("front", list(FRONTS))
def test_a_search_waiting_on_the_model_server_holds_no_slot(
    served: tuple[ModelServer, Path, Settings], front: str
) -> None:
    server, root, settings = served
    method, path, kwargs = FRONTS[front](_unique("diffusion models for video generation"))
    waits_on = "/v1/rerank" if "rerank" in front else "/v1/embeddings"
    with TestClient(create_app(settings, root)) as http:
        answers = _held_beside_free(http, server, front, (method, path, kwargs), waits_on)
    held = answers["held"]
    assert held.status_code == 200, held.text
    if path in ("/search", "/v1/search"):
        assert "warnings" not in held.json(), held.json()  # the vector (or the scores) came


async def _mcp_held_beside_free(
    served: tuple[ModelServer, Path, Settings], tool: str, held: dict[str, Any]
) -> dict[str, Any]:
    """The MCP ``tool`` called with ``held`` while the model server holds its answers, then a BM25
    ``search_papers`` beside it, on one compute slot: both results, once the search was answered
    while ``tool`` still waited (else the test fails)."""
    server, root, settings = served
    library = Library(root, settings)
    await anyio.to_thread.run_sync(library.load)
    mcp = build_server(library, load=False)
    anyio.to_thread.current_default_thread_limiter().total_tokens = 1
    done: dict[str, Any] = {}

    async def call(name: str, tool: str, arguments: dict[str, Any]) -> None:
        done[name] = await mcp.call_tool(tool, arguments)

    server.hold()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "held", tool, held)
            with anyio.fail_after(120):
                while server.waiting == 0:
                    await anyio.sleep(0.02)
            free = {"query": FREE["query"], "mode": "bm25", "size": 3}
            with anyio.move_on_after(GIVE_UP_S):
                await call("free", "search_papers", free)
            server.release()
    finally:
        server.release()
        library.close()
    assert "free" in done, f"a BM25 search waited while {tool} waited on the model server"
    assert not done["held"].is_error and done["held"].structured_content["result"]
    return done


@pytest.mark.anyio
async def test_the_mcp_search_tool_waits_outside_the_slot(served: tuple[ModelServer, Path, Settings]) -> None:
    held = {"query": _unique("reinforcement learning for reasoning"), "size": 3}
    done = await _mcp_held_beside_free(served, "search_papers", held)
    assert "warnings" not in done["held"].structured_content


SIMILAR: dict[str, Callable[[str], tuple[str, dict[str, Any]]]] = {
    "GET /v1/similar facet": lambda seed: ("/v1/similar", {"arxiv_id": seed, "facet": "method", "top_k": 5}),
    "GET /arxiv/ similar facet": lambda seed: (
        "/arxiv/",
        {"type": "similar", "arxiv_id": seed, "facet": "method", "top_k": 5},
    ),
}


def _ids(body: dict[str, Any]) -> list[str]:
    return [h["arxiv_id"] for h in body.get("hits", body.get("result", []))]


@pytest.mark.parametrize("front", list(SIMILAR))
def test_similar_with_a_facet_waiting_on_the_model_server_holds_no_slot(
    served: tuple[ModelServer, Path, Settings], front: str
) -> None:
    server, root, settings = served
    seed = _seed(root)
    path, params = SIMILAR[front](seed)
    with TestClient(create_app(settings, root)) as http:
        answers = _held_beside_free(http, server, front, ("GET", path, {"params": params}), "/v1/embeddings")
    held = answers["held"]
    assert held.status_code == 200, held.text
    assert held.json().get("warnings") is None, held.json()  # the facet's vector came
    library = Library(root, settings)  # the same use case without an event loop: the same ranking
    library.load()
    try:
        alone = library.similar(seed, top_k=5, facet="method")
        plain = library.similar(seed, top_k=5)
    finally:
        library.close()
    assert _ids(held.json()) == [h.arxiv_id for h in alone.result] != [h.arxiv_id for h in plain.result]


@pytest.mark.anyio
async def test_the_mcp_similar_tool_waits_outside_the_slot(
    served: tuple[ModelServer, Path, Settings],
) -> None:
    held = {"arxiv_id": _seed(served[1]), "facet": "result", "size": 3}
    done = await _mcp_held_beside_free(served, "similar_papers", held)
    assert done["held"].structured_content.get("warnings") is None


def test_similar_with_a_facet_answers_without_it_when_the_model_server_fails(
    served: tuple[ModelServer, Path, Settings],
) -> None:
    server, root, settings = served
    with TestClient(create_app(settings, root)) as http:
        seed = _seed(root)
        plain = http.get("/v1/similar", params={"arxiv_id": seed, "top_k": 5})
        server.always = "500"
        try:
            for path, params in (f(seed) for f in SIMILAR.values()):
                steered = http.get(path, params=params)
                assert steered.status_code == 200, steered.text
                assert _ids(steered.json()) == _ids(plain.json())  # the seeds' vectors alone rank
                warning = steered.json()["warnings"][0]
                assert "facet: ignored, the query encoder is unavailable" in warning and "500" in warning
        finally:
            server.always = None
