"""Agent search rounds with an answer LLM (issue 41, item 5): when ``OPENXIV_ANSWER_*`` is set the
reformulation round searches the queries the LLM proposes (a versioned prompt), a malformed answer
falls back to the title reformulation with a warning, and with ``OPENXIV_REMOTE_REPLAY=record`` the
LLM's answers are recorded so that a server in ``replay`` mode, the LLM gone, answers the same body.
Against live servers on the real references index (tests/refs_index.py) and a scripted
OpenAI-compatible chat server on loopback (tests/service/http/chat_server.py).

On main the reformulation round never asked the LLM (its query was the title reformulation)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from chat_server import ChatServer
from live_index import BuiltIndex, LiveServer

from openxiv.service.agent_llm import PROMPT_VERSION, parse_queries

QUERY = "deep residual learning image recognition"
PROPOSED = ["batch normalization internal covariate shift", "attention transformer sequence transduction"]


def _rule(messages: list[dict[str, str]]) -> str:
    text = messages[-1]["content"]
    if "Propose up to" in text:
        if "attention" in text.split("Question:")[1].split("\n")[0]:  # the malformed case's question
            return "Sure! Try searching for residual networks."
        return '```json\n["' + '", "'.join(PROPOSED) + '"]\n```'
    return "The sources answer it [arXiv:1512.03385]."


def _llm_env(chat: ChatServer, cache: Path, replay: str) -> dict[str, str]:
    """A server's settings for the scripted answer LLM, its completions recorded or replayed."""
    return {
        "OPENXIV_ANSWER_BASE_URL": chat.base_url,
        "OPENXIV_ANSWER_MODEL": "scripted-llm",
        "OPENXIV_REMOTE_REPLAY": replay,
        "OPENXIV_REMOTE_REPLAY_FILE": str(cache),
    }


@pytest.fixture(scope="module")
def recorded(
    refs_index: BuiltIndex, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, ChatServer, Path]]:
    cache = tmp_path_factory.mktemp("replay") / "replay.jsonl"
    with ChatServer(_rule) as chat:
        live = LiveServer(refs_index.root, extra_env=_llm_env(chat, cache, "record"))
        try:
            yield live, chat, cache
        finally:
            live.stop()


def _stream(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    import orjson

    with httpx.stream("POST", f"{url}/arxiv/agent/search/stream", json=body, timeout=60) as resp:
        assert resp.status_code == 200
        return [orjson.loads(line) for line in resp.iter_lines() if line.strip()]


def test_the_llm_proposed_queries_are_searched_in_round_two(
    recorded: tuple[LiveServer, ChatServer, Path],
) -> None:
    live, chat, _ = recorded
    events = _stream(live.url, {"query": QUERY, "effort": "high", "top_k": 5, "verbose": True})
    rounds = [e for e in events if e["event"] == "round"]
    assert [r["kind"] for r in rounds] == ["search", "reformulate", "hop"]
    assert rounds[1]["queries"] == PROPOSED and rounds[1]["by"] == "llm" and rounds[1]["query"] == PROPOSED[0]
    searched = [e["arguments"]["query"] for e in events if e["event"] == "tool_call" and e["round"] == 2]
    assert searched == PROPOSED
    assert "warning" not in [e["event"] for e in events]
    asked = [r for r in chat.requests if "Propose up to" in r["messages"][-1]["content"]]
    assert asked and f"Question: {QUERY}" in asked[-1]["messages"][-1]["content"]
    sources = next(e for e in events if e["event"] == "sources")["papers"]
    assert "1502.03167" in {s["arxiv_id"] for s in sources}  # batch normalization, found by an LLM query


def test_a_malformed_answer_falls_back_with_a_warning(recorded: tuple[LiveServer, ChatServer, Path]) -> None:
    live, _, _ = recorded
    question = "attention transformer sequence transduction"
    resp = httpx.post(
        f"{live.url}/arxiv/agent/search", json={"query": question, "effort": "high"}, timeout=60
    )
    assert resp.status_code == 200
    body = resp.json()
    assert body["stats"]["rounds"] == 3
    assert any("next queries" in w and "title reformulation" in w for w in body["warnings"])
    events = _stream(live.url, {"query": question, "effort": "high"})
    second = [e for e in events if e["event"] == "round"][1]
    assert "queries" not in second and (second["query"] is None or second["query"].startswith(question))


def test_replay_with_the_llm_gone_gives_the_same_body(
    refs_index: BuiltIndex, recorded: tuple[LiveServer, ChatServer, Path]
) -> None:
    live, chat, cache = recorded
    ask = {"query": QUERY, "effort": "high", "top_k": 5}
    first = httpx.post(f"{live.url}/arxiv/agent/search", json=ask, timeout=60).json()
    assert PROMPT_VERSION in cache.read_text()
    chat.__exit__()  # the LLM is gone
    replay = LiveServer(refs_index.root, extra_env=_llm_env(chat, cache, "replay"))
    try:
        again = httpx.post(f"{replay.url}/arxiv/agent/search", json=ask, timeout=60).json()
    finally:
        replay.stop()
    for body in (first, again):
        body["stats"].pop("elapsed_ms")
    assert again == first and first["answer"] == "The sources answer it [arXiv:1512.03385]."
    assert "warnings" not in first


def test_parse_queries_reads_defensively() -> None:
    assert parse_queries('["a b", "c"]', "q") == ["a b", "c"]
    assert parse_queries('Here: {"queries": ["x y", 3, "", "q", "x y"]}', "Q") == ["x y"]
    assert parse_queries('["one", "two", "three", "four"]', "q") == ["one", "two", "three"]
    for bad in ("no list here", "[not json", '{"other": ["a"]}', "[1, 2]", "[]"):
        assert parse_queries(bad, "q") is None
