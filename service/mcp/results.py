"""What every openxiv MCP tool shares: the read-only annotation, `ApiError` -> tool error, and the
answer as readable text plus the HTTP API's JSON as structured content."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from openxiv.service.errors import ApiError

__all__ = ["READ_ONLY", "tool_errors", "tool_result"]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)


@contextmanager
def tool_errors() -> Iterator[None]:
    """An `ApiError` (bad argument, unknown paper or section, index not loaded, over budget) becomes
    a tool error with the same message the HTTP API would give."""
    try:
        yield
    except ApiError as exc:
        raise ToolError(exc.detail) from exc


def tool_result(text: str, model: BaseModel) -> CallToolResult:
    """Readable ``text`` for the model plus ``model`` as structured content, the JSON the HTTP API
    sends (optional top-level fields it leaves out when empty are left out here too)."""
    fields = type(model).model_fields
    unset: set[str] = {k for k in ("results", "warnings") if k in fields and getattr(model, k) is None}
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json", exclude=unset),
    )
