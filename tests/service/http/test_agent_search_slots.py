"""Agent searches waiting on a slow answer LLM hold no compute slot (issue #36, item 1).

A live server with two compute slots (``OPENXIV_SERVE_CONCURRENCY=2``) and room for two LLM calls
(``OPENXIV_ANSWER_CONCURRENCY=2``) answers three agent searches from a scripted OpenAI-compatible
chat server on loopback that holds every request until the test releases it. While both LLM calls
are held (and the third agent search waits for an LLM slot), ``POST /search`` is answered; a client
that disconnects cancels its LLM call. Nothing here is timed: the held LLM never answers on its own
(``OPENXIV_ANSWER_TIMEOUT=600``), so a search that needs a slot an LLM call holds never comes back
within the client's timeout. The timing run is ``scripts/bench_agent_load.py``.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import orjson
import pytest
from chat_server import ChatServer
from live_index import BuiltIndex, LiveServer

QUERY = "batch normalization internal covariate shift"


@pytest.fixture(scope="module")
def held(test_index: BuiltIndex) -> Iterator[tuple[LiveServer, ChatServer]]:
    with ChatServer(lambda messages: "Normalized [arXiv:1502.03167].") as chat:
        env = {
            "OPENXIV_ANSWER_BASE_URL": chat.base_url,
            "OPENXIV_ANSWER_MODEL": "held-llm",
            "OPENXIV_ANSWER_TIMEOUT": "600",
            "OPENXIV_ANSWER_CONCURRENCY": "2",
            "OPENXIV_SERVE_CONCURRENCY": "2",
        }
        live = LiveServer(test_index.root, extra_env=env)
        try:
            yield live, chat
        finally:
            chat.release()
            live.stop()


def _until(cond: Callable[[], bool], what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.05)


def test_search_is_answered_while_llm_calls_wait(held: tuple[LiveServer, ChatServer]) -> None:
    live, chat = held
    chat.hold()
    answers: list[httpx.Response] = []

    def agent(path: str) -> None:
        answers.append(httpx.post(live.url + path, json={"query": QUERY, "top_k": 3}, timeout=900))

    paths = ["/arxiv/agent/search", "/arxiv/agent/search/stream", "/arxiv/agent/search"]
    threads = [threading.Thread(target=agent, args=(p,)) for p in paths]
    before = len(chat.requests)
    try:
        for t in threads:
            t.start()
        _until(lambda: chat.waiting == 2, "two LLM calls held")
        # Both compute slots would be taken if a waiting LLM call held one; /search needs one.
        r = httpx.post(live.url + "/search", json={"query": QUERY, "top_k": 5}, timeout=60)
        assert r.status_code == 200 and r.json()["result"], r.text
        assert chat.waiting == 2 and len(chat.requests) - before == 2  # the third waits for an LLM slot
    finally:
        chat.release()
        for t in threads:
            t.join(timeout=300)
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert len(chat.requests) - before == 3


@pytest.mark.parametrize("path", ["/arxiv/agent/search", "/arxiv/agent/search/stream"])
def test_client_disconnect_cancels_the_llm_call(held: tuple[LiveServer, ChatServer], path: str) -> None:
    live, chat = held
    chat.hold()
    gone = chat.disconnected
    conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=60)
    try:
        conn.request(
            "POST",
            path,
            body=orjson.dumps({"query": QUERY, "top_k": 2}),
            headers={"content-type": "application/json"},
        )
        _until(lambda: chat.waiting == 1, "the LLM call held")
    finally:
        conn.close()
    _until(lambda: chat.disconnected == gone + 1, "the held LLM call cancelled by the server")
    chat.release()
    ok: dict[str, Any] = httpx.post(
        live.url + "/search", json={"query": QUERY, "top_k": 1}, timeout=60
    ).json()
    assert ok["result"]
