"""Search-R1's ``POST /retrieve`` on the live server: a Search-R1-style request loop (the body its
``generation.py`` sends, the documents read the way its ``_passages2string`` reads them) and the
400s of bad bodies."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

QUERIES = [
    "batch normalization internal covariate shift",
    "attention is all you need transformer",
    "galaxy cluster dark matter",
]


def _passages2string(retrieval_result: list[dict[str, Any]]) -> str:
    """What a Search-R1 agent shows its model for one query's documents."""
    out = ""
    for idx, item in enumerate(retrieval_result):
        content = item["document"]["contents"]
        title, text = content.split("\n")[0], "\n".join(content.split("\n")[1:])
        out += f"Doc {idx + 1}(Title: {title}) {text}\n"
    return out


def test_search_r1_request_loop(client: httpx.Client) -> None:
    observations = []
    for turn in range(2):  # two turns of a batch of rollouts, each asking its own query
        batch = QUERIES[turn:] if turn else QUERIES
        r = client.post("/retrieve", json={"queries": batch, "topk": 3, "return_scores": True})
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        result = r.json()["result"]
        assert len(result) == len(batch)
        for query, docs in zip(batch, result, strict=True):
            expected = client.post("/search", json={"query": query, "top_k": 3}).json()["result"]
            assert [d["document"]["id"] for d in docs] == [h["arxiv_id"] for h in expected]
            assert [d["score"] for d in docs] == [h["score"] for h in expected]
            for d, h in zip(docs, expected, strict=True):
                assert d["document"]["title"] == h["title"]
                assert d["document"]["contents"] == f'"{h["title"]}"\n{d["document"]["text"]}'
            observations.append(_passages2string(docs))
    assert all(o.count("Doc ") == 3 for o in observations)
    assert '(Title: "Batch Normalization' in observations[0]


def test_single_query_without_scores(client: httpx.Client) -> None:
    body = client.post("/retrieve", json={"query": QUERIES[0], "topk": 2}).json()
    [docs] = body["result"]
    assert len(docs) == 2 and set(docs[0]) == {"id", "docid", "title", "text", "contents"}
    assert docs[0]["docid"] == "1502.03167" and docs[0]["text"]
    default = client.post("/retrieve", json={"queries": [QUERIES[0]]}).json()["result"][0]
    assert len(default) == 3  # Search-R1's default topk


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({}, "queries: required"),
        ({"queries": ["a"], "query": "b"}, "queries: send either"),
        ({"query": ""}, "query: empty query"),
        ({"queries": ["a"], "topk": -1}, "topk: must be an integer between 1 and 100"),
        ({"queries": ["a"], "topk": 101}, "topk: must be an integer between 1 and 100"),
        ({"queries": "a"}, "queries: Input should be a valid list"),
        ({"queries": ["q"] * 4097}, "queries: at most 4096 per request, got 4097"),
        ({"queries": ["ok", "x" * 2001]}, "queries[1]: 2001 characters, the limit is 2000"),
    ],
)
def test_bad_bodies_are_400_naming_the_field(client: httpx.Client, body: dict[str, Any], detail: str) -> None:
    r = client.post("/retrieve", json=body)
    assert r.status_code == 400, r.text
    assert r.json()["detail"].startswith(detail), r.text


def test_what_search_r1s_server_accepts_is_accepted(client: httpx.Client) -> None:
    """Search-R1's client reads ``result`` whatever the status: an empty batch, a blank query and a
    missing or ``0`` topk are answered as its own server answers them, not with a 400."""
    assert client.post("/retrieve", json={"queries": []}).json() == {"result": []}
    body = {"queries": [QUERIES[0], "", "   ", QUERIES[1]], "topk": 0, "return_scores": True}
    result = client.post("/retrieve", json=body).json()["result"]
    assert [len(docs) for docs in result] == [3, 0, 0, 3]
    alone = client.post("/retrieve", json={"queries": [QUERIES[1]], "return_scores": True}).json()
    assert result[3] == alone["result"][0]
