"""The MCP tools ``references`` and ``cited_by`` (`openxiv.service.references`), added to the server
by `openxiv.service.mcp.server.build_server`: readable text plus the HTTP API's JSON."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from openxiv.service.library import Library
from openxiv.service.mcp.results import READ_ONLY, tool_errors, tool_result
from openxiv.service.references import (
    CitedByResponse,
    ReferencesResponse,
    cited_by_text,
    references_text,
)

__all__ = ["REFERENCE_TOOLS", "add_reference_tools"]

REFERENCE_TOOLS = ("references", "cited_by")

_ArxivId = Annotated[str, Field(description="arXiv id, any spelling: 2212.11790, arXiv:2212.11790v1")]


def add_reference_tools(server: MCPServer, library: Library) -> None:
    def answer(kind: str, arxiv_id: str) -> CallToolResult:
        with tool_errors():
            model = library.references(kind, arxiv_id)
        text = references_text(model) if isinstance(model, ReferencesResponse) else cited_by_text(model)
        return tool_result(text, model)

    @server.tool(annotations=READ_ONLY)
    def references(arxiv_id: _ArxivId) -> Annotated[CallToolResult, ReferencesResponse]:
        """The paper's bibliography (one hop of snowballing): each entry's arXiv id, whether that
        paper is in this corpus (then its title, readable with the other tools) and the printed text.
        Only unArXive inputs carry bibliographies; other papers have none."""
        return answer("references", arxiv_id)

    @server.tool(annotations=READ_ONLY)
    def cited_by(arxiv_id: _ArxivId) -> Annotated[CallToolResult, CitedByResponse]:
        """The papers of this corpus whose bibliography cites the given paper (which need not be in
        the corpus), with their titles."""
        return answer("cited_by", arxiv_id)
