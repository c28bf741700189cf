"""Operations: bearer token on/off, hot reload (endpoint and SIGHUP) without dropped requests, serve CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

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
