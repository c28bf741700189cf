"""What every command that opens a snapshot does before it starts: ``openxiv serve``, ``openxiv mcp``,
``openxiv search`` and ``openxiv paper``.

`check_index` turns a missing or broken index into a message that says how to build one;
`limit_threads` fixes the OpenMP/torch threads of query encoding before FAISS or torch start their
pools; `warn_without_token` and `log_config` are the servers' (HTTP and MCP) safety and logging.
"""

from __future__ import annotations

import copy
import logging
import os
from pathlib import Path
from typing import Any

import click

from openxiv.corpus.settings.model import Settings
from openxiv.indexer import layout
from openxiv.indexer.snapshot import current_snapshot
from openxiv.service.experiments.controls import BadControls, Controls
from openxiv.service.holder import serve_threads

__all__ = [
    "LOOPBACK_NAMES",
    "QuietProbes",
    "check_index",
    "experiment_controls",
    "limit_threads",
    "log_config",
    "warn_without_token",
]

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
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
        return not (path in PROBES and status == 200 and host in LOOPBACK_NAMES)


"""Host names of this machine only: a server bound to one needs no token to be private."""


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
    if settings.host not in LOOPBACK_NAMES and not settings.api_token:
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
        "redact": {"()": "openxiv.service.guards.access.RedactingFilter"},
        "quiet_probes": {"()": "openxiv.service.launch.QuietProbes"},
    }
    for handler in config["handlers"].values():
        handler["filters"] = ["redact"]
    config["handlers"]["access"]["filters"].append("quiet_probes")
    config["loggers"]["openxiv"] = {"handlers": ["default"], "level": log_level.upper(), "propagate": False}
    return config


def limit_threads(settings: Settings) -> None:
    """One OpenMP/torch thread per search unless ``OMP_NUM_THREADS`` says otherwise (docs/service.md,
    ``OPENXIV_SERVE_THREADS``): set before FAISS or torch start their thread pools, and inherited by
    worker processes."""
    os.environ.setdefault("OMP_NUM_THREADS", str(serve_threads(settings)))


def experiment_controls(settings: Settings, *, replay: bool = True) -> Controls | None:
    """The experiment controls the settings turn on (docs/ledger.md); a bad one is a usage error naming
    its flag (exit 2). ``replay=False``: a front that cannot replay (MCP) refuses ``--replay``."""
    if not replay and settings.replay is not None:
        raise click.BadParameter(
            "replay: MCP answers carry session headers a ledger does not keep; replay through the HTTP API",
            param_hint="--replay",
        )
    try:
        return Controls.of(settings)
    except BadControls as exc:
        name = str(exc).split(":", 1)[0].strip()
        hint = f"--{name}" if name in ("ledger", "replay", "cutoffs", "faults") else None
        raise click.BadParameter(str(exc), param_hint=hint) from exc
