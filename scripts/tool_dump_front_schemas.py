"""The public surface of the network fronts as JSON: the HTTP app's OpenAPI schema and the MCP tools of
both profiles (name, description, input and output schema, annotations, as ``tools/list`` answers).

A refactor of how the fronts declare their parameters must leave this output byte-identical: dump it
before and after, then ``cmp`` (or ``diff``) the two files.

    python scripts/tool_dump_front_schemas.py > before.json
    ... change ...
    python scripts/tool_dump_front_schemas.py > after.json && cmp before.json after.json

No index is opened: the schemas come from the code alone (the apps are built, never started).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from openxiv.corpus.settings.model import Settings
from openxiv.service.browsecomp import BrowseCompTools
from openxiv.service.http.app import create_app
from openxiv.service.library import Library
from openxiv.service.mcp.browsecomp import build_browsecomp_server
from openxiv.service.mcp.server import build_server


async def _tools(server: Any) -> list[dict[str, Any]]:
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in await server.list_tools()]


def surface(root: Path) -> dict[str, Any]:
    """``{"openapi": ..., "mcp": {"deepxiv": [...], "browsecomp": [...]}}`` for an index root that
    need not exist (nothing is loaded)."""
    settings = Settings.from_env({})
    library = Library(root, settings)
    browsecomp = BrowseCompTools(library, k=5, snippet_max_tokens=512)
    return {
        "openapi": create_app(settings, root).openapi(),
        "mcp": {
            "deepxiv": asyncio.run(_tools(build_server(library, load=False))),
            "browsecomp": asyncio.run(_tools(build_browsecomp_server(browsecomp, load=False))),
        },
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = surface(Path(tmp) / "index")
    json.dump(out, sys.stdout, indent=1, sort_keys=False, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
