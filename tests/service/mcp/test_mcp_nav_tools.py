"""The MCP tools of issue 41 (``search_passages``, ``facets``, ``match_title``, ``author_papers``,
``bibtex``) of ``openxiv mcp`` (stdio, the official client) on the session's real index: the same
answers as the HTTP API, bad arguments as tool errors naming them."""

from __future__ import annotations

import os

import httpx
from live_index import BIN, SHARED, BuiltIndex
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import TextContent

PAPER = "1706.03762"


def _text(result) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def test_navigation_tools_answer_like_the_http_api(test_index: BuiltIndex, client: httpx.Client) -> None:
    import anyio

    env = {
        "HF_HUB_OFFLINE": "1",
        "OPENXIV_SHARED": str(SHARED.root),
        "OPENXIV_DATA_DIR": str(test_index.root.parent),
        **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},  # a worktree's own code
    }
    params = StdioServerParameters(
        command=str(BIN / "openxiv"), args=["mcp", "--index", str(test_index.root)], env=env
    )

    async def main() -> None:
        async with Client(params) as mcp:
            listed = {t.name: t for t in (await mcp.list_tools()).tools}
            for name in ("search_passages", "facets", "match_title", "author_papers", "bibtex"):
                assert listed[name].output_schema, name
            found = await mcp.call_tool("search_passages", {"query": "label smoothing", "size": 3})
            want = client.get("/v1/passages", params={"q": "label smoothing", "top_k": 3}).json()
            got = dict(found.structured_content or {})
            assert got.pop("timings_ms") is not None and want.pop("timings_ms") is not None
            assert got == want and "**Label** **Smoothing**" in _text(found)
            inside = await mcp.call_tool(
                "search_passages", {"query": "attention", "paper_ids": [PAPER], "size": 5}
            )
            assert {h["arxiv_id"] for h in (inside.structured_content or {})["result"]} == {PAPER}
            counted = await mcp.call_tool(
                "facets", {"query": "diffusion", "categories": "cs", "top_authors": 3}
            )
            want = client.get(
                "/v1/facets", params={"q": "diffusion", "category": "cs", "top_authors": 3}
            ).json()
            assert counted.structured_content == want and "top authors:" in _text(counted)
            matched = await mcp.call_tool("match_title", {"title": "Attention is all you need"})
            assert (matched.structured_content or {})["match"]["arxiv_id"] == PAPER
            author = await mcp.call_tool("author_papers", {"name": "Jiri Matas"})
            assert "Jiří Matas" in _text(author)
            bib = await mcp.call_tool("bibtex", {"arxiv_id": PAPER})
            assert _text(bib).startswith("@misc{vaswani2017attention,")
            for tool, args, named in (
                ("search_passages", {"query": "x", "size": 0}, "size"),
                ("search_passages", {"query": "x", "paper_ids": "bad"}, "paper_ids"),
                ("facets", {"top_authors": -1}, "top_authors"),
                ("match_title", {"title": " "}, "title"),
                ("author_papers", {"name": ""}, "name"),
                ("bibtex", {"arxiv_id": []}, "arxiv_id"),
            ):
                bad = await mcp.call_tool(tool, args)
                assert bad.is_error and named in _text(bad), (tool, _text(bad))

    anyio.run(main)
