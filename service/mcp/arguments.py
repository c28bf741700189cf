"""Arguments a tool does not declare are refused, never dropped.

The SDK's argument models ignore unknown keys, so ``search_papers(query=..., orgs=[...])`` or a typo
(``catgories``) used to answer unfiltered results: a lie, where ``POST /search`` answers 400 for the
filters it cannot apply. `CheckedServer` checks every call's argument names against the tool's input
schema before the tool runs, for every tool (those added later too), and the published schemas say
``additionalProperties: false`` so a client can know before calling.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import Tool
from pydantic import Field

from openxiv.service.params import UNAPPLIABLE
from openxiv.service.search_params import (
    AUTHORS,
    CATEGORIES,
    DATE_FROM,
    DATE_TO,
    FINE_RERANK,
    MIN_CITATION,
    MODE,
    OFFSET,
    SORT,
    TOP_K,
    StrList,
)

__all__ = [
    "Authors",
    "Categories",
    "CheckedServer",
    "DateFrom",
    "DateTo",
    "FineRerank",
    "MinCitation",
    "Mode",
    "Offset",
    "Size",
    "Sort",
    "undeclared_arguments_error",
]

# The arguments several tools share, as tool arguments: types here, help from the one declaration of
# the search parameters (`openxiv.service.search_params`), which the HTTP front renders too.
Size = Annotated[int, Field(description=TOP_K.tool)]
Offset = Annotated[int, Field(description=OFFSET.tool)]
Categories = Annotated[StrList, Field(description=CATEGORIES.tool)]
Authors = Annotated[StrList, Field(description=AUTHORS.tool)]
DateFrom = Annotated[str | None, Field(description=DATE_FROM.tool)]
DateTo = Annotated[str | None, Field(description=DATE_TO.tool)]
MinCitation = Annotated[int | None, Field(description=MIN_CITATION.tool)]
Sort = Annotated[str | None, Field(description=SORT.tool)]
Mode = Annotated[str | None, Field(description=MODE.tool)]
FineRerank = Annotated[bool, Field(description=FINE_RERANK.tool)]


def undeclared_arguments_error(tool: str, given: Iterable[str], declared: Iterable[str]) -> str | None:
    """The tool error for argument names ``tool`` does not declare, or ``None`` when all are known."""
    known = list(declared)
    unknown = [name for name in given if name not in known]
    if not unknown:
        return None
    parts = []
    for name in unknown:
        if name in UNAPPLIABLE:
            parts.append(f"{name}: this corpus has no {UNAPPLIABLE[name]}, so {tool} cannot filter by them")
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        parts.append(f"{name}: not an argument of {tool}{hint}")
    return "; ".join(parts) + f". {tool} takes: {', '.join(known)}; leave the others out"


def _declared(schema: Mapping[str, Any] | None) -> list[str]:
    return list((schema or {}).get("properties", {}))


class CheckedServer(MCPServer):
    """`MCPServer` whose tools refuse arguments they do not declare, with a tool error naming them."""

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        return [
            t.model_copy(update={"input_schema": {**t.input_schema, "additionalProperties": False}})
            for t in tools
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        schema = next((t.input_schema for t in await super().list_tools() if t.name == name), None)
        if schema is not None:
            message = undeclared_arguments_error(name, arguments, _declared(schema))
            if message is not None:
                raise ToolError(message)
        return await super().call_tool(name, arguments, context)
