"""Protocol honesty (issue 9): what openxiv cannot do is said, never silently skipped.

- author ``orgs`` is a list, never null;
- filters the corpus has no data for (``orgs``) are a 400 unless the operator chose lenient mode,
  which applies nothing and says so in ``warnings``; ``min_citation`` is applied (in-corpus counts,
  issue 41: tests/service/http/test_citations_api.py);
- DeepXiv endpoints openxiv does not serve answer 501 naming what is missing, and the real SDK raises
  instead of returning ``None``;
- ``POST /search`` repairs what has a clear intent (``top_k`` above the maximum, empty strings in a
  batch) and says so in ``warnings``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from live_index import BuiltIndex, LiveServer

QUERY = "graph neural networks for molecules"


def _authors(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for hit in body["result"] for a in hit["authors"]]


def test_orgs_is_always_a_list(client: httpx.Client) -> None:
    searched = client.post("/search", json={"query": QUERY, "top_k": 5}).json()
    retrieved = client.get("/arxiv/", params={"type": "retrieve", "query": QUERY, "top_k": 5}).json()
    head = client.get("/arxiv/", params={"type": "head", "arxiv_id": searched["result"][0]["arxiv_id"]})
    brief = client.get("/arxiv/", params={"type": "brief", "arxiv_id": searched["result"][0]["arxiv_id"]})
    authors = _authors(searched) + _authors(retrieved) + head.json()["authors"] + brief.json()["authors"]
    assert authors
    for author in authors:
        assert author["orgs"] == []
        ", ".join(author["orgs"])  # what example code does with it


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"orgs": "MIT"}, "affiliations"),
        ({"orgs": ["MIT", "CMU"]}, "orgs"),
    ],
)
def test_filters_without_data_are_400(client: httpx.Client, params: dict[str, Any], needle: str) -> None:
    for r in (
        client.get("/arxiv/", params={"type": "retrieve", "query": QUERY, **params}),
        client.post("/search", json={"query": QUERY, **params}),
    ):
        assert r.status_code == 400, r.text
        detail = r.json()["detail"]
        assert needle in detail and "OPENXIV_LENIENT_FILTERS" in detail


def test_min_citation_zero_filters_nothing_and_is_accepted(client: httpx.Client) -> None:
    r = client.get("/arxiv/", params={"type": "retrieve", "query": QUERY, "min_citation": 0})
    assert r.status_code == 200 and "warnings" not in r.json()


def test_sdk_agent_tool_does_not_print_filters_it_did_not_apply(server: LiveServer) -> None:
    from deepxiv_sdk import Reader
    from deepxiv_sdk.agent.tools import ToolExecutor

    tools = ToolExecutor(Reader(base_url=server.url, token="x", max_retries=0))
    state: dict[str, Any] = {"papers": {}, "paper_sections_cache": {}}
    text = tools.execute_tool_call("search_papers", {"query": QUERY, "orgs": ["MIT"]}, state)
    assert "Filters: Orgs: MIT" not in text and "Error" in text
    plain = tools.execute_tool_call("search_papers", {"query": QUERY, "size": 3}, state)
    assert "Total:" in plain and "Error" not in plain


@pytest.fixture(scope="module")
def lenient_server(test_index: BuiltIndex) -> Iterator[LiveServer]:
    live = LiveServer(test_index.root, extra_env={"OPENXIV_LENIENT_FILTERS": "1"})
    try:
        yield live
    finally:
        live.stop()


def test_lenient_mode_answers_unfiltered_with_warnings(
    lenient_server: LiveServer, client: httpx.Client
) -> None:
    params = {"type": "retrieve", "query": QUERY, "top_k": 5}
    body = httpx.get(lenient_server.url + "/arxiv/", params={**params, "orgs": "MIT"}).json()
    assert [h["arxiv_id"] for h in body["result"]] == [
        h["arxiv_id"] for h in client.get("/arxiv/", params=params).json()["result"]
    ]
    assert any("orgs is not applied" in w for w in body["warnings"])


# ------------------------------------------------------------------------ endpoints openxiv does not serve
@pytest.mark.parametrize(
    ("method", "path", "needle"),
    [
        ("POST", "/web/agent/search", "agentic web search"),
        ("POST", "/websearch", "web search"),
        ("GET", "/semantic_scholar?id=1502.03167", "Semantic Scholar"),
        ("GET", "/pmc/?pmc_id=PMC544940&type=head", "PubMed Central"),
        ("GET", "/biorxiv/data?source_id=10.1101/2021.02.26.433129", "bioRxiv"),
        ("POST", "/medrxiv/retrieve", "medRxiv"),
        ("GET", "/arxiv/trending_signal?arxiv_id=1502.03167", "trending"),
        ("GET", "/trending_arxiv_papers/api/trending?days=7", "trending"),
        ("POST", "/fa/v1/talent/search", "1stAuthor"),
        ("GET", "/arxiv/?type=retrieve&query=x&source=biorxiv", "biorxiv search"),
    ],
)
def test_unserved_endpoints_are_501_naming_what_is_missing(
    client: httpx.Client, method: str, path: str, needle: str
) -> None:
    r = client.request(method, path, json={"query": "x"} if method == "POST" else None)
    assert r.status_code == 501, r.text
    assert r.headers["content-type"] == "application/json"
    detail = r.json()["detail"]
    assert detail.startswith("openxiv does not provide") and needle in detail


def test_unknown_paths_are_still_404(client: httpx.Client) -> None:
    assert client.get("/no/such/path").status_code == 404


def test_sdk_raises_on_unserved_endpoints_instead_of_returning_none(server: LiveServer) -> None:
    from deepxiv_sdk import Reader
    from deepxiv_sdk.exceptions import APIError, ServerError

    reader = Reader(base_url=server.url, token="x", timeout=60, max_retries=0)
    with pytest.raises(ServerError, match="501"):
        reader.social_impact("1502.03167")  # a 404 made this a silent None
    with pytest.raises(ServerError, match="501"):
        reader.pmc_head("PMC544940")  # a 404 said "Paper not found"
    with pytest.raises(ServerError, match="501"):
        reader.biomed_search("protein folding")
    with pytest.raises(ServerError, match="openxiv does not provide"):
        reader.agent_search("what is attention?", source="web")  # the arXiv one is served
    with pytest.raises(APIError, match="openxiv does not provide the 1stAuthor"):
        reader.fa().search("talent", "graph neural networks")


# ------------------------------------------------------------------------ POST /search leniency
def test_top_k_above_the_maximum_is_clamped_with_a_warning(client: httpx.Client) -> None:
    body = client.post("/search", json={"query": QUERY, "top_k": 500}).json()
    assert body["status"] == "success" and len(body["result"]) == 100
    assert body["warnings"] == ["top_k: 500 is above the maximum; clamped to 100"]
    plain = client.post("/search", json={"query": QUERY, "top_k": 100}).json()
    assert [h["arxiv_id"] for h in body["result"]] == [h["arxiv_id"] for h in plain["result"]]
    assert "warnings" not in plain


def test_empty_strings_in_a_batch_are_skipped_with_a_warning(client: httpx.Client) -> None:
    body = client.post(
        "/search", json={"query": ["", QUERY, "  ", "exoplanet atmospheres"], "top_k": 3}
    ).json()
    assert body["status"] == "success"
    assert [r["query"] for r in body["results"]] == [QUERY, "exoplanet atmospheres"]
    assert body["warnings"] == ["query[0, 2]: empty queries skipped"]


def test_what_cannot_be_repaired_stays_400(client: httpx.Client) -> None:
    assert client.post("/search", json={"query": ["", " "]}).status_code == 400
    assert client.post("/search", json={"query": QUERY, "top_k": 0}).status_code == 400
    assert client.get("/arxiv/", params={"type": "retrieve", "query": QUERY, "top_k": 500}).status_code == 400
