"""Similar papers, find in a paper and ``use_fine_rerank`` against the live server on the session's
real index (real MiniLM paper vectors, real full texts)."""

from __future__ import annotations

import httpx
import pytest

PAPER = "1706.03762"  # read from its real PDF (v7): full text with an optimizer section
BN = "1502.03167"  # batch normalization, also from its real PDF


def _ids(body: dict) -> list[str]:
    return [h["arxiv_id"] for h in body["result"]]


# ------------------------------------------------------------------------------ similar
def test_similar_ranks_by_the_papers_vector_and_leaves_the_seed_out(client: httpx.Client) -> None:
    r = client.get("/arxiv/", params={"type": "similar", "arxiv_id": PAPER, "top_k": 5})
    assert r.status_code == 200, r.text
    body = r.json()
    papers = client.get("/v1/index").json()["stats"]["papers"]
    assert body["status"] == "success" and body["total_count"] == papers - 1
    ids = _ids(body)
    assert len(ids) == 5 and PAPER not in ids
    scores = [h["score"] for h in body["result"]]
    assert scores == sorted(scores, reverse=True) and 0 < scores[0] <= 1.0001
    assert all(h["contents"] is None for h in body["result"])
    page2 = client.get(
        "/arxiv/", params={"type": "similar", "arxiv_id": PAPER, "top_k": 2, "offset": 3}
    ).json()
    assert _ids(page2) == ids[3:5]


def test_similar_applies_the_search_filters_before_the_cut(client: httpx.Client) -> None:
    params = {"type": "similar", "arxiv_id": PAPER, "top_k": 10, "categories": "astro-ph"}
    body = client.get("/arxiv/", params=params).json()
    assert len(body["result"]) == 10
    assert all(any(c.startswith("astro-ph") for c in h["categories"]) for h in body["result"])
    dated = {**params, "categories": "cs", "date_search_type": "after", "date_str": "2025-04"}
    hits = client.get("/arxiv/", params=dated).json()["result"]
    assert hits and all(h["date"] >= "2025-04-01" for h in hits)


def test_several_seeds_rank_by_their_mean_and_all_are_left_out(client: httpx.Client) -> None:
    both = client.get("/arxiv/", params={"type": "similar", "arxiv_id": f"{PAPER},{BN}", "top_k": 20}).json()
    ids = _ids(both)
    assert PAPER not in ids and BN not in ids and len(ids) == 20
    one = _ids(client.get("/arxiv/", params={"type": "similar", "arxiv_id": PAPER, "top_k": 20}).json())
    assert ids != one  # the second seed moves the centre


def test_v1_similar_has_the_v1_search_shape(client: httpx.Client) -> None:
    r = client.get("/v1/similar", params={"arxiv_id": [PAPER, BN], "top_k": 3, "category": "cs"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["query"] == f"similar to {PAPER}, {BN}" and [h["rank"] for h in body["hits"]] == [1, 2, 3]
    assert all(h["signals"]["dense_papers_rank"] == h["rank"] for h in body["hits"])
    assert body["snapshot"]


@pytest.mark.parametrize(
    ("params", "status", "names"),
    [
        ({"type": "similar"}, 400, "arxiv_id"),
        ({"type": "similar", "arxiv_id": "not-an-id"}, 400, "arxiv_id"),
        ({"type": "similar", "arxiv_id": "2501.99999"}, 404, "2501.99999"),
        ({"type": "similar", "arxiv_id": PAPER, "top_k": 0}, 400, "top_k"),
        ({"type": "similar", "arxiv_id": ",".join(f"2503.{i:05d}" for i in range(1, 23))}, 400, "at most 20"),
        ({"type": "similar", "arxiv_id": PAPER, "date_search_type": "after"}, 400, "date_str"),
        ({"type": "find", "arxiv_id": PAPER}, 400, "query"),
        ({"type": "find", "query": "x"}, 400, "arxiv_id"),
        ({"type": "find", "arxiv_id": PAPER, "query": "the of"}, 400, "query"),
        ({"type": "find", "arxiv_id": PAPER, "query": "adam", "top_k": 21}, 400, "top_k"),
        ({"type": "find", "arxiv_id": "2501.99999", "query": "adam"}, 404, "2501.99999"),
    ],
)
def test_bad_tool_parameters_are_4xx_naming_them(
    client: httpx.Client, params: dict, status: int, names: str
) -> None:
    r = client.get("/arxiv/", params=params)
    assert r.status_code == status, r.text
    assert names in r.json()["detail"]


# ------------------------------------------------------------------------------ find
def test_find_shows_where_the_learning_rate_schedule_is(client: httpx.Client) -> None:
    query = "where is the learning-rate schedule"
    r = client.get("/arxiv/", params={"type": "find", "arxiv_id": f"arXiv:{PAPER}v7", "query": query})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["arxiv_id"] == PAPER and body["source"] == "fulltext"
    assert body["searched"] > 20 and 0 < body["total_count"] <= body["searched"] and len(body["result"]) == 3
    best = body["result"][0]
    assert best["rank"] == 1 and best["passage_id"] is not None
    assert "optimizer" in best["section"].lower()  # section 5.3 "Optimizer" holds the schedule
    assert "warmup_steps" in best["text"] and "**learning** **rate**" in best["text"]
    assert {"learning", "rate"} <= set(best["matched"])
    assert [h["score"] for h in body["result"]] == sorted((h["score"] for h in body["result"]), reverse=True)
    v1 = client.get("/v1/find", params={"arxiv_id": PAPER, "q": query, "top_k": 1}).json()
    assert v1["result"] == body["result"][:1]


def test_find_in_a_paper_without_full_text_searches_its_abstract(client: httpx.Client) -> None:
    hit = client.post("/search", json={"query": "galaxy cluster weak lensing mass", "top_k": 1}).json()
    arxiv_id = hit["result"][0]["arxiv_id"]
    assert not client.get("/arxiv/", params={"type": "head", "arxiv_id": arxiv_id}).json()["has_fulltext"]
    body = client.get(
        "/arxiv/", params={"type": "find", "arxiv_id": arxiv_id, "query": "lensing mass"}
    ).json()
    assert body["source"] == "abstract" and body["result"]
    assert all(h["section"] == "Abstract" and h["passage_id"] is None for h in body["result"])
    assert "**" in body["result"][0]["text"]


def test_find_with_no_matching_word_answers_an_empty_list(client: httpx.Client) -> None:
    body = client.get("/arxiv/", params={"type": "find", "arxiv_id": PAPER, "query": "zyxwvut"}).json()
    assert body["total_count"] == 0 and body["result"] == []


# ------------------------------------------------------------------------------ use_fine_rerank
def test_fine_rerank_asked_reranks_and_false_asks_nothing(client: httpx.Client) -> None:
    """The reranking itself is checked on every front by tests/service/test_fine_rerank.py."""
    base = {"type": "retrieve", "query": "graph neural networks", "top_k": 5}
    plain = client.get("/arxiv/", params=base).json()
    client.get("/arxiv/", params={**base, "use_fine_rerank": "true"})  # loads the model: may be a 503
    asked = client.get("/arxiv/", params={**base, "use_fine_rerank": "true"})
    assert "warnings" not in plain and "warnings" not in asked.json()
    assert "rerank;dur=" in asked.headers["server-timing"]
    assert len(_ids(asked.json())) == 5
    off = client.get("/arxiv/", params={**base, "use_fine_rerank": "false"})
    assert "warnings" not in off.json() and _ids(off.json()) == _ids(plain)
    assert "rerank" not in off.headers.get("server-timing", "")
