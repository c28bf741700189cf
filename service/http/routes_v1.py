"""openxiv's own reading API (``/v1/papers``, ``/v1/index``), probes and the reload endpoint."""

from __future__ import annotations

import logging
import re
from pathlib import Path, PurePosixPath
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool

from openxiv.service import reading
from openxiv.service.errors import NotReady
from openxiv.service.http.helpers import ERRORS, experiments_of, holder_of, json_response
from openxiv.service.models import (
    ErrorResponse,
    Health,
    IndexInfo,
    ReloadResponse,
    V1Paper,
    V1Section,
)

__all__ = ["relative_paths", "router", "without_paths"]

router = APIRouter()
log = logging.getLogger("openxiv.service")

_ABSOLUTE = re.compile(r"(?<![\w.:/~])/[^\s'\"(),;]+")


def relative_paths(text: str, root: Path) -> str:
    """Absolute paths in ``text`` as paths relative to the index root (``snapshots/<name>``), or as
    their last component when outside it: responses never reveal where files live on the server."""
    roots = sorted({str(root.absolute()), str(root.resolve())}, key=len, reverse=True)

    def relative(match: re.Match[str]) -> str:
        path = match.group(0)
        for base in roots:
            if path == base:
                return "."
            if path.startswith(base + "/"):
                return path[len(base) + 1 :]
        return PurePosixPath(path).name or path

    return _ABSOLUTE.sub(relative, text)


def without_paths(value: Any, root: Path) -> Any:
    """`relative_paths` over every string of a JSON-like value."""
    if isinstance(value, str):
        return relative_paths(value, root)
    if isinstance(value, dict):
        return {k: without_paths(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [without_paths(v, root) for v in value]
    return value


@router.get(
    "/v1/papers/{arxiv_id:path}/sections/{name}",
    response_model=V1Section,
    responses=ERRORS,
    tags=["v1"],
    summary="One section of a paper's full text",
)
def v1_section(arxiv_id: str, name: str, request: Request) -> Response:
    """`name`: exact (case-insensitive), the printed number (`3.2`), without its numbering, a part of
    a name, `Abstract`, or `idx:N` (the 0-based position). A 404 lists the sections the paper has."""
    return json_response(reading.v1_section(holder_of(request), arxiv_id, name).model_dump_json())


@router.get(
    "/v1/papers/{arxiv_id:path}",
    response_model=V1Paper,
    responses=ERRORS,
    tags=["v1"],
    summary="A paper's metadata and section list",
)
def v1_paper(arxiv_id: str, request: Request) -> Response:
    """Any id spelling (`2501.00001v2`, `arXiv:...`, `hep-th/9901001`); the answer uses the canonical id."""
    return json_response(reading.v1_paper(holder_of(request), arxiv_id).model_dump_json())


@router.get(
    "/v1/index", response_model=IndexInfo, responses=ERRORS, tags=["v1"], summary="The loaded snapshot"
)
def v1_index(request: Request) -> Response:
    """Snapshot manifest, corpus counts and backend facts. Paths are relative to the index root
    (`snapshots/<name>`) or bare file names: a response never says where files live."""
    holder = holder_of(request)
    with holder.acquire() as index:
        stats: dict[str, Any] = index.store.stats()
        root = holder.index_root
        info = IndexInfo(
            snapshot=Path(index.path).name,
            path=relative_paths(str(Path(index.path).absolute()), root),
            loaded_at=holder.loaded_at.isoformat() if holder.loaded_at else "",
            reloads=holder.reloads,
            manifest=without_paths(index.manifest.as_json(), root),
            stats=without_paths(stats, root),
            backend=without_paths(dict(index.backend.info()), root),
            **experiments_of(request),
        )
    return json_response(info.model_dump_json(exclude_unset=True))


@router.post(
    "/v1/admin/reload",
    response_model=ReloadResponse,
    responses={
        **ERRORS,
        403: {"model": ErrorResponse, "description": "Admin routes off, or a cross-site/rebinding request"},
        503: {"model": ErrorResponse, "description": "The new snapshot failed to open"},
    },
    tags=["admin"],
    summary="Swap in the snapshot INDEX_DIR/CURRENT points to",
)
async def v1_reload(request: Request, force: bool = False) -> Response:
    """Opens the current snapshot and swaps it in; requests in flight finish on the old one, which is
    then closed. `unchanged` when it is already loaded (unless `force`). Same as `kill -HUP <pid>`.
    Off (403) unless the server has an admin token (`OPENXIV_ADMIN_TOKEN`); then it needs
    `Authorization: Bearer <admin token>`.
    With `--workers N` > 1 this reloads one worker only: send SIGHUP to the main process instead."""
    holder = holder_of(request)
    try:
        result = await run_in_threadpool(holder.reload, force)
    except Exception as exc:
        log.warning(
            "reload failed (%s: %s); still serving snapshot %s", type(exc).__name__, exc, holder.snapshot
        )
        reason = relative_paths(str(exc), holder.index_root)
        raise NotReady(
            f"reload failed ({type(exc).__name__}: {reason}); still serving snapshot {holder.snapshot}"
        ) from exc
    log.info("reload by HTTP: %s (snapshot %s)", result["status"], result["snapshot"])
    return json_response(ReloadResponse.model_validate(result).model_dump_json())


@router.get("/healthz", response_model=Health, tags=["probes"], summary="Liveness (no token needed)")
async def healthz(request: Request) -> Response:
    """``experiments`` says which experiment controls are on (absent when none is)."""
    health = Health(status="ok", snapshot=holder_of(request).snapshot, **experiments_of(request))
    return json_response(health.model_dump_json(exclude_unset=True))


@router.get(
    "/readyz",
    response_model=Health,
    responses={503: {"model": ErrorResponse}},
    tags=["probes"],
    summary="Readiness: 200 once the index is loaded (and warm, with OPENXIV_SERVE_WARM=before-ready), 503 if its files are gone",
)
async def readyz(request: Request) -> Health:
    holder = holder_of(request)
    if not holder.ready:
        raise NotReady("the index is not loaded yet")
    warm = holder.warm_state
    if holder.warming_blocks_ready and warm is not None:
        raise NotReady(
            f"snapshot {holder.snapshot} is loaded and {warm.describe()} (OPENXIV_SERVE_WARM=before-ready)"
        )
    missing = holder.missing_files()
    if missing:
        raise NotReady(
            f"the files of snapshot {holder.snapshot} are gone ({', '.join(missing)}): "
            "reload if CURRENT names another snapshot, else rebuild the index"
        )
    return Health(status="ready", snapshot=holder.snapshot, warm=warm.describe() if warm else "off")
