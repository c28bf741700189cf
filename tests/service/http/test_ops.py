"""Operations: bearer token on/off, hot reload (endpoint, SIGHUP, watching CURRENT) without dropped
requests, builds beside a live server (leases keep its snapshot), readiness, serve CLI."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_index import BIN, N_CS, BuiltIndex, LiveServer, build, copy_index, ingest_more

TOKEN = "s3cret-token"
ADMIN = "s3cret-admin-token"


@pytest.fixture(scope="module")
def token_server(test_index: BuiltIndex) -> Iterator[LiveServer]:
    live = LiveServer(test_index.root, token=TOKEN)
    try:
        yield live
    finally:
        live.stop()


def test_token_required_when_configured(token_server: LiveServer) -> None:
    url = token_server.url
    body = {"query": "graph neural networks", "top_k": 3}
    r = httpx.post(url + "/search", json=body)
    assert r.status_code == 401 and "token" in r.json()["detail"]
    assert r.headers["www-authenticate"] == "Bearer"
    assert (
        httpx.post(url + "/search", json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
    )
    assert (
        httpx.post(url + "/search", json=body, headers={"Authorization": f"Bearer {TOKEN}"}).status_code
        == 200
    )
    assert httpx.post(url + "/search", params={"token": TOKEN}, json=body).status_code == 200
    assert httpx.post(url + "/v1/admin/reload").status_code == 403  # admin routes off: no admin token
    for open_path in ("/healthz", "/readyz", "/openapi.json"):
        assert httpx.get(url + open_path).status_code == 200


def test_sdk_with_and_without_the_right_token(token_server: LiveServer) -> None:
    from deepxiv_sdk import Reader
    from deepxiv_sdk.exceptions import AuthenticationError

    good = Reader(base_url=token_server.url, token=TOKEN, max_retries=0)
    assert good.search("graph neural networks", size=3)["result"]
    assert good.head("1502.03167")["title"]
    with pytest.raises(AuthenticationError):
        Reader(base_url=token_server.url, token="wrong", max_retries=0).head("1502.03167")


def test_no_token_configured_accepts_any_token(client: httpx.Client) -> None:
    r = client.post("/search", json={"query": "x"}, headers={"Authorization": "Bearer anything"})
    assert r.status_code == 200
    assert (
        client.get("/arxiv/", params={"type": "head", "arxiv_id": "1502.03167", "token": "t"}).status_code
        == 200
    )


def _snapshot(url: str) -> str:
    return str(httpx.get(url + "/readyz").json()["snapshot"])


def _found(url: str, arxiv_id: str, title: str) -> bool:
    hits = httpx.post(url + "/search", json={"query": title, "top_k": 10, "mode": "bm25"}, timeout=60).json()
    return arxiv_id in [h["arxiv_id"] for h in hits["result"]]


def _title(db: Path, arxiv_id: str) -> str:
    from openxiv.corpus.store import Store

    with Store.open_readonly(db) as store:
        paper = store.get_paper(arxiv_id)
        assert paper is not None and paper.title
        return paper.title


def test_hot_reload_swaps_snapshots_without_dropping_requests(test_index: BuiltIndex, tmp_path: Path) -> None:
    private = copy_index(test_index, tmp_path / "copy")
    live = LiveServer(private.root, admin_token=ADMIN)
    admin = {"Authorization": f"Bearer {ADMIN}"}
    errors: list[str] = []
    stop = threading.Event()

    def hammer() -> None:  # requests in flight across both swaps
        with httpx.Client(base_url=live.url, timeout=60) as c:
            while not stop.is_set():
                r = c.post("/search", json={"query": "transformer attention", "top_k": 10})
                if r.status_code != 200 or len(r.json()["result"]) != 10:
                    errors.append(f"{r.status_code} {r.text[:200]}")

    threads = [threading.Thread(target=hammer) for _ in range(2)]
    try:
        for t in threads:
            t.start()
        first = _snapshot(live.url)
        unchanged = httpx.post(live.url + "/v1/admin/reload", headers=admin).json()
        assert unchanged == {"status": "unchanged", "snapshot": first, "previous": None}

        # 1) rebuild with more papers, swap by the endpoint
        added = ingest_more(private.db, private.settings, N_CS, 20)
        title = _title(private.db, added[0])
        assert not _found(live.url, added[0], title)
        build(private.db, private.root, private.settings, private.cache)
        assert _snapshot(live.url) == first  # nothing changes until asked
        swapped = httpx.post(live.url + "/v1/admin/reload", headers=admin, timeout=120).json()
        assert swapped["status"] == "reloaded" and swapped["previous"] == first
        second = swapped["snapshot"]
        assert second != first and _snapshot(live.url) == second
        assert _found(live.url, added[0], title)
        assert httpx.get(live.url + "/v1/index").json()["reloads"] == 1

        # 2) roll CURRENT back to the first snapshot (kept by the build), swap by SIGHUP
        from openxiv.indexer.snapshot import switch_current

        switch_current(private.root, first)
        os.kill(live.proc.pid, signal.SIGHUP)
        deadline = time.monotonic() + 120
        while _snapshot(live.url) == second and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _snapshot(live.url) == first
        assert not _found(live.url, added[0], title)
    finally:
        stop.set()
        for t in threads:
            t.join()
        code = live.stop()
    assert not errors, errors[:3]
    # clean shutdown: uvicorn finishes, then re-raises the SIGTERM it caught (exit status -15)
    assert code in (0, -signal.SIGTERM)
    log = live.log.read_text()
    assert "Application shutdown complete" in log and "Traceback" not in log


def _private_server(test_index: BuiltIndex, dest: Path, **env: str) -> tuple[BuiltIndex, LiveServer]:
    """A server on a private copy of the test index (models from the session's data dir)."""
    private = copy_index(test_index, dest)
    extra = {"OPENXIV_DATA_DIR": str(test_index.root.parent), **env}
    return private, LiveServer(private.root, admin_token=ADMIN, extra_env=extra)


def _rebuild(private: BuiltIndex, encoder: Any, keep: int) -> Path:
    from openxiv.indexer.building.job import build_index

    return build_index(
        private.db,
        private.root,
        private.settings,
        progress=False,
        encoder=encoder,
        cache_path=private.cache,
        keep=keep,
    )


def _statuses(url: str, n: int = 100) -> Counter[int]:
    """``n`` searches and paper reads from 4 concurrent clients; their status codes."""
    queries = ["transformer attention", "galaxy clusters", "graph neural networks", "reinforcement learning"]

    def one(i: int) -> int:
        if i % 2:
            return httpx.get(
                url + "/arxiv/", params={"type": "head", "arxiv_id": "1502.03167"}, timeout=60
            ).status_code
        return httpx.post(url + "/search", json={"query": queries[i % 4], "top_k": 5}, timeout=60).status_code

    with ThreadPoolExecutor(4) as pool:
        return Counter(pool.map(one, range(n)))


def test_builds_never_prune_the_snapshot_a_server_reads(test_index: BuiltIndex, tmp_path: Path) -> None:
    """Issue 8.2: two builds with --keep beside a server that was not reloaded deleted the snapshot it
    read; 27 of 100 requests answered 500 while /readyz said 200."""
    from openxiv.indexer.encoders.embed import load_encoder
    from openxiv.indexer.snapshot import list_snapshots

    private, live = _private_server(test_index, tmp_path / "copy")
    try:
        served = _snapshot(live.url)
        encoder = load_encoder(private.settings)
        _rebuild(private, encoder, keep=1)
        second = _rebuild(private, encoder, keep=1)
        assert _statuses(live.url) == {200: 100}
        # keep=1 leaves the live snapshot, and the one the server holds a lease on
        assert [p.name for p in list_snapshots(private.root)] == [served, second.name]
        ready = httpx.get(live.url + "/readyz").json()
        assert (ready["status"], ready["snapshot"]) == ("ready", served)

        # once the server has moved on, its old snapshot is pruned by the next build
        reload = httpx.post(
            live.url + "/v1/admin/reload", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=120
        )
        assert reload.json()["snapshot"] == second.name
        third = _rebuild(private, encoder, keep=1)
        assert [p.name for p in list_snapshots(private.root)] == [second.name, third.name]
        assert _statuses(live.url, 20) == {200: 20}

        # files deleted behind the server's back (rm -rf by hand): not ready any more
        assert httpx.get(live.url + "/readyz").status_code == 200
        shutil.rmtree(private.root / "snapshots" / second.name)
        gone = httpx.get(live.url + "/readyz")
        assert gone.status_code == 503, gone.text
        assert second.name in gone.json()["detail"] and "gone" in gone.json()["detail"]
        assert str(private.root) not in gone.json()["detail"]  # no absolute paths in answers
    finally:
        live.stop()


def test_watching_current_reloads_by_itself(test_index: BuiltIndex, tmp_path: Path) -> None:
    private, live = _private_server(test_index, tmp_path / "copy", OPENXIV_WATCH_INTERVAL="0.5")
    try:
        first = _snapshot(live.url)
        new = _rebuild(private, None, keep=2)
        deadline = time.monotonic() + 60
        while _snapshot(live.url) == first and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _snapshot(live.url) == new.name
        assert httpx.get(live.url + "/v1/index").json()["reloads"] == 1
    finally:
        live.stop()
    log = live.log.read_text()
    assert f"serving snapshot {first}" in log and f"serving snapshot {new.name} (previous: {first})" in log
    assert "watching" in log and "Traceback" not in log


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "openxiv"), "serve", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_serve_explains_a_missing_or_empty_index(tmp_path: Path) -> None:
    missing = _serve("--index", str(tmp_path / "nope"))
    assert (
        missing.returncode != 0 and "openxiv index build" in missing.stderr and "no index" in missing.stderr
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _serve("--index", str(empty))
    assert result.returncode != 0 and "no CURRENT" in result.stderr and "openxiv index build" in result.stderr
    assert "Traceback" not in missing.stderr + result.stderr


def test_serve_help_mentions_both_clients() -> None:
    out = _serve("--help").stdout
    assert "PAPER_SEARCH_API_URL" in out and "Reader(base_url" in out and "127.0.0.1" in out
