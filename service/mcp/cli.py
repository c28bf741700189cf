"""``openxiv mcp``: the MCP server on stdio (desktop agents, IDEs) or streamable HTTP (remote agents).

The ``mcp`` SDK is an optional dependency (``pip install 'openxiv[mcp]'``, included in ``dev``); it is
imported only when the command runs, so the rest of the CLI works without it.
"""

from __future__ import annotations

from typing import cast

import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import (
    index_option,
    log_level_option,
    setting_option,
    settings_from_flags,
)
from openxiv.service.launch import check_index, limit_threads, log_config, warn_without_token

__all__ = ["mcp"]


@click.command("mcp")
@settings_from_flags
@index_option(help="The index to serve.")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a desktop agent or IDE that starts the server; http for streamable HTTP at /mcp.",
)
@setting_option("host", help="http:")
@setting_option("mcp_port", "--port", help="http:", type=click.IntRange(0, 65535))
@setting_option(
    "api_token",
    "--token",
    "--api-token",
    help="http: require this bearer token (header 'Authorization: Bearer ...' or ?token=).",
)
@log_level_option("warning", help="Log level (logs go to stderr; stdout carries the protocol on stdio).")
def mcp(settings: Settings, transport: str, log_level: str) -> None:
    """Serve the index to agents over the Model Context Protocol (MCP).

    Tools: search_papers, get_paper_brief, get_paper_metadata, get_paper_section, get_full_paper,
    get_paper_preview (DeepXiv's MCP tool names). The snapshot is read in-process; SIGHUP (and
    OPENXIV_WATCH_INTERVAL) reload it as for `openxiv serve`.

    \b
    Desktop agent:  {"command": "openxiv", "args": ["mcp", "--index", "/path/to/index"]}
    Remote agents:  openxiv mcp --transport http --port 8001 --token T   (URL http://HOST:8001/mcp)
    """
    limit_threads(settings)
    try:
        from openxiv.service.mcp.server import MCP_PATH, LogLevel, build_server, http_app
    except ImportError as exc:
        raise click.ClickException(
            f"the MCP SDK is not installed ({exc}); install it with: pip install 'openxiv[mcp]'"
        ) from exc
    from openxiv.service.library import Library

    root = settings.index_root
    snapshot = check_index(root)
    server = build_server(Library(root, settings), cast(LogLevel, log_level.upper()))
    if transport == "stdio":
        click.echo(f"openxiv mcp: serving {snapshot.name} from {root} on stdio", err=True)
        from openxiv.service.mcp.stdio import run_stdio

        run_stdio(server)  # every line answered: -32700 for an unparsable one
        return

    import uvicorn

    warn_without_token(settings, "MCP ")
    click.echo(
        f"openxiv mcp: serving {snapshot.name} from {root} on http://{settings.host}:{settings.mcp_port}{MCP_PATH}",
        err=True,
    )
    from openxiv.service.mcp.transport import guarded, uvicorn_options

    # read deadlines, body guard and session cap as for `openxiv serve` (see service/mcp/transport.py)
    app = guarded(http_app(server, settings.host, settings.api_token, settings.mcp_max_sessions), settings)
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.mcp_port,
        log_level=log_level,
        log_config=log_config(log_level),
        **uvicorn_options(settings),
    )
