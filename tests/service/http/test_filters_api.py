"""Filters and counts over HTTP: total_count per page, venues, the per-request cost cap and time budget."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from live_index import BuiltIndex

from openxiv.service.params import MAX_QUERY_FILTER_WORK

VENUE_PAPER = "2212.11861"  # unarXive sample: journal-ref "Chinese Physics C46, (2022) 073106"


def test_total_count_is_the_same_on_every_page(client: httpx.Client) -> None:
    q = "learning model data"
    bodies = [
        client.post("/search", json={"query": q, "top_k": 10, "offset": o}).json() for o in (0, 1500, 5000)
    ]
    totals = {b["total_count"] for b in bodies}
    assert len(totals) == 1, totals
    total = totals.pop()
    assert total > 1500  # the list really reaches past the candidate depth of the first page
    assert bodies[2]["result"] == ([] if total <= 5000 else bodies[2]["result"])


def test_nonsense_query_has_no_hits_and_counts_zero(client: httpx.Client) -> None:
    body = client.post("/search", json={"query": "qzxvvbw plorfnik", "top_k": 10}).json()
    assert body["result"] == [] and body["total_count"] == 0
    v1 = client.get("/v1/search", params={"q": "qzxvvbw plorfnik"}).json()
    assert v1["hits"] == [] and v1["total_count"] == 0


def test_dense_alone_counts_the_papers_passing_the_filters(client: httpx.Client) -> None:
    everything = client.post("/search", json={"query": "x", "mode": "dense", "top_k": 1}).json()
    astro = client.post(
        "/search", json={"query": "x", "mode": "dense", "top_k": 1, "categories": ["astro-ph"]}
    ).json()
    assert 0 < astro["total_count"] < everything["total_count"]


@pytest.mark.parametrize(
    "params",
    [{"venue": "Chinese Physics C"}, {"venue": "chinese physics"}, {"venue_year": 2022}],
)
def test_venue_filters_are_applied(client: httpx.Client, params: dict[str, Any]) -> None:
    r = client.get("/arxiv/", params={"type": "retrieve", "query": "charmonium meson decay", **params})
    body = r.json()
    assert r.status_code == 200 and "warnings" not in body, body
    assert [h["arxiv_id"] for h in body["result"]] == [VENUE_PAPER]
    post = client.post("/search", json={"query": "meson", **params}).json()
    assert [h["arxiv_id"] for h in post["result"]] == [VENUE_PAPER]


def test_venue_that_no_paper_names_finds_nothing(client: httpx.Client) -> None:
    body = client.get("/arxiv/", params={"type": "retrieve", "query": "meson", "venue": "NeurIPS"}).json()
    assert body["result"] == [] and body["total_count"] == 0 and "warnings" not in body
    other_year = client.post(
        "/search", json={"query": "meson", "venue": "Chinese Physics C", "venue_year": 2019}
    )
    assert other_year.json()["result"] == []


def test_bad_venue_year_is_a_400(client: httpx.Client) -> None:
    r = client.post("/search", json={"query": "meson", "venue_year": 99})
    assert r.status_code == 400 and "venue_year" in r.json()["detail"]


def test_queries_times_filter_values_is_capped(client: httpx.Client) -> None:
    authors = [f"Author{i} Name" for i in range(50)]
    queries = [f"query {i}" for i in range(MAX_QUERY_FILTER_WORK // 50 + 1)]
    r = client.post("/search", json={"query": queries, "authors": authors})
    assert r.status_code == 400
    assert "query × filter values" in r.json()["detail"] and str(MAX_QUERY_FILTER_WORK) in r.json()["detail"]
    ok = client.post("/search", json={"query": queries[:-1], "authors": authors, "top_k": 3})
    assert ok.status_code == 200


def test_a_request_past_its_time_budget_is_a_503(test_index: BuiltIndex) -> None:
    from openxiv.service.http.app import create_app

    settings = test_index.settings.replace(request_budget_s=1e-6)
    with TestClient(create_app(settings, test_index.root)) as c:
        r = c.post("/search", json={"query": ["graph neural networks", "diffusion"], "top_k": 3})
        assert r.status_code == 503
        assert "OPENXIV_REQUEST_BUDGET_S" in r.json()["detail"]
        assert c.get("/healthz").status_code == 200  # the worker is free again
