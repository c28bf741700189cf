"""``openxiv mcp``: the MCP server on stdio (desktop agents, IDEs), streamable HTTP or SSE (remote agents).

The ``mcp`` SDK is an optional dependency (``pip install 'openxiv[mcp]'``, included in ``dev``); it is
imported only when the command runs, so the rest of the CLI works without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import (
    index_option,
    log_level_option,
    setting_option,
    settings_from_flags,
)
from openxiv.service.launch import (
    check_index,
    experiment_controls,
    limit_threads,
    log_config,
    warn_without_token,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from openxiv.service.library import Library
    from openxiv.service.mcp.server import LogLevel

__all__ = ["mcp"]


@click.command("mcp")
@settings_from_flags
@index_option(help="The index to serve.")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http", "sse"]),
    default="stdio",
    show_default=True,
    help="stdio for a desktop agent or IDE that starts the server; http for streamable HTTP at /mcp; "
    "sse for the older SSE transport (event stream at /mcp, messages at /messages/).",
)
@click.option(
    "--profile",
    type=click.Choice(["deepxiv", "browsecomp"]),
    default="deepxiv",
    show_default=True,
    help="deepxiv: DeepXiv's six tools; browsecomp: BrowseComp-Plus' search(query) -> [{docid, score, "
    "snippet}] and get_document(docid).",
)
@click.option(
    "--k",
    "k",
    type=click.IntRange(1, 100),
    default=5,
    show_default=True,
    help="browsecomp: papers every search returns.",
)
@click.option(
    "--snippet-max-tokens",
    type=int,
    default=512,
    show_default=True,
    help="browsecomp: snippet budget in tokens (estimated as words x 1.3); -1 = the whole text.",
)
@click.option(
    "--get-document/--no-get-document",
    default=True,
    show_default=True,
    help="browsecomp: also offer get_document.",
)
@setting_option("host", help="http:")
@setting_option("mcp_port", "--port", help="http:", type=click.IntRange(0, 65535))
@setting_option(
    "api_token",
    "--token",
    "--api-token",
    help="http: require this bearer token (header 'Authorization: Bearer ...' or ?token=).",
)
@setting_option(
    "ledger", help="http: record every call, tagged by /runs/<run>/q/<question>/mcp (docs/ledger.md)."
)
@setting_option("cutoffs", help="http:")
@setting_option("faults", help="http:")
@log_level_option("warning", help="Log level (logs go to stderr; stdout carries the protocol on stdio).")
def mcp(
    settings: Settings,
    transport: str,
    profile: str,
    k: int,
    snippet_max_tokens: int,
    get_document: bool,
    log_level: str,
) -> None:
    """Serve the index to agents over the Model Context Protocol (MCP).

    Tools: search_papers, get_paper_brief, get_paper_metadata, get_paper_section, get_full_paper,
    get_paper_preview (DeepXiv's MCP tool names); with --profile browsecomp, BrowseComp-Plus' search
    and get_document, k and the snippet budget fixed at start. The snapshot is read in-process;
    SIGHUP (and OPENXIV_WATCH_INTERVAL) reload it as for `openxiv serve`.

    \b
    Desktop agent:  {"command": "openxiv", "args": ["mcp", "--index", "/path/to/index"]}
    Remote agents:  openxiv mcp --transport http --port 8001 --token T   (URL http://HOST:8001/mcp)
    BrowseComp-Plus: openxiv mcp --profile browsecomp --k 5 --snippet-max-tokens 512 --transport sse
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
    controls = experiment_controls(settings, replay=False)
    if controls is not None and transport != "http":
        controls.close()
        raise click.BadParameter(
            "experiments (ledger, cutoffs, faults) need --transport http", param_hint="--transport"
        )
    library = Library(root, settings)
    level = cast(LogLevel, log_level.upper())
    load = transport != "sse"  # the SSE app keeps the snapshot open itself (service/mcp/sse.py)
    if profile == "browsecomp":
        server = _browsecomp(library, level, k, snippet_max_tokens, get_document, load)
    else:
        server = build_server(library, level, load=load)
    if transport == "stdio":
        click.echo(f"openxiv mcp: serving {snapshot.name} from {root} on stdio", err=True)
        from openxiv.service.mcp.stdio import run_stdio

        run_stdio(server)  # every line answered: -32700 for an unparsable one
        return

    import uvicorn

    warn_without_token(settings, "MCP ")
    click.echo(
        f"openxiv mcp: serving {snapshot.name} from {root} ({profile} tools) on {transport} "
        f"http://{settings.host}:{settings.mcp_port}{MCP_PATH}",
        err=True,
    )
    from openxiv.service.mcp.transport import guarded, uvicorn_options

    # read deadlines and body guard as for `openxiv serve`, and on streamable HTTP the session cap
    # (see service/mcp/transport.py)
    if transport == "sse":
        from openxiv.service.mcp.sse import sse_app

        app = guarded(sse_app(server, library, settings.host, settings.api_token), settings)
    else:
        app = guarded(
            http_app(server, settings.host, settings.api_token, settings.mcp_max_sessions), settings
        )
        if controls is not None:  # tags read first, so the path the SDK's app sees is /mcp
            from openxiv.service.experiments.asgi import ExperimentsMiddleware

            app = ExperimentsMiddleware(
                app, controls=controls, snapshot=lambda: library.snapshot, front="mcp"
            )
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.mcp_port,
        log_level=log_level,
        log_config=log_config(log_level),
        **uvicorn_options(settings),
    )


def _browsecomp(
    library: Library, level: LogLevel, k: int, snippet_max_tokens: int, get_document: bool, load: bool
) -> MCPServer:
    from openxiv.service.browsecomp import BrowseCompTools
    from openxiv.service.mcp.browsecomp import build_browsecomp_server

    if snippet_max_tokens == 0 or snippet_max_tokens < -1:
        raise click.BadParameter(
            "a positive number, or -1 for the whole text", param_hint="--snippet-max-tokens"
        )
    tools = BrowseCompTools(library, k=k, snippet_max_tokens=snippet_max_tokens)
    return build_browsecomp_server(tools, level, get_document=get_document, load=load)
