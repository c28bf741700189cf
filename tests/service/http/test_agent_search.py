"""DeepXiv's agent search (``POST /arxiv/agent/search`` and ``/stream``) driven by deepxiv-sdk 1.2's own
``Reader.agent_search``/``agent_search_stream``, unmodified, against live servers on the session's real
index: one without an answer LLM (the answer lists the sources), one whose answer LLM is a scripted
OpenAI-compatible server on loopback (`chat_server.ChatServer`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from chat_server import ChatServer
from live_index import BuiltIndex, LiveServer

QUERY = "batch normalization internal covariate shift"
PAPER = "1502.03167"  # Batch Normalization, read from its real PDF


def _reader(url: str) -> Any:
    deepxiv_sdk = pytest.importorskip("deepxiv_sdk")
    if not hasattr(deepxiv_sdk.Reader, "agent_search_stream"):
        pytest.skip("deepxiv-sdk < 1.2 has no agent search")
    return deepxiv_sdk.Reader(base_url=url, token="any", timeout=60, max_retries=0)


def _top(client: httpx.Client, query: str, k: int) -> list[str]:
    return [h["arxiv_id"] for h in client.post("/search", json={"query": query, "top_k": k}).json()["result"]]


# ------------------------------------------------------------------------------ no LLM
def test_blocking_answer_lists_the_search_sources(server: LiveServer, client: httpx.Client) -> None:
    result = _reader(server.url).agent_search(QUERY, top_k=5)
    assert result["status"] == "success"
    ids = [s["arxiv_id"] for s in result["sources"]]
    assert ids == _top(client, QUERY, 5) and PAPER in ids
    assert all(s["url"] == f"https://arxiv.org/abs/{s['arxiv_id']}" and s["title"] for s in result["sources"])
    answer = result["answer"]
    assert answer.startswith("No LLM is configured on this server")
    assert all(f"arXiv:{i}" in answer for i in ids)  # `deepxiv ask` shows the sources an answer cites
    assert result["stats"]["answer_truncated"] is False and result["stats"]["model"] == "openxiv-extractive"
    assert result["quota"]["remaining"] is None and "trace" not in result


def test_stream_events_in_deepxiv_shape(server: LiveServer) -> None:
    reader = _reader(server.url)
    events = list(reader.agent_search_stream(QUERY, top_k=5))
    names = [e["event"] for e in events]
    assert names[:3] == ["start", "sources", "answer_start"] and names[-1] == "done"
    assert set(names[3:-1]) == {"answer_delta"}
    deltas = "".join(e["text"] for e in events if e["event"] == "answer_delta")
    assert deltas == reader.agent_search(QUERY, top_k=5)["answer"]
    from deepxiv_sdk.reader import agent_search_sources

    papers = agent_search_sources(events[1])
    assert len(papers) == 5 and papers[0]["evidence"]["text"]
    assert events[-1]["answer_truncated"] is False

    verbose = list(reader.agent_search_stream(QUERY, top_k=3, verbose=True, stream_answer=False))
    names = [e["event"] for e in verbose]
    assert names == ["start", "tool_call", "tool_result", "sources", "answer_start", "answer", "done"]
    assert verbose[1]["arguments"] == {"query": QUERY, "top_k": 3}
    assert verbose[0]["max_rounds"] == 1  # default effort: one round, the answer as before


def test_answer_is_cut_to_max_answer_tokens(server: LiveServer) -> None:
    result = _reader(server.url).agent_search("neural network", top_k=30, max_answer_tokens=256)
    assert len(result["sources"]) == 30
    assert result["stats"]["answer_truncated"] is True
    assert re.search(r"\((\d+) more sources left out to stay within max_answer_tokens=256", result["answer"])
    assert len(result["answer"].split()) * 1.3 <= 256 + 40


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "x", "top_k": 31}, "top_k"),
        ({"query": "x", "top_k": 0}, "top_k"),
        ({"query": "x", "effort": "max"}, "effort"),
        ({"query": "x", "max_answer_tokens": 100}, "max_answer_tokens"),
        ({"query": "   "}, "query"),
        ({"query": "x" * 2001}, "query"),
        ({"top_k": 5}, "query"),
        ({"query": ["a", "b"]}, "query"),
    ],
)
@pytest.mark.parametrize("path", ["/arxiv/agent/search", "/arxiv/agent/search/stream"])
def test_bad_bodies_are_400_naming_the_field(
    client: httpx.Client, path: str, body: dict[str, Any], field: str
) -> None:
    r = client.post(path, json=body)
    assert r.status_code == 400, r.text
    assert r.json()["detail"].startswith(field), r.text


# ------------------------------------------------------------------------------ with an answer LLM
def _cite_first(messages: list[dict[str, str]]) -> str:
    first = re.search(r"arXiv:(\S+)", messages[-1]["content"])
    assert first is not None
    return f"Batch normalization normalizes layer inputs per mini-batch [arXiv:{first.group(1)}]."


@pytest.fixture(scope="module")
def llm_server(test_index: BuiltIndex) -> Iterator[tuple[LiveServer, ChatServer]]:
    with ChatServer(_cite_first) as chat:
        env = {"OPENXIV_ANSWER_BASE_URL": chat.base_url, "OPENXIV_ANSWER_MODEL": "scripted-llm"}
        live = LiveServer(test_index.root, extra_env=env)
        try:
            yield live, chat
        finally:
            live.stop()


def test_llm_writes_the_answer_from_the_sources(llm_server: tuple[LiveServer, ChatServer]) -> None:
    live, chat = llm_server
    reader = _reader(live.url)
    result = reader.agent_search(QUERY, top_k=4, max_answer_tokens=512, language="French")
    first = result["sources"][0]["arxiv_id"]
    assert result["answer"] == f"Batch normalization normalizes layer inputs per mini-batch [arXiv:{first}]."
    assert result["stats"] == result["stats"] | {"model": "scripted-llm", "answer_truncated": False}
    sent = chat.requests[-1]
    assert sent["model"] == "scripted-llm" and sent["max_tokens"] == 512 and not sent.get("stream")
    assert "Answer in French." in sent["messages"][0]["content"]
    assert all(f"arXiv:{s['arxiv_id']}" in sent["messages"][1]["content"] for s in result["sources"])

    events = list(reader.agent_search_stream(QUERY, top_k=4))
    assert chat.requests[-1]["stream"] is True
    deltas = [e["text"] for e in events if e["event"] == "answer_delta"]
    assert len(deltas) > 3 and "".join(deltas) == result["answer"]
    assert events[0]["model"] == "scripted-llm" and events[-1] == events[-1] | {"answer_truncated": False}


def test_llm_cut_at_max_tokens_is_said(llm_server: tuple[LiveServer, ChatServer]) -> None:
    live, chat = llm_server
    chat.rule = lambda msgs: " ".join(["word"] * 400)
    try:
        result = _reader(live.url).agent_search(QUERY, top_k=2, max_answer_tokens=256)
    finally:
        chat.rule = _cite_first
    assert result["stats"]["answer_truncated"] is True and len(result["answer"].split()) == 256


def test_llm_failure_is_an_error_event_or_a_502(llm_server: tuple[LiveServer, ChatServer]) -> None:
    from deepxiv_sdk.reader import ServerError

    live, chat = llm_server
    chat.status = 500
    try:
        reader = _reader(live.url)
        events = list(reader.agent_search_stream(QUERY, top_k=3))
        with pytest.raises(ServerError, match=r"answer LLM 'scripted-llm'.*HTTP 500"):
            reader.agent_search(QUERY, top_k=3)
    finally:
        chat.status = 200
    assert [e["event"] for e in events] == ["start", "sources", "answer_start", "error"]
    assert events[-1]["stage"] == "answer" and "HTTP 500" in events[-1]["message"]
    assert chat.base_url in events[-1]["message"]


def test_no_sources_no_llm_call(llm_server: tuple[LiveServer, ChatServer]) -> None:
    """A search that finds nothing asks no LLM: the answer says nothing was found (issue #36, item 6)."""
    live, chat = llm_server
    nothing = "zqxjvwkqzz"
    found = httpx.post(live.url + "/search", json={"query": nothing, "top_k": 5}, timeout=60).json()
    assert found["total_count"] == 0 and found["result"] == [], found
    asked = len(chat.requests)
    reader = _reader(live.url)
    result = reader.agent_search(nothing, top_k=5)
    events = list(reader.agent_search_stream(nothing, top_k=5))
    assert len(chat.requests) == asked
    assert result["sources"] == [] and result["answer"].startswith(
        f"No papers in this corpus match '{nothing}'"
    )
    assert "".join(e["text"] for e in events if e["event"] == "answer_delta") == result["answer"]
    assert events[-1]["event"] == "done" and events[-1]["sources"] == 0
