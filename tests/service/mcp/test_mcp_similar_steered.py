"""``similar_papers`` with ``facet`` and ``negative_ids`` over MCP (stdio, the official client) on
the session's real index: the HTTP API's answers, and bad values as tool errors naming them."""

from __future__ import annotations

import os

import httpx
from live_index import BIN, SHARED, BuiltIndex
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import TextContent

PAPER = "1706.03762"


def test_similar_papers_takes_a_facet_and_negative_ids(test_index: BuiltIndex, client: httpx.Client) -> None:
    import anyio

    env = {
        "HF_HUB_OFFLINE": "1",
        "OPENXIV_SHARED": str(SHARED.root),
        "OPENXIV_DATA_DIR": str(test_index.root.parent),
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},  # a checkout run on another's venv
    }
    params = StdioServerParameters(
        command=str(BIN / "openxiv"), args=["mcp", "--index", str(test_index.root)], env=env
    )
    first = client.get("/arxiv/", params={"type": "similar", "arxiv_id": PAPER, "top_k": 1}).json()["result"][
        0
    ]
    ruled_out = first["arxiv_id"]

    async def main() -> None:
        async with Client(params) as mcp:
            schema = {t.name: t for t in (await mcp.list_tools()).tools}["similar_papers"].input_schema
            assert {"facet", "negative_ids"} <= set(schema["properties"])
            args = {"arxiv_id": PAPER, "size": 5, "facet": "method", "negative_ids": [ruled_out]}
            got = await mcp.call_tool("similar_papers", args)
            assert not got.is_error
            want = client.get(
                "/arxiv/",
                params={
                    "type": "similar",
                    "arxiv_id": PAPER,
                    "top_k": 5,
                    "facet": "method",
                    "negative_ids": ruled_out,
                },
            ).json()
            assert got.structured_content == want
            assert ruled_out not in [h["arxiv_id"] for h in want["result"]]
            for bad_args, names in (
                ({"facet": "conclusion"}, "facet"),
                ({"negative_ids": "not-an-id"}, "negative_ids"),
                ({"negative_ids": "2501.99999"}, "negative_ids: 2501.99999"),
                ({"negative_ids": [f"2503.{i:05d}" for i in range(1, 23)]}, "negative_ids: at most 20"),
            ):
                bad = await mcp.call_tool("similar_papers", {"arxiv_id": PAPER, **bad_args})
                text = "".join(c.text for c in bad.content if isinstance(c, TextContent))
                assert bad.is_error and names in text, (bad_args, text)

    anyio.run(main)
