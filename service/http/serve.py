"""``openxiv serve``: run the search service with uvicorn."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, get_args

import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import (
    index_option,
    log_level_option,
    setting_option,
    settings_from_flags,
)
from openxiv.corpus.settings.sources import ENV_PREFIX
from openxiv.service.launch import (
    check_index,
    experiment_controls,
    limit_threads,
    log_config,
    warn_without_token,
)

__all__ = ["serve"]


@click.command("serve")
@settings_from_flags
@index_option(help="The index to serve.")
@setting_option("host")
@setting_option("port", type=click.IntRange(0, 65535))
@setting_option("workers", type=click.IntRange(1, 64))
@setting_option("api_token", "--token", "--api-token")
@setting_option("admin_token")
@log_level_option(help="Lowest level of the log lines written (uvicorn's and openxiv's).")
@click.option(
    "--access-log/--no-access-log", default=True, show_default=True, help="Log one line per request."
)
@setting_option("milvus_uri", help="For an index built with --backend milvus: the Milvus to query.")
@setting_option("http_parser", type=click.Choice(get_args(Settings.model_fields["http_parser"].annotation)))
@setting_option("ledger", help="Experiments (docs/ledger.md):")
@setting_option("replay", help="Experiments:")
@setting_option("cutoffs", help="Experiments:")
@setting_option("faults", help="Experiments:")
def serve(settings: Settings, log_level: str, access_log: bool) -> None:
    """Serve search and paper reading over HTTP (DeepXiv-compatible, plus /v1 and /docs).

    \b
    AutoResearchBench agent:  PAPER_SEARCH_API_URL=http://127.0.0.1:8000/search
    deepxiv-sdk:              Reader(base_url="http://127.0.0.1:8000", token="any")
    Reload a rebuilt index:   kill -HUP <pid>  (or, with --admin-token T:
                              curl -X POST -H "Authorization: Bearer T" http://127.0.0.1:8000/v1/admin/reload)
    Tag an agent's calls:     base URL http://127.0.0.1:8000/runs/<run>/q/<question>  (with --ledger DIR)
    """
    limit_threads(settings)
    import uvicorn

    from openxiv.service.guards.headers import protocol_class

    root = settings.index_root
    snapshot = check_index(root)
    warn_without_token(settings)
    controls = experiment_controls(settings)
    click.echo(
        f"openxiv: serving {snapshot.name} from {root} on http://{settings.host}:{settings.port}", err=True
    )
    if settings.watch_interval < 0:
        raise click.ClickException(
            f"{ENV_PREFIX}WATCH_INTERVAL={settings.watch_interval:g}: expected seconds >= 0 (0 = off)"
        )
    common: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": log_level,
        "access_log": access_log,
        "timeout_graceful_shutdown": 30,
        # either parser enforces the header read timeout (OPENXIV_HEADER_TIMEOUT); the event loop is
        # uvicorn's "auto": uvloop where it is installed (a dependency but on Windows), else asyncio
        "http": protocol_class(settings.http_parser),
        "log_config": log_config(log_level),  # tokens redacted; openxiv's own log lines shown
    }
    if settings.workers == 1:
        from openxiv.service.http.app import create_app

        uvicorn.run(create_app(settings, root, controls), **common)
        return
    # Worker processes build their app from the environment: pass the flags on through it.
    os.environ[ENV_PREFIX + "INDEX_DIR"] = str(root.resolve())
    if settings.api_token:
        os.environ[ENV_PREFIX + "API_TOKEN"] = settings.api_token
    if settings.admin_token:
        os.environ[ENV_PREFIX + "ADMIN_TOKEN"] = settings.admin_token
    if settings.milvus_uri:
        os.environ[ENV_PREFIX + "MILVUS_URI"] = settings.milvus_uri
    if controls is not None:
        controls.close()  # each worker opens its own (checked above)
    for name in ("ledger", "replay", "cutoffs", "faults"):
        value = getattr(settings, name)
        if value is not None:
            os.environ[ENV_PREFIX + name.upper()] = str(value.resolve() if isinstance(value, Path) else value)
    uvicorn.run("openxiv.service.http.app:app_from_env", factory=True, workers=settings.workers, **common)
