"""``openxiv mcp --profile browsecomp --transport sse`` driven by the official ``mcp`` client's SSE
transport: BrowseComp-Plus' ``search``/``get_document`` shapes, ``k`` and the snippet budget fixed at
start, answers matching the HTTP API's, and the snapshot kept open across SSE connections."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from live_index import BuiltIndex
from mcp import Client
from mcp.client.sse import sse_client
from mcp_types import CallToolResult, TextContent
from test_mcp import McpHttpServer

from openxiv.service.browsecomp import cut_tokens
from openxiv.service.text import token_count

K, SNIPPET = 3, 64
QUERY = "batch normalization internal covariate shift"


@pytest.fixture(scope="module")
def sse_server(test_index: BuiltIndex) -> Iterator[McpHttpServer]:
    args = ("--profile", "browsecomp", "--k", str(K), "--snippet-max-tokens", str(SNIPPET))
    server = McpHttpServer(test_index, None, None, "sse", *args)
    try:
        yield server
    finally:
        server.stop()


def _text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def _call(url: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[CallToolResult]]:
    """The tools listed and each call's result, over one SSE connection."""
    out: list[CallToolResult] = []
    names: list[str] = []

    async def main() -> None:
        async with Client(sse_client(url)) as client:
            names.extend(t.name for t in (await client.list_tools()).tools)
            for tool, args in calls:
                out.append(await client.call_tool(tool, args))

    anyio.run(main)
    return names, out


def test_browsecomp_tools_over_sse(sse_server: McpHttpServer, client: httpx.Client) -> None:
    names, (found, doc, missing, bad) = _call(
        sse_server.url,
        [
            ("search", {"query": QUERY}),
            ("get_document", {"docid": "1502.03167"}),
            ("get_document", {"docid": "2501.99999"}),
            ("search", {"query": "  "}),
        ],
    )
    assert sorted(names) == ["get_document", "search"]
    assert not found.is_error, _text(found)
    hits = json.loads(_text(found))
    assert found.structured_content == {"result": hits}
    expected = client.post("/search", json={"query": QUERY, "top_k": K}).json()["result"]
    assert [h["docid"] for h in hits] == [e["arxiv_id"] for e in expected]
    assert [h["score"] for h in hits] == [e["score"] for e in expected]
    assert all(set(h) == {"docid", "score", "snippet"} for h in hits)

    assert not doc.is_error and doc.structured_content is not None
    text = doc.structured_content["text"]
    raw = client.get("/arxiv/", params={"type": "raw", "arxiv_id": "1502.03167"}).json()["raw"]
    assert doc.structured_content == {"docid": "1502.03167", "text": raw} == json.loads(_text(doc))
    snippet = next(h["snippet"] for h in hits if h["docid"] == "1502.03167")
    assert text.startswith(snippet) and len(snippet) < len(text)
    assert SNIPPET - 3 <= token_count(snippet) <= SNIPPET

    assert missing.is_error and "2501.99999 is not in this corpus" in _text(missing)
    assert bad.is_error and "query" in _text(bad)


def test_snapshot_stays_open_across_sse_connections(sse_server: McpHttpServer) -> None:
    """The SDK runs a server's lifespan per SSE connection: one client leaving must not close the
    snapshot under another."""
    results: list[CallToolResult] = []

    async def main() -> None:
        async with Client(sse_client(sse_server.url)) as first:
            results.append(await first.call_tool("search", {"query": QUERY}))
            async with Client(sse_client(sse_server.url)) as second:
                results.append(await second.call_tool("search", {"query": QUERY}))
            results.append(await first.call_tool("search", {"query": QUERY}))

    anyio.run(main)
    assert [r.is_error for r in results] == [False] * 3, [_text(r) for r in results]
    assert results[0].structured_content == results[2].structured_content


def test_cut_tokens_keeps_whole_words_and_layout() -> None:
    text = "Title\n\n## Abstract\n\nword " * 40
    cut = cut_tokens(text, 13)
    assert text.startswith(cut) and len(cut.split()) == 10 and cut.endswith("##")
    assert cut_tokens(text, -1) == text and cut_tokens("short text", 512) == "short text"


def test_bad_snippet_budget_is_a_usage_error(test_index: BuiltIndex) -> None:
    from click.testing import CliRunner

    from openxiv.service.mcp.cli import mcp

    args = ["--index", str(test_index.root), "--profile", "browsecomp", "--snippet-max-tokens", "0"]
    r = CliRunner().invoke(mcp, args)
    assert r.exit_code == 2 and "--snippet-max-tokens" in r.output
