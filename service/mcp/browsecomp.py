"""``openxiv mcp --profile browsecomp``: BrowseComp-Plus' two retrieval tools instead of DeepXiv's six.

``search(query)`` returns the top ``k`` papers as ``[{docid, score, snippet}]`` and ``get_document(docid)``
the whole paper as ``{docid, text}`` (`openxiv.service.browsecomp`); ``k`` and the snippet budget are
fixed when the server starts (``--k``, ``--snippet-max-tokens``), as BrowseComp-Plus' own server does,
so every agent of a run sees the same retrieval. The text content of a result is its JSON (what
BrowseComp-Plus' FastMCP server sends and its agents parse); the structured content holds the same
values (``{"result": [...]}`` for ``search``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from openxiv.service.browsecomp import BrowseCompTools
from openxiv.service.mcp.arguments import CheckedServer
from openxiv.service.mcp.results import READ_ONLY, tool_errors
from openxiv.service.mcp.server import LogLevel, serving

__all__ = ["BROWSECOMP_TOOLS", "build_browsecomp_server"]

BROWSECOMP_TOOLS = ("search", "get_document")


class SearchHit(BaseModel):
    docid: str = Field(description="The paper's arXiv id; pass it to get_document.")
    score: float
    snippet: str = Field(description="The start of the paper's text, cut to the server's token budget.")


class SearchOutput(BaseModel):
    result: list[SearchHit]


class Document(BaseModel):
    docid: str
    text: str = Field(description="The whole paper as markdown: title, abstract, every section.")


def _json_result(value: Any, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(value, ensure_ascii=False, indent=2))],
        structured_content=structured,
    )


def build_browsecomp_server(
    tools: BrowseCompTools, log_level: LogLevel = "WARNING", *, get_document: bool = True, load: bool = True
) -> MCPServer:
    """The MCP server with ``search`` (and ``get_document``); ``load`` as in `build_server`."""
    library = tools.library

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        async with serving(library):
            yield

    budget = "whole texts" if tools.snippet_max_tokens < 0 else f"about {tools.snippet_max_tokens} tokens"
    server: MCPServer = CheckedServer(  # refuses arguments a tool does not declare
        name="openxiv-browsecomp",
        instructions=(
            f"Search a frozen corpus of arXiv papers. search returns the top {tools.k} papers with "
            f"a snippet ({budget}) of each"
            + ("; get_document returns a paper's whole text by its docid." if get_document else ".")
        ),
        version=version("openxiv"),
        lifespan=lifespan if load else None,
        log_level=log_level,
    )

    @server.tool(
        annotations=READ_ONLY,
        description=(
            f"Search the arXiv corpus (BM25 + dense hybrid). Returns the top-{tools.k} papers with docid, "
            f"score and snippet; the snippet is the start of the paper's text ({budget})."
        ),
    )
    async def search(
        query: Annotated[str, Field(description="What to look for, in words")],
    ) -> Annotated[CallToolResult, SearchOutput]:
        with tool_errors():
            hits = await tools.asearch(query)
        return _json_result(hits, {"result": hits})

    if get_document:

        @server.tool(
            name="get_document",
            annotations=READ_ONLY,
            description="Retrieve a paper's whole text by its docid (arXiv id).",
        )
        def get_document_tool(
            docid: Annotated[str, Field(description="A docid from search (an arXiv id)")],
        ) -> Annotated[CallToolResult, Document]:
            with tool_errors():
                doc = tools.get_document(docid)
            return _json_result(doc, doc)

    return server
