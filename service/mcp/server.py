"""The MCP server behind ``openxiv mcp``: DeepXiv's MCP tools over a local snapshot.

Built with the official ``mcp`` SDK (``MCPServer``). The tools are named and shaped like the ones
``deepxiv-sdk`` ≤ 0.3 shipped (``search_papers``, ``get_paper_brief``, ``get_paper_metadata``,
``get_paper_section``, ``get_full_paper``, ``get_paper_preview``) so prompts written for them carry
over. Each result is readable text for the model (`openxiv.service.readable`) plus structured
content: the same JSON the HTTP API answers (``POST /search``, ``GET /arxiv/?type=...``), with its
schema published as the tool's output schema. A bad argument, an unknown paper or section is a tool
error (``isError``) whose text says what exists; nothing raises through to the client.

The snapshot is served in-process through a `Library` (the HTTP service's own holder and functions);
it is opened when the server starts and reloads under the service's rules (`reload_triggers`: SIGHUP,
and ``OPENXIV_WATCH_INTERVAL``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field
from starlette.types import ASGIApp

from openxiv.service.guards.access import AuthMiddleware
from openxiv.service.holder import reload_triggers
from openxiv.service.library import Library
from openxiv.service.mcp.arguments import (
    Authors,
    Categories,
    CheckedServer,
    DateFrom,
    DateTo,
    FineRerank,
    MinCitation,
    Mode,
    Offset,
    Size,
    Sort,
)
from openxiv.service.mcp.nav_tools import NAV_TOOLS, add_nav_tools
from openxiv.service.mcp.paper_tools import PAPER_TOOLS, add_paper_tools
from openxiv.service.mcp.reference_tools import REFERENCE_TOOLS, add_reference_tools
from openxiv.service.mcp.results import READ_ONLY, tool_errors, tool_result
from openxiv.service.models import (
    BriefResponse,
    HeadResponse,
    PreviewResponse,
    RawResponse,
    SearchResponse,
    SectionResponse,
)
from openxiv.service.params import FilterParams
from openxiv.service.readable import (
    brief_text,
    head_text,
    preview_text,
    raw_text,
    search_text,
    section_text,
)
from openxiv.service.reading import PREVIEW_CHARS
from openxiv.service.search_params import DEFAULT_TOP_K

__all__ = ["MCP_PATH", "TOOLS", "build_server", "http_app", "serving"]

MCP_PATH = "/mcp"
TOOLS = (
    "search_papers",
    "get_paper_brief",
    "get_paper_metadata",
    "get_paper_section",
    "get_full_paper",
    "get_paper_preview",
    *REFERENCE_TOOLS,
    *PAPER_TOOLS,
    *NAV_TOOLS,
)

INSTRUCTIONS = """Search and read arXiv papers from a local openxiv corpus (a frozen snapshot).
Start with search_papers; then get_paper_brief or get_paper_metadata (sections with token counts)
to decide what to read, get_paper_section for one section, get_paper_preview for the first
characters and get_full_paper only when the whole text is needed (it can be long). find_in_paper
says where in one paper something is; similar_papers finds papers like one you have; references and
cited_by follow a paper's bibliography one hop either way. search_passages returns the best
passages across papers (for quoting evidence); facets counts a query's papers by year, category and
author; match_title finds the paper of a pasted title; author_papers lists an author's papers;
bibtex gives citation entries."""

ArxivId = Annotated[
    str, Field(description="arXiv id, any spelling: 1706.03762, arXiv:1706.03762v7, hep-th/9901001")
]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


@asynccontextmanager
async def serving(library: Library) -> AsyncIterator[None]:
    """The snapshot open (and reloading under the service's rules) while the context lasts."""
    await anyio.to_thread.run_sync(library.load)
    try:
        async with reload_triggers(library.holder, library.settings):
            yield
    finally:
        library.close()


def build_server(library: Library, log_level: LogLevel = "WARNING", *, load: bool = True) -> MCPServer:
    """The MCP server with the six reading tools and `REFERENCE_TOOLS`; the snapshot is opened in its lifespan and closed after.
    ``load=False``: the caller keeps the snapshot open (`serving`), as the SSE transport must, since
    it runs a server's lifespan once per connection."""

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        async with serving(library):
            yield

    server: MCPServer = CheckedServer(  # refuses arguments a tool does not declare
        name="openxiv",
        instructions=INSTRUCTIONS,
        version=version("openxiv"),
        lifespan=lifespan if load else None,
        log_level=log_level,
    )
    _add_search_tool(server, library)
    _add_reading_tools(server, library)
    add_reference_tools(server, library)
    add_paper_tools(server, library)
    add_nav_tools(server, library)
    return server


def _read(
    library: Library, kind: str, render: Callable[[Any], str], arxiv_id: str, **args: Any
) -> CallToolResult:
    """One reading tool's answer: ``library.paper(kind, ...)`` as readable text and structured content."""
    with tool_errors():
        model: BaseModel = library.paper(kind, arxiv_id, **args)
    return tool_result(render(model), model)


def _add_search_tool(server: MCPServer, library: Library) -> None:
    @server.tool(annotations=READ_ONLY)
    async def search_papers(
        query: Annotated[str, Field(description="What to look for, in words (e.g. 'agent memory')")],
        size: Size = DEFAULT_TOP_K,
        offset: Offset = 0,
        categories: Categories = None,
        authors: Authors = None,
        date_from: DateFrom = None,
        date_to: DateTo = None,
        mode: Mode = None,
        use_fine_rerank: FineRerank = False,
        min_citation: MinCitation = None,
        sort: Sort = None,
    ) -> Annotated[CallToolResult, SearchResponse]:
        """Search arXiv papers (BM25 + dense hybrid). Returns title, id, date, categories, authors,
        a TLDR, the passage that matched and its citation count within this corpus for each paper."""
        with tool_errors():  # async: a model server is awaited outside the compute slots
            response = await library.asearch(
                query,
                top_k=size,
                offset=offset,
                filters=FilterParams(
                    categories=categories,
                    authors=authors,
                    date_from=date_from,
                    date_to=date_to,
                    min_citation=min_citation,
                ),
                mode=mode,
                top_k_name="size",
                fine_rerank=use_fine_rerank,
                sort=sort,
            )
        return tool_result(search_text(response, query.strip(), offset), response)


def _add_reading_tools(server: MCPServer, library: Library) -> None:
    @server.tool(annotations=READ_ONLY)
    def get_paper_brief(arxiv_id: ArxivId) -> Annotated[CallToolResult, BriefResponse]:
        """Quick summary of one paper: title, authors, date, PDF link and TLDR."""
        return _read(library, "brief", brief_text, arxiv_id)

    @server.tool(annotations=READ_ONLY)
    def get_paper_metadata(arxiv_id: ArxivId) -> Annotated[CallToolResult, HeadResponse]:
        """Metadata and outline of one paper: title, authors, categories, date, abstract and its
        sections with their token counts and a one-line summary (use the names with get_paper_section)."""
        return _read(library, "head", head_text, arxiv_id)

    @server.tool(annotations=READ_ONLY)
    def get_paper_section(
        arxiv_id: ArxivId,
        section_name: Annotated[
            str,
            Field(
                description="Section as the paper prints it: its number (3.2; 4 reads 4.1, 4.2, ... together) or its name as listed by get_paper_metadata (case-insensitive, numbering optional); idx:N for the 0-based position"
            ),
        ],
    ) -> Annotated[CallToolResult, SectionResponse]:
        """Full text of one section of a paper. An unknown name is an error that lists the sections."""
        if not section_name.strip():
            raise ToolError(
                "section_name: required (a printed number like 3.2, a name listed by get_paper_metadata, or idx:N)"
            )
        return _read(library, "section", section_text, arxiv_id, section=section_name)

    @server.tool(annotations=READ_ONLY)
    def get_full_paper(arxiv_id: ArxivId) -> Annotated[CallToolResult, RawResponse]:
        """The whole paper as markdown (title, abstract, every section). Can be 20k+ tokens: check
        get_paper_metadata first, or read single sections."""
        return _read(library, "raw", raw_text, arxiv_id)

    @server.tool(annotations=READ_ONLY)
    def get_paper_preview(
        arxiv_id: ArxivId,
        characters: Annotated[int, Field(description="How many characters, 1-1000000")] = PREVIEW_CHARS,
    ) -> Annotated[CallToolResult, PreviewResponse]:
        """The first characters of the paper as markdown (10,000 by default): a quick look at the
        abstract and introduction."""
        if not 1 <= characters <= 1_000_000:
            raise ToolError(f"characters: must be between 1 and 1000000, got {characters}")
        return _read(library, "preview", preview_text, arxiv_id, characters=characters)


def http_app(server: MCPServer, host: str, token: str | None, max_sessions: int | None = None) -> ASGIApp:
    """The streamable HTTP app at `MCP_PATH`, behind the HTTP API's bearer token when one is set
    (``Authorization: Bearer <token>`` or ``?token=``), with at most ``max_sessions`` open sessions
    (`openxiv.service.mcp.transport.SessionLimit`: a new one evicts the least recently used)."""
    app: ASGIApp = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    if max_sessions is not None:
        from openxiv.service.mcp.transport import SessionLimit

        app = SessionLimit(app, server, max_sessions)
    return AuthMiddleware(app, token=token) if token else app
