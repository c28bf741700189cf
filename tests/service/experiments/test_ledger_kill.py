"""A live ``openxiv serve --ledger`` killed with -9 in the middle of a run loses no call whose answer a
client received: each answered call's record is in the ledger, with the very body the client got.

Four client threads search and read as fast as the server answers; the server is killed with SIGKILL
once a few hundred answers are in, while calls are in flight. The ledger is then read: every answer
received has its record (same run, question, route, status and body digest), nothing is torn, and a
server started again on the same folder appends after what was there.
"""

from __future__ import annotations

import hashlib
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
from live_index import LiveServer

from openxiv.corpus.ledger.store import LedgerReader

pytestmark = pytest.mark.live_server


def _client(url: str, worker: int, got: list[tuple[str, str, int, str]], stop: threading.Event) -> None:
    base = f"{url}/runs/kill/q/w{worker}"
    with httpx.Client(timeout=30) as c:
        i = 0
        while not stop.is_set():
            try:
                if i % 3 == 2:
                    r = c.get(base + "/arxiv/", params={"type": "head", "arxiv_id": "astro-ph/0001004"})
                else:
                    r = c.post(base + "/search", json={"query": f"star formation {worker} {i}", "top_k": 5})
            except httpx.HTTPError:
                return  # the server is gone
            got.append(
                (
                    f"w{worker}",
                    r.request.url.path.rsplit(f"/w{worker}", 1)[1],
                    r.status_code,
                    hashlib.sha256(r.content).hexdigest(),
                )
            )
            i += 1


def test_a_killed_server_loses_no_answered_call(bm25_snapshot: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger"
    live = LiveServer(bm25_snapshot, extra_env={"OPENXIV_LEDGER": str(ledger)}, log=tmp_path / "serve.log")
    got: list[tuple[str, str, int, str]] = []
    stop = threading.Event()
    threads = [threading.Thread(target=_client, args=(live.url, w, got, stop)) for w in range(4)]
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120
        while len(got) < 300 and time.monotonic() < deadline:
            time.sleep(0.05)
        live.proc.send_signal(signal.SIGKILL)
        live.proc.wait(30)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
        live.stop()
    assert live.proc.returncode == -signal.SIGKILL and len(got) >= 300
    reader = LedgerReader(ledger)
    recorded = [(r.question, r.route, r.status, r.body_sha256) for r in reader.records(run="kill")]
    assert reader.errors == []
    missing = [call for call in got if call not in recorded]
    assert missing == [], f"{len(missing)} answered calls are not in the ledger"
    assert len(recorded) >= len(got)  # a call may be recorded whose answer the kill cut off
    assert {route for _, route, _, _ in recorded} == {"/search", "/arxiv/"}
    again = LiveServer(bm25_snapshot, extra_env={"OPENXIV_LEDGER": str(ledger)}, log=tmp_path / "serve2.log")
    try:
        assert (
            httpx.post(again.url + "/runs/after/search", json={"query": "gas"}, timeout=30).status_code == 200
        )
    finally:
        again.stop()
    after = list(LedgerReader(ledger).records())
    assert len(after) == len(recorded) + 1 and after[-1].run == "after"
