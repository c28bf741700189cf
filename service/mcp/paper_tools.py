"""The MCP tools ``similar_papers`` and ``find_in_paper`` (the use cases `openxiv.service.similar`
and `openxiv.service.find`, through the server's `Library`); added to the server by `add_paper_tools`."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from openxiv.service.find import FIND_TOP_K, FIND_TOP_K_MAX
from openxiv.service.library import Library
from openxiv.service.mcp.arguments import Authors, Categories, DateFrom, DateTo, Offset, Size
from openxiv.service.mcp.results import READ_ONLY, tool_errors, tool_result
from openxiv.service.models import SearchResponse
from openxiv.service.params import FilterParams
from openxiv.service.readable import find_text, search_text
from openxiv.service.search_params import DEFAULT_TOP_K
from openxiv.service.similar import FACETS, MAX_SEEDS
from openxiv.service.tool_models import FindResponse

__all__ = ["PAPER_TOOLS", "add_paper_tools"]

PAPER_TOOLS = ("similar_papers", "find_in_paper")


def add_paper_tools(server: MCPServer, library: Library) -> None:
    @server.tool(annotations=READ_ONLY)
    async def similar_papers(
        arxiv_id: Annotated[
            str | list[str],
            Field(description=f"Seed paper id, or up to {MAX_SEEDS} ids (a list or comma-separated)"),
        ],
        size: Size = DEFAULT_TOP_K,
        offset: Offset = 0,
        categories: Categories = None,
        authors: Authors = None,
        date_from: DateFrom = None,
        date_to: DateTo = None,
        facet: Annotated[
            str | None,
            Field(
                description=f"Similar in this respect only: {', '.join(FACETS)} (the seeds' sentences of that kind)"
            ),
        ] = None,
        negative_ids: Annotated[
            str | list[str] | None,
            Field(
                description=f"Papers ruled out, up to {MAX_SEEDS}: the ranking moves away from them; left out"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, SearchResponse]:
        """Papers most similar to a seed paper (or to several: their average), by the papers' own
        embedding vectors; the seeds are left out. `facet` ranks by the seeds' background, method or
        result sentences; `negative_ids` steers away from papers already ruled out. Same result
        shape and filters as search_papers."""
        with tool_errors():  # async: a model server (a facet's vector) is awaited outside the slots
            response = await library.asimilar(
                arxiv_id,
                top_k=size,
                offset=offset,
                filters=FilterParams(
                    categories=categories, authors=authors, date_from=date_from, date_to=date_to
                ),
                top_k_name="size",
                facet=facet,
                negative_ids=negative_ids,
            )
        seeds = arxiv_id if isinstance(arxiv_id, str) else ", ".join(arxiv_id)
        return tool_result(search_text(response, f"similar to {seeds}", offset), response)

    @server.tool(annotations=READ_ONLY)
    def find_in_paper(
        arxiv_id: Annotated[str, Field(description="arXiv id, any spelling: 1706.03762, arXiv:1706.03762v7")],
        query: Annotated[str, Field(description="What to find in the paper, in words")],
        top_k: Annotated[int, Field(description=f"Passages to return, 1-{FIND_TOP_K_MAX}")] = FIND_TOP_K,
    ) -> Annotated[CallToolResult, FindResponse]:
        """Where in one paper something is: its best passages for the query with their section names,
        query words marked **like this** (the abstract's sentences when the paper has no full text).
        Cheaper than reading sections: follow up with get_paper_section on the section named."""
        with tool_errors():
            found = library.find(arxiv_id, query, top_k)
        return tool_result(find_text(found), found)
