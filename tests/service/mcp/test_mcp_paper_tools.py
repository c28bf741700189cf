"""The MCP tools ``similar_papers`` and ``find_in_paper`` of ``openxiv mcp`` (stdio, the official
client) on the session's real index: the same answers as the HTTP API, errors as tool errors."""

from __future__ import annotations

import httpx
from live_index import BIN, SHARED, BuiltIndex
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import TextContent

PAPER = "1706.03762"


def test_similar_papers_and_find_in_paper_answer_like_the_http_api(
    test_index: BuiltIndex, client: httpx.Client
) -> None:
    import anyio

    env = {
        "HF_HUB_OFFLINE": "1",
        "OPENXIV_SHARED": str(SHARED.root),
        "OPENXIV_DATA_DIR": str(test_index.root.parent),
    }
    params = StdioServerParameters(
        command=str(BIN / "openxiv"), args=["mcp", "--index", str(test_index.root)], env=env
    )

    async def main() -> None:
        async with Client(params) as mcp:
            listed = {t.name: t for t in (await mcp.list_tools()).tools}
            assert listed["find_in_paper"].input_schema["required"] == ["arxiv_id", "query"]
            assert listed["similar_papers"].output_schema and listed["find_in_paper"].output_schema
            similar = await mcp.call_tool(
                "similar_papers", {"arxiv_id": [PAPER], "size": 3, "categories": "cs"}
            )
            assert not similar.is_error
            want = client.get(
                "/arxiv/", params={"type": "similar", "arxiv_id": PAPER, "top_k": 3, "categories": "cs"}
            ).json()
            assert similar.structured_content == want
            text = "\n".join(c.text for c in similar.content if isinstance(c, TextContent))
            assert f"for 'similar to {PAPER}' (showing 1-3)" in text
            found = await mcp.call_tool(
                "find_in_paper", {"arxiv_id": PAPER, "query": "learning rate schedule"}
            )
            want = client.get(
                "/arxiv/", params={"type": "find", "arxiv_id": PAPER, "query": "learning rate schedule"}
            ).json()
            assert found.structured_content == want
            text = "\n".join(c.text for c in found.content if isinstance(c, TextContent))
            assert "**learning** **rate**" in text and "Optimizer" in text
            for args in ({"arxiv_id": "2501.99999", "query": "x y"}, {"arxiv_id": PAPER, "query": " "}):
                bad = await mcp.call_tool("find_in_paper", args)
                assert bad.is_error
            bad = await mcp.call_tool("similar_papers", {"arxiv_id": PAPER, "size": 0})
            assert bad.is_error and "size" in "".join(
                c.text for c in bad.content if isinstance(c, TextContent)
            )

    anyio.run(main)
