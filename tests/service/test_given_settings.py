"""The app and the holder run on the `Settings` they were given: nothing re-reads the environment
after startup (issue 20). Before, `serve_concurrency` and `serve_threads` read ``OPENXIV_*`` again,
so a `create_app(settings, ...)` or an `IndexHolder(root, settings)` whose settings said otherwise
ran with the environment's numbers (and every reload read it once more)."""

from __future__ import annotations

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient
from live_index import BuiltIndex

from openxiv.service.holder import IndexHolder
from openxiv.service.http.app import create_app


def test_the_app_computes_as_many_requests_at_once_as_its_settings_say(
    test_index: BuiltIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENXIV_SERVE_CONCURRENCY", "5")
    settings = test_index.settings.replace(serve_concurrency=3)
    with TestClient(create_app(settings, test_index.root)) as client:
        assert client.portal is not None
        tokens = client.portal.call(lambda: anyio.to_thread.current_default_thread_limiter().total_tokens)
        assert client.get("/readyz").status_code == 200
    assert tokens == 3


def test_the_holder_sets_the_threads_its_settings_say_at_load_and_reload(
    test_index: BuiltIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENXIV_SERVE_THREADS", "1")
    faiss = pytest.importorskip("faiss")  # the embedded backend's dense index
    previous = faiss.omp_get_max_threads()
    holder = IndexHolder(test_index.root, test_index.settings.replace(serve_threads=3))
    try:
        holder.load()
        assert faiss.omp_get_max_threads() == 3
        faiss.omp_set_num_threads(1)
        holder.reload(force=True)
        assert faiss.omp_get_max_threads() == 3
    finally:
        holder.close()
        faiss.omp_set_num_threads(previous)
