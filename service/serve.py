"""``openxiv serve``: run the search service with uvicorn."""

from __future__ import annotations

import copy
import logging
import os
from pathlib import Path
from typing import Any, get_args

import click

from openxiv.corpus.config import ENV_PREFIX, Settings
from openxiv.corpus.options import index_option, log_level_option, setting_option
from openxiv.indexer import layout
from openxiv.indexer.snapshot import current_snapshot
from openxiv.service.holder import serve_threads

__all__ = ["QuietProbes", "check_index", "log_config", "serve", "warn_without_token"]

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
PROBES = frozenset({"/healthz", "/readyz"})


class QuietProbes(logging.Filter):
    """Drop the access-log line of a successful ``/healthz`` or ``/readyz`` from loopback: a
    container's healthcheck asks every few seconds and would bury the real requests. Probes from
    elsewhere, and failing ones, stay. uvicorn's access record args: client, method, path, version,
    status."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not isinstance(args, tuple) or len(args) != 5:
            return True
        client, _, path, _, status = args
        host = str(client).rsplit(":", 1)[0].strip("[]")
        return not (path in PROBES and status == 200 and host in LOOPBACK)


def check_index(index_root: Path) -> Path:
    """The live snapshot directory, or a `click.ClickException` telling the user how to build one."""
    build = f"build one with:  openxiv index build --db data/corpus.sqlite --index {index_root}"
    if not index_root.exists():
        raise click.ClickException(f"no index at {index_root}; {build}")
    if not index_root.is_dir():
        raise click.ClickException(f"{index_root} is a file, not an index directory; {build}")
    snapshot = current_snapshot(index_root)
    if snapshot is None or not snapshot.is_dir():
        if not (index_root / layout.CURRENT).exists():
            raise click.ClickException(
                f"{index_root} holds no index snapshot (no {layout.CURRENT} file); {build}"
            )
        raise click.ClickException(
            f"{index_root}/{layout.CURRENT} names a snapshot that does not exist; {build}"
        )
    return snapshot


def warn_without_token(settings: Settings, what: str = "") -> None:
    """Say on stderr that a server bound to an address other than loopback has no token."""
    if settings.host not in LOOPBACK and not settings.api_token:
        click.echo(
            f"Warning: serving {what}on {settings.host} without a token: anyone who can reach this port "
            "can use it (set --token or OPENXIV_API_TOKEN).",
            err=True,
        )


def log_config(log_level: str = "info") -> dict[str, Any]:
    """uvicorn's logging setup plus a token-redacting filter on every handler, `QuietProbes` on the
    access log, and openxiv's own logger (reloads, the served snapshot, watch errors, unexpected
    errors) at ``log_level``."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {
        "redact": {"()": "openxiv.service.security.RedactingFilter"},
        "quiet_probes": {"()": "openxiv.service.serve.QuietProbes"},
    }
    for handler in config["handlers"].values():
        handler["filters"] = ["redact"]
    config["handlers"]["access"]["filters"].append("quiet_probes")
    config["loggers"]["openxiv"] = {"handlers": ["default"], "level": log_level.upper(), "propagate": False}
    return config


@click.command("serve")
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
def serve(
    index_dir: Path | None,
    host: str | None,
    port: int | None,
    workers: int | None,
    api_token: str | None,
    admin_token: str | None,
    log_level: str,
    access_log: bool,
    milvus_uri: str | None,
    http_parser: str | None,
) -> None:
    """Serve search and paper reading over HTTP (DeepXiv-compatible, plus /v1 and /docs).

    \b
    AutoResearchBench agent:  PAPER_SEARCH_API_URL=http://127.0.0.1:8000/search
    deepxiv-sdk:              Reader(base_url="http://127.0.0.1:8000", token="any")
    Reload a rebuilt index:   kill -HUP <pid>  (or, with --admin-token T:
                              curl -X POST -H "Authorization: Bearer T" http://127.0.0.1:8000/v1/admin/reload)
    """
    # One OpenMP/torch thread per search (see docs/service.md, OPENXIV_SERVE_THREADS): must be set
    # before FAISS or torch start their thread pools, and is inherited by worker processes.
    os.environ.setdefault("OMP_NUM_THREADS", str(serve_threads()))
    import uvicorn

    from openxiv.service.protocol import protocol_class

    settings = Settings.from_env().replace(
        index_dir=index_dir,
        host=host,
        port=port,
        workers=workers,
        api_token=api_token,
        admin_token=admin_token,
        milvus_uri=milvus_uri,
        http_parser=http_parser,
    )
    root = settings.index_root
    snapshot = check_index(root)
    warn_without_token(settings)
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
        from openxiv.service.app import create_app

        uvicorn.run(create_app(settings, root), **common)
        return
    # Worker processes build their app from the environment: pass the flags on through it.
    os.environ[ENV_PREFIX + "INDEX_DIR"] = str(root.resolve())
    if settings.api_token:
        os.environ[ENV_PREFIX + "API_TOKEN"] = settings.api_token
    if settings.admin_token:
        os.environ[ENV_PREFIX + "ADMIN_TOKEN"] = settings.admin_token
    if settings.milvus_uri:
        os.environ[ENV_PREFIX + "MILVUS_URI"] = settings.milvus_uri
    uvicorn.run("openxiv.service.app:app_from_env", factory=True, workers=settings.workers, **common)
