"""The MCP tools of issue 41 beside the search: ``search_passages`` (passages as results,
`openxiv.service.passages`), ``facets``, ``match_title`` and ``author_papers``
(`openxiv.service.navigation`) and ``bibtex`` (`openxiv.service.bibtex`), each through the server's
`Library`; added to the server by `add_nav_tools`."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from openxiv.service.bibtex import MAX_BIBTEX_IDS, BibtexResponse
from openxiv.service.library import Library
from openxiv.service.mcp.arguments import Authors, Categories, DateFrom, DateTo, Offset, Size
from openxiv.service.mcp.results import READ_ONLY, tool_errors, tool_result
from openxiv.service.nav_text import author_text, facets_text, match_text
from openxiv.service.navigation import (
    TOP_AUTHORS_MAX,
    AuthorPapersResponse,
    FacetsResponse,
    TitleMatchResponse,
)
from openxiv.service.params import FilterParams
from openxiv.service.passages import PassagesResponse, passages_text
from openxiv.service.search_params import DEFAULT_TOP_K, MAX_FILTER_VALUES, StrList

__all__ = ["NAV_TOOLS", "add_nav_tools"]

NAV_TOOLS = ("search_passages", "facets", "match_title", "author_papers", "bibtex")


def add_nav_tools(server: MCPServer, library: Library) -> None:
    @server.tool(annotations=READ_ONLY)
    def search_passages(
        query: Annotated[str, Field(description="What the passages should say, in words")],
        size: Size = DEFAULT_TOP_K,
        offset: Offset = 0,
        categories: Categories = None,
        authors: Authors = None,
        date_from: DateFrom = None,
        date_to: DateTo = None,
        paper_ids: Annotated[
            StrList,
            Field(
                description=f"Only passages of these papers (a list or comma-separated, at most {MAX_FILTER_VALUES})"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, PassagesResponse]:
        """The best passages across papers for a query, several per paper when they are the best
        (for retrieval-augmented answers): each with its paper, section, offsets and the query's
        words marked **like this**. `paper_ids` searches only inside given papers."""
        with tool_errors():
            found = library.passages(
                query,
                top_k=size,
                offset=offset,
                filters=FilterParams(
                    categories=categories, authors=authors, date_from=date_from, date_to=date_to
                ),
                paper_ids=paper_ids,
                top_k_name="size",
            )
        return tool_result(passages_text(found), found)

    @server.tool(annotations=READ_ONLY)
    def facets(
        query: Annotated[
            str | None, Field(description="The query; leave out to count every paper the filters keep")
        ] = None,
        categories: Categories = None,
        authors: Authors = None,
        date_from: DateFrom = None,
        date_to: DateTo = None,
        top_authors: Annotated[int, Field(description=f"Authors to list, 0-{TOP_AUTHORS_MAX}")] = 10,
    ) -> Annotated[CallToolResult, FacetsResponse]:
        """How many papers of this corpus match a query, by year, month, category and top authors:
        size a set before paging through it, or pick the filters that narrow it."""
        with tool_errors():
            found = library.facets(
                query,
                filters=FilterParams(
                    categories=categories, authors=authors, date_from=date_from, date_to=date_to
                ),
                top_authors=top_authors,
            )
        return tool_result(facets_text(found), found)

    @server.tool(annotations=READ_ONLY)
    def match_title(
        title: Annotated[str, Field(description="A paper title as pasted from a reference list")],
    ) -> Annotated[CallToolResult, TitleMatchResponse]:
        """The corpus paper with this title and a confidence (1: the same title); `match` is null
        when no candidate is close enough, and the candidates compared are listed."""
        with tool_errors():
            found = library.match_title(title)
        return tool_result(match_text(found), found)

    @server.tool(annotations=READ_ONLY)
    def author_papers(
        name: Annotated[str, Field(description="An author name; accents and case do not matter")],
        size: Size = 20,
        offset: Offset = 0,
    ) -> Annotated[CallToolResult, AuthorPapersResponse]:
        """The papers of an author, newest first, under every spelling of the name (accents,
        initials, hyphens), with the spellings found."""
        with tool_errors():
            found = library.author(name, top_k=size, offset=offset)
        return tool_result(author_text(found), found)

    @server.tool(annotations=READ_ONLY)
    def bibtex(
        arxiv_id: Annotated[
            StrList, Field(description=f"Paper id(s): a list or comma-separated, at most {MAX_BIBTEX_IDS}")
        ],
    ) -> Annotated[CallToolResult, BibtexResponse]:
        """BibTeX entries of papers, ready to paste into a .bib file."""
        with tool_errors():
            found = library.bibtex(arxiv_id or [])
        return tool_result(found.text(), found)
