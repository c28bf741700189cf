"""What the ledger says about a call, from its request and response alone: its kind, its parameters
(without a token), the papers returned with their ranks and the papers read."""

from __future__ import annotations

import json

import pytest

from openxiv.service.experiments.describe import describe, request_key

HITS = json.dumps(
    {"status": "success", "result": [{"arxiv_id": "2301.00001"}, {"arxiv_id": "2301.00002"}]}
).encode()


@pytest.mark.parametrize(
    ("method", "route", "query", "body", "kind"),
    [
        ("POST", "/search", b"", b'{"query": "x"}', "search"),
        ("POST", "/", b"", b'{"query": "x"}', "search"),
        ("GET", "/arxiv/", b"type=retrieve&query=x", b"", "search"),
        ("GET", "/arxiv/", b"query=x", b"", "search"),
        ("GET", "/arxiv/", b"arxiv_id=2301.00001", b"", "head"),
        ("GET", "/arxiv/", b"type=SECTION&arxiv_id=2301.00001&section=2", b"", "section"),
        ("GET", "/v1/papers/2301.00001/sections/idx:2", b"", b"", "section"),
        ("GET", "/v1/papers/2301.00001/cited_by", b"", b"", "cited_by"),
        ("GET", "/v1/papers/hep-th/9901001", b"", b"", "paper"),
        ("POST", "/arxiv/agent/search/stream", b"", b'{"query": "x"}', "agent_search"),
        ("POST", "/retrieve", b"", b'{"queries": ["x"]}', "retrieve"),
        ("GET", "/v1/passages", b"q=x", b"", "passages"),
        ("GET", "/graph/v1/paper/search", b"query=x", b"", "s2:search"),
        (
            "POST",
            "/mcp",
            b"",
            b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search_papers", "arguments": {"query": "x"}}}',
            "mcp:search_papers",
        ),
        ("GET", "/something/else", b"", b"", "other"),
    ],
)
def test_kinds(method: str, route: str, query: bytes, body: bytes, kind: str) -> None:
    assert describe(method, route, query, body, b"{}", "application/json").kind == kind


def test_returned_ranks_reads_and_params() -> None:
    page2 = describe("POST", "/search", b"", b'{"query": "x", "offset": 10}', HITS, "application/json")
    assert [(r.id, r.rank) for r in page2.returned] == [("2301.00001", 11), ("2301.00002", 12)]
    retrieve = {"result": [[{"id": "a1"}, {"id": "a2"}], [{"document": {"id": "b1"}, "score": 1.0}]]}
    got = describe("POST", "/retrieve", b"", b"{}", json.dumps(retrieve).encode(), "application/json")
    assert [(r.id, r.rank, r.query) for r in got.returned] == [("a1", 1, 0), ("a2", 2, 0), ("b1", 1, 1)]
    stream = b'{"type": "status"}\n{"type": "sources", "sources": [{"arxiv_id": "2301.00009"}]}\n'
    agent = describe(
        "POST", "/arxiv/agent/search/stream", b"", b'{"query": "x"}', stream, "application/x-ndjson"
    )
    assert [r.id for r in agent.returned] == ["2301.00009"]
    sse = (
        b'event: message\ndata: {"jsonrpc": "2.0", "id": 3, "result": {"structuredContent": '
        + HITS
        + b"}}\n\n"
    )
    body = b'{"method": "tools/call", "params": {"name": "search_papers", "arguments": {"query": "x"}}}'
    mcp = describe("POST", "/mcp", b"", body, sse, "text/event-stream")
    assert [r.id for r in mcp.returned] == ["2301.00001", "2301.00002"] and mcp.params == {
        "tool": "search_papers",
        "query": "x",
    }
    named = b'{"method": "tools/call", "params": {"name": "author_papers", "arguments": {"name": "Lu"}}}'
    author = describe("POST", "/mcp", b"", named, sse, "text/event-stream")  # an argument called `name`
    assert author.kind == "mcp:author_papers" and author.params == {"tool": "author_papers", "name": "Lu"}
    find = describe(
        "GET",
        "/arxiv/",
        b"type=find&arxiv_id=2301.00001&query=loss&token=secret&x=1&x=2",
        b"",
        b"{}",
        "application/json",
    )
    assert [r.to_json() for r in find.read] == [{"id": "2301.00001", "what": "find", "query": "loss"}]
    assert find.params == {"type": "find", "arxiv_id": "2301.00001", "query": "loss", "x": ["1", "2"]}
    assert (
        describe("GET", "/v1/papers/2301.00001/sections/Intro", b"", b"", b"{}", "application/json")
        .read[0]
        .section
        == "Intro"
    )


def test_request_keys_ignore_query_order_and_see_the_body() -> None:
    assert request_key("GET", "/arxiv/", b"a=1&b=2", b"") == request_key("get", "/arxiv/", b"b=2&a=1", b"")
    assert request_key("POST", "/search", b"", b'{"query": "x"}') != request_key(
        "POST", "/search", b"", b'{"query": "y"}'
    )
    assert request_key("POST", "/search", b"", b"{}") != request_key("POST", "/", b"", b"{}")
