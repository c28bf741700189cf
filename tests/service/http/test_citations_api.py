"""In-corpus citation counts on every front (issue 41): ``brief.citations``, each hit's
``citation_count``, the ``min_citation`` filter and ``sort=citations``, against a real ``openxiv serve``
(and ``openxiv mcp``, ``openxiv search``) on the real references index (tests/refs_index.py: the
unArXive sample and three PDFs, where ResNet is cited by 4 corpus papers, the Transformer by 3 and
batch normalisation by 1).

On main ``min_citation`` was a 400 ("this corpus has no citation counts") and ``brief.citations`` null.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner
from live_index import BIN, SHARED, BuiltIndex, LiveServer
from mcp import Client
from mcp.client.stdio import StdioServerParameters

RESNET, TRANSFORMER, BATCHNORM = "1512.03385", "1706.03762", "1502.03167"
COUNTS = {RESNET: 4, TRANSFORMER: 3, BATCHNORM: 1}
QUERY = "neural networks training"


@pytest.fixture(scope="module")
def server(refs_index: BuiltIndex) -> Iterator[httpx.Client]:
    live = LiveServer(refs_index.root)
    try:
        with httpx.Client(base_url=live.url, timeout=60) as c:
            yield c
    finally:
        live.stop()


def _ids(body: dict[str, Any]) -> list[str]:
    return [h["arxiv_id"] for h in body["result"]]


def test_brief_counts_citations_within_this_corpus(server: httpx.Client) -> None:
    for aid, n in COUNTS.items():
        body = server.get("/arxiv/", params={"type": "brief", "arxiv_id": aid}).json()
        assert (body["citations"], body["citation_count"]) == (n, n)
    uncited = server.get("/arxiv/", params={"type": "brief", "arxiv_id": "2212.11790"}).json()
    assert uncited["citations"] == 0
    schema = server.get("/openapi.json").json()["components"]["schemas"]["BriefResponse"]
    assert "THIS CORPUS" in schema["properties"]["citations"]["description"]


def test_every_hit_carries_its_count(server: httpx.Client) -> None:
    body = server.post("/search", json={"query": QUERY, "top_k": 20}).json()
    assert body["result"] and all(isinstance(h["citation_count"], int) for h in body["result"])
    got = {h["arxiv_id"]: h["citation_count"] for h in body["result"] if h["citation_count"]}
    assert got.items() <= COUNTS.items()
    v1 = server.post("/v1/search", json={"query": QUERY, "top_k": 20}).json()
    assert {h["arxiv_id"]: h["citation_count"] for h in v1["hits"] if h["citation_count"]} == got


def test_min_citation_keeps_the_cited_papers(server: httpx.Client) -> None:
    everything = server.post("/search", json={"query": QUERY, "top_k": 100}).json()
    cited = [a for a in _ids(everything) if COUNTS.get(a, 0) >= 3]
    assert len(cited) == 2  # both papers cited at least 3 times match the query
    body = server.post("/search", json={"query": QUERY, "top_k": 100, "min_citation": 3}).json()
    assert _ids(body) == cited and body["total_count"] == 2  # relevance order kept
    legacy = server.get(
        "/arxiv/", params={"type": "retrieve", "query": QUERY, "top_k": 100, "min_citation": 3}
    ).json()
    assert _ids(legacy) == cited
    v1 = server.post("/v1/search", json={"query": QUERY, "top_k": 100, "min_citation": 3}).json()
    assert [h["arxiv_id"] for h in v1["hits"]] == cited
    # 0 filters nothing: the same body as no filter
    zero = server.post("/search", json={"query": QUERY, "top_k": 100, "min_citation": 0})
    assert zero.json() == everything


def test_sort_by_citations(server: httpx.Client) -> None:
    body = server.post("/search", json={"query": QUERY, "top_k": 3, "sort": "citations"}).json()
    counts = [h["citation_count"] for h in body["result"]]
    assert counts == sorted(counts, reverse=True) and counts[0] == 4
    assert _ids(body)[0] == RESNET
    page2 = server.post("/search", json={"query": QUERY, "top_k": 3, "offset": 3, "sort": "citations"})
    assert not set(_ids(page2.json())) & set(_ids(body))
    legacy = server.get(
        "/arxiv/", params={"type": "retrieve", "query": QUERY, "top_k": 3, "sort": "citations"}
    )
    assert _ids(legacy.json()) == _ids(body)


@pytest.mark.parametrize(
    ("method", "path", "payload", "words"),
    [
        ("post", "/search", {"query": QUERY, "min_citation": -1}, "min_citation"),
        ("post", "/search", {"query": QUERY, "sort": "popularity"}, "sort: 'popularity' is not one of"),
        ("get", "/arxiv/", {"type": "retrieve", "query": QUERY, "min_citation": "many"}, "min_citation"),
        ("get", "/arxiv/", {"type": "retrieve", "query": QUERY, "sort": "date"}, "sort"),
        ("post", "/v1/search", {"query": QUERY, "sort": "x"}, "sort"),
    ],
)
def test_bad_values_are_a_400_naming_the_parameter(
    server: httpx.Client, method: str, path: str, payload: dict[str, Any], words: str
) -> None:
    r = server.post(path, json=payload) if method == "post" else server.get(path, params=payload)
    assert r.status_code == 400, r.text
    assert words in json.dumps(r.json())


def test_the_terminal_and_the_mcp_tool_filter_and_sort_the_same(
    refs_index: BuiltIndex, server: httpx.Client
) -> None:
    from openxiv.service.cli import cli

    http = server.post(
        "/search", json={"query": QUERY, "top_k": 5, "min_citation": 1, "sort": "citations"}
    ).json()
    assert _ids(http) == [RESNET, TRANSFORMER, BATCHNORM]
    runner = CliRunner()
    base = ["search", QUERY, "-k", "5", "--index", str(refs_index.root)]
    out = runner.invoke(cli, [*base, "--min-citation", "1", "--sort", "citations", "--json"])
    assert out.exit_code == 0, out.output
    assert _ids(json.loads(out.output)) == _ids(http)
    bad = runner.invoke(cli, [*base, "--min-citation", "-2"])
    assert bad.exit_code == 2 and "min_citation" in bad.output

    params = StdioServerParameters(
        command=str(BIN / "openxiv"),
        args=["mcp", "--index", str(refs_index.root)],
        env={
            "HF_HUB_OFFLINE": "1",
            "OPENXIV_SHARED": str(SHARED.root),
            "OPENXIV_DATA_DIR": str(refs_index.root.parent),
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        },
    )

    async def session() -> None:
        async with Client(params) as mcp:
            res = await mcp.call_tool(
                "search_papers", {"query": QUERY, "size": 5, "min_citation": 1, "sort": "citations"}
            )
            assert not res.is_error, res.content
            assert _ids(res.structured_content or {}) == _ids(http)
            bad = await mcp.call_tool("search_papers", {"query": QUERY, "sort": "hot"})
            assert bad.is_error and "sort" in str(bad.content)

    anyio.run(session)
